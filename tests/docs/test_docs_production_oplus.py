"""docs/production/oplus.md's recipe, as a user runs it.

The files are the page's code blocks whose first line is ``# <name>.py: ...``. Default run (no
Spark): both are there and compile, the driver imports only names that exist, and the
operator file loads as ``file.py:NAME`` and computes a per-key maximum over tumbling windows
(checked against ``spec.oplus.semantics``). Slow: the driver in its own process (its own
SparkSession) with ``BASE/my_operators.py``; two files whose tuples interleave in event time
landed in the same millisecond, then a file with a tuple further behind than
``allowed_lateness``, then the end; the results (read with pyarrow) equal the reference on the
sorted input of the tuples on time, the late tuple is in ``BASE/late``, and a SIGTERM stops
the driver (it ends in ``supervised(run)``) at a batch boundary with exit 143 and the
documented line.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import pytest
from support.paths import ROOT
import pyarrow.dataset as ds
from reference.oplus.executors import run_sequential
from reference.oplus.run import run_scenario
from spark_impl.oplus.user_operator import load_operator
from spec.oplus.model import OutputTuple, StreamTuple
from spec.oplus.scenario import parse_scenario
from spec.oplus.semantics import expected_outputs

DOC = os.path.join(str(ROOT), "docs", "production", "oplus.md")
BLOCK = re.compile(r"^```python\n(# ([\w.]+\.py): [^\n]*\n.*?)^```", re.S | re.M)


def blocks() -> dict[str, str]:
    with open(DOC, encoding="utf-8") as handle:
        return {name: code for code, name in BLOCK.findall(handle.read())}


def test_the_recipe_files_are_in_the_page_and_compile_and_import_what_exists() -> None:
    files = blocks()
    assert set(files) == {"oplus_late_driver.py", "my_operators.py"}
    trees = {name: ast.parse(code, name) for name, code in files.items()}
    imported = [(name, node.module, alias.name) for name, tree in trees.items() for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module for alias in node.names]
    missing = [item for item in imported if not hasattr(importlib.import_module(item[1]), item[2])]
    assert imported and not missing, missing
    for name, tree in trees.items():
        compile(tree, name, "exec")


def test_the_pages_operator_loads_and_is_a_per_key_max_over_tumbling_windows(tmp_path: Any) -> None:
    path = tmp_path / "my_operators.py"
    path.write_text(blocks()["my_operators.py"], encoding="utf-8")
    op = load_operator(f"{path}:KEY_MAX")
    tuples = [StreamTuple(ts, 0, i, (key, v)) for i, (ts, key, v) in
              enumerate([(1, "ann", 3), (4, "ann", 9), (12, "ann", 2), (5, "bob", -1)])]
    assert expected_outputs(op, tuples) == Counter([OutputTuple(10, ("ann", 9)), OutputTuple(20, ("ann", 2)),
                                                    OutputTuple(10, ("bob", -1))])


def _land(base: str, name: str, rows: list[dict[str, Any]], mtime_ns: int) -> None:
    staging = os.path.join(base, "staging")
    os.makedirs(staging, exist_ok=True)
    path = os.path.join(staging, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    os.utime(path, ns=(mtime_ns, mtime_ns))
    os.replace(path, os.path.join(base, "in", name))


def _committed(base: str, batches: int) -> bool:
    return os.path.exists(os.path.join(base, "ckpt", "query", "commits", str(batches - 1)))


def _plain(value: Any) -> Any:
    return tuple(_plain(v) for v in value) if isinstance(value, list) else value


@pytest.mark.slow
def test_the_recipe_gives_the_sorted_inputs_results_and_keeps_the_late_tuple(tmp_path: Any) -> None:
    files = blocks()
    base = str(tmp_path / "base")
    os.makedirs(os.path.join(base, "in"))
    driver = tmp_path / "oplus_late_driver.py"
    driver.write_text(files["oplus_late_driver.py"], encoding="utf-8")
    (tmp_path / "base" / "my_operators.py").write_text(files["my_operators.py"], encoding="utf-8")
    keys = ("ann", "bob", "dé")
    tuples = [{"ts": 100 + i, "key": keys[i % 3], "value": (i * 7) % 13} for i in range(24)]
    late = {"ts": 40, "key": "ann", "value": 99}  # 83 behind the newest (ts 123): beyond allowed_lateness 30
    same = (time.time_ns() // 1_000_000 - 5_000) * 1_000_000
    # tuples interleave in event time (disorder 21 or 23, whichever runs first), landed in the same ms
    _land(base, "a.json", [{"job": j, **t} for t in tuples[0::2] for j in (0, 1)], same)
    _land(base, "b.json", [{"job": j, **t} for t in tuples[1::2] for j in (0, 1)], same)
    err = open(tmp_path / "driver.err", "wb")
    proc = subprocess.Popen([sys.executable, str(driver), base], stdout=subprocess.DEVNULL, stderr=err,
                            start_new_session=True, cwd=str(tmp_path))
    err.close()
    try:
        deadline = time.monotonic() + 600
        landed = 2
        for name, extra in (("c.json", [{"job": j, **late} for j in (0, 1)]),
                            ("d.json", [{"job": j, "end": True} for j in (0, 1)])):
            while not _committed(base, landed):
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "driver.err").read_text()
                time.sleep(0.2)
            _land(base, name, extra, time.time_ns())
            landed += 1
        while not _committed(base, landed):
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "driver.err").read_text()
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)  # the recipe ends in supervised(run): a batch-boundary stop, exit 143
        assert proc.wait(120) == 143, (tmp_path / "driver.err").read_text()[-3000:]
        assert (tmp_path / "driver.err").read_text().splitlines()[-1].startswith(
            "streamproof: stopped by SIGTERM at a batch boundary")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
    table = ds.dataset(os.path.join(base, "results"), format="parquet", partitioning="hive").to_table().to_pylist()
    got = {j: Counter((r["ts"], r["key"], _plain(json.loads(r["value"]))) for r in table if r["job"] == j)
           for j in (0, 1)}
    case = {"operator": "sliding-sum", "WA": 5, "WS": 10, "WT": "multi", "parallelism": 1,
            "inputs": [[dict(t) for t in tuples]]}
    assert got[0] == Counter((r["ts"], r["key"], r["value"]) for r in run_scenario(parse_scenario(case)))
    op = load_operator(os.path.join(base, "my_operators.py:KEY_MAX"))
    outputs = run_sequential(op, [[StreamTuple(t["ts"], 0, i, (t["key"], t["value"])) for i, t in enumerate(tuples)]])
    assert got[1] == Counter((o.ts, o.payload[0], tuple(o.payload)) for o in outputs.outputs)
    late_rows = ds.dataset(os.path.join(base, "late"), format="parquet", partitioning="hive").to_table().to_pylist()
    assert sorted((r["job"], r["ts"], r["key"], r["value"]) for r in late_rows) == [(0, 40, "ann", 99),
                                                                                  (1, 40, "ann", 99)]
