"""docs/production/fries.md, as a user runs it.

The files are the page's code blocks whose first line is ``# <name>.py: ...`` and its one ``json``
block whose first key is ``"version"`` (the new model). Default run: the files are there, compile
and import only names that exist; the job's functions, taken out of the driver without running it,
give the points the page shows for its example order under both models; orders_check.py defines the
same functions and the page's new model; and (Spark) a Fries job fed a Kafka-shaped stream with raw
binary ``key``/``value`` columns receives ``bytes``, as docs/production/types.md says; the page's
stream stops at a bad line (FAILFAST) and a file corrected in place continues exactly once. Slow:
the driver in its own process on a ``BASE``, files landing while it runs, ``kill -9`` of its
process group (JVM included) in the middle, a restart with the new model (the swap made while it
runs), another ``kill -9`` and a plain restart, then the reader script: every order's output
exactly once, each customer's running totals equal the sequential sums of its orders' points, and
each customer's model version goes from 1 to 2 once, with the first two files under model 1 and the
last two under model 2. Slow too: ``streamproof conformance --job orders_check.py:job`` exits 0.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any, Callable

import pytest
from support.paths import ROOT
from pyspark.sql import functions as F
from spark_impl.lifecycle import QueryFailed
from spark_impl.reconfig import ListSource, UserOperator, collect_results, user_job
from spark_impl.reconfig.streaming import start_query
from spark_impl.sources import list_stream
from spec.fries.dataflow import dataflow

DOC = os.path.join(str(ROOT), "docs", "production", "fries.md")
BLOCK = re.compile(r"^```python\n(# ([\w.]+\.py): [^\n]*\n.*?)^```", re.S | re.M)
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.S | re.M)
WAIT_S = 900.0
SCHEMA_ORDER = {"customer": {"region": "eu", "id": 7},
                "order": {"sku": "tea", "amount": 3, "ship": {"country": "fr", "express": True}, "tags": ["gift"]}}


def _page() -> str:
    with open(DOC, encoding="utf-8") as handle:
        return handle.read()


def blocks() -> dict[str, str]:
    """The page's script files by name."""
    return {name: code for code, name in BLOCK.findall(_page())}


def new_model() -> dict[str, Any]:
    """The page's model-v2.json."""
    (model,) = [json.loads(b) for b in JSON_BLOCK.findall(_page()) if b.lstrip().startswith('{"version"')]
    assert isinstance(model, dict)
    return model


def job_functions() -> dict[str, Any]:
    """``MODEL``, ``scorer`` and ``total`` of fries_job.py, defined without running the driver."""
    tree = ast.parse(blocks()["fries_job.py"])
    keep: list[ast.stmt] = [node for node in tree.body if isinstance(node, ast.FunctionDef)
            or (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "MODEL" for t in node.targets))]
    namespace: dict[str, Any] = {}
    exec(compile(ast.Module(body=keep, type_ignores=[]), "fries_job.py", "exec"), namespace)
    return namespace


def test_the_guides_files_are_in_the_page_and_compile_and_import_what_exists() -> None:
    files = blocks()
    assert set(files) == {"fries_job.py", "fries_results.py", "orders_check.py"}
    for name, code in files.items():
        tree = ast.parse(code, name)
        compile(tree, name, "exec")
        imported = [(node.module, alias.name) for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module for alias in node.names]
        missing = [item for item in imported if not hasattr(importlib.import_module(item[0]), item[1])]
        assert not missing, (name, missing)
    assert new_model()["version"] == 2


def test_the_jobs_functions_give_the_documented_points_for_the_example_order() -> None:
    """The page: ``customer`` reaches the functions as ``("eu", 7)`` and ``order`` as
    ``("tea", 3, ("fr", True), ("gift",))``; its result line shows total 11 under model 1."""
    (example,) = [json.loads(b) for b in JSON_BLOCK.findall(_page()) if b.lstrip().startswith('{"customer"')]
    assert example == SCHEMA_ORDER
    fns = job_functions()
    customer, order = ("eu", 7), ("tea", 3, ("fr", True), ("gift",))
    state, out = fns["scorer"](fns["MODEL"])(None, customer, order)
    assert (state, out) == (1, [(customer, (1, 11))])  # 3 * 2 + 5 (express) + 0 (gift)
    assert fns["total"](None, customer, out[0][1]) == (11, [(customer, (1, 11))])
    assert '{"txn": "S:0", "customer": ["eu", 7], "model": 1, "total": 11}' in _page()
    assert fns["scorer"](new_model())(1, customer, order) == (2, [(customer, (2, 13))])  # 3 * 3 + 0 + 4


def _definitions(name: str) -> dict[str, str]:
    """The module-level functions and assignments of one of the page's files, as AST dumps."""
    out: dict[str, str] = {}
    for node in ast.parse(blocks()[name]).body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.dump(node.value)
    return out


def test_the_check_file_runs_the_drivers_functions_and_the_pages_new_model() -> None:
    """The page: orders_check.py gives ``streamproof conformance --job`` "the same functions"."""
    check, driver = _definitions("orders_check.py"), _definitions("fries_job.py")
    for name in ("flow", "MODEL", "scorer", "total"):
        assert check[name] == driver[name], name
    (assign,) = [n for n in ast.parse(blocks()["orders_check.py"]).body
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "NEW_MODEL"]
    assert ast.literal_eval(assign.value) == new_model()


@pytest.mark.slow
def test_the_check_file_passes_streamproof_conformance_job(tmp_path: Any) -> None:
    """The page's command, as written: ``streamproof conformance --job orders_check.py:job``
    (4 cases here) exits 0."""
    (tmp_path / "orders_check.py").write_text(blocks()["orders_check.py"], encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", "--job", "orders_check.py:job",
                           "--cases", "4"], capture_output=True, text=True, timeout=900, cwd=str(tmp_path))
    assert done.returncode == 0, (done.stdout, done.stderr[-3000:])
    assert " pass" in done.stdout


@pytest.mark.spark
def test_fries_functions_receive_bytes_from_raw_kafka_binary_columns(spark: Any, tmp_path: Any) -> None:
    """docs/production/types.md: a ``binary`` column reaches the function as ``bytes`` (not a
    text such as ``"bytearray(b'...')"``), also for Kafka's raw ``key``/``value`` columns; the
    key routes and keys the state like any other."""
    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])

    def seen(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        return (state or 0) + 1, [(key, (type(key).__name__, type(value).__name__, value))]

    job = user_job(flow, {"M": UserOperator(flow.kind("M"), seen)}, ListSource(()), parallelism={"M": 2})
    rows: list[list[Any]] = [[f"user-{i % 2}", json.dumps({"amount": i}), "payments", i % 3, i // 3]
                             for i in range(5)]
    raw = (list_stream(spark, "key string, value string, topic string, partition int, offset long", [rows[:3], rows[3:]])
           .select(F.col("key").cast("binary").alias("key"), F.col("value").cast("binary").alias("value"),
                   "topic", "partition", "offset"))
    run = start_query(spark, job, raw, scheduler="fries", checkpoint_dir=str(tmp_path / "ckpt"))
    try:
        run.query.processAllAvailable()
    finally:
        run.stop()
    (result,) = collect_results(run.executor)
    got = sorted((k, v) for _, _, k, v in result.outputs)
    assert got == sorted((str(r[0]).encode(), ("bytes", "bytes", str(r[1]).encode())) for r in rows)
    assert result.states == {("M", b"user-0"): 3, ("M", b"user-1"): 2}


# --- the page run as written ------------------------------------------------------------------

REGIONS = ("eu", "us", "ap")  # "ap" has no rate: the model's default 1


def _orders(files: int, per_file: int) -> list[list[dict[str, Any]]]:
    rng = random.Random(5)
    return [[{"customer": {"region": rng.choice(REGIONS), "id": rng.randrange(1, 4)},
              "order": {"sku": rng.choice(("tea", "mug", "pot")), "amount": rng.randrange(1, 9),
                        "ship": {"country": rng.choice(("fr", "de")), "express": rng.random() < 0.4},
                        "tags": rng.sample(("gift", "promo", "bulk"), rng.randrange(0, 3))}}
             for _ in range(per_file)] for _ in range(files)]


class Driver:
    """fries_job.py in its own process group (``kill -9`` takes the JVM and Python workers)."""

    def __init__(self, tmp: Any, base: str, args: list[str], n: int) -> None:
        self.out = tmp / f"driver{n}.out"
        self.err = tmp / f"driver{n}.err"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, str(tmp / "fries_job.py"), base, *args], stdout=out,
                                         stderr=err, start_new_session=True, cwd=str(tmp))

    def wait(self, what: str, ready: Callable[[], bool], deadline: float) -> None:
        while not ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"waiting for {what}: driver exit {self.proc.poll()}\n{self.err.read_text()[-3000:]}")
            time.sleep(0.2)

    def printed(self, line: str) -> bool:
        return line in self.out.read_text()

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(60)


@pytest.mark.slow
def test_the_guide_runs_top_to_bottom_swap_kill_restart_exactly_once(tmp_path: Any) -> None:
    files = blocks()
    for name, code in files.items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    model2 = new_model()
    (tmp_path / "model-v2.json").write_text(json.dumps(model2), encoding="utf-8")
    base = str(tmp_path / "base")
    os.makedirs(os.path.join(base, "in"))
    batches = _orders(8, 12)
    landed = [0]
    deadline = time.monotonic() + WAIT_S

    def land() -> None:
        number = landed[0]
        tmp = os.path.join(base, f".f{number}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(o) + "\n" for o in batches[number])
        stamp = time.time() - 100 + number  # distinct, increasing modification times: files in order
        os.utime(tmp, (stamp, stamp))
        os.replace(tmp, os.path.join(base, "in", f"f{number}.json"))
        landed[0] += 1

    def committed(batch: int) -> Callable[[], bool]:
        return lambda: os.path.exists(os.path.join(base, "ckpt", "query", "commits", str(batch)))

    first = Driver(tmp_path, base, [], 1)
    try:
        land()
        land()
        first.wait("files 0-1", committed(1), deadline)
        land()
        time.sleep(random.Random(1).uniform(0.0, 3.0))  # the kill lands anywhere in file 2's batch
    finally:
        first.kill()
    second = Driver(tmp_path, base, [str(tmp_path / "model-v2.json")], 2)
    try:
        land()  # file 3: a micro-batch for the swap to follow even if file 2 had committed
        second.wait("the swap's answer", lambda: second.printed("swap accepted"), deadline)
        land()  # file 4: completes the request if it was made between micro-batches
        second.wait("model 2 in force", lambda: second.printed("model 2 in force"), deadline)
        land()
        second.wait("file 5", committed(5), deadline)
        land()  # file 6: killed in its micro-batch (or before it)
    finally:
        second.kill()
    third = Driver(tmp_path, base, [], 3)
    try:
        land()
        third.wait("every file", committed(7), deadline)
        third.proc.send_signal(signal.SIGTERM)  # the driver ends in supervised(run): a batch-boundary stop
        assert third.proc.wait(120) == 143, third.err.read_text()[-3000:]
        assert third.err.read_text().splitlines()[-1].startswith("streamproof: stopped by SIGTERM at a batch boundary")
    finally:
        third.kill()
    read = subprocess.run([sys.executable, str(tmp_path / "fries_results.py"), base], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path))
    assert read.returncode == 0, read.stderr
    rows = [json.loads(line) for line in read.stdout.splitlines() if line.startswith("{")]
    orders = [o for batch in batches for o in batch]
    assert [r["txn"] for r in rows] == [f"S:{i}" for i in range(len(orders))]  # each order exactly once, in order

    fns = job_functions()
    models = {1: fns["MODEL"], 2: model2}
    running: dict[tuple[str, int], int] = defaultdict(int)
    versions: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, (row, o) in enumerate(zip(rows, orders)):
        customer = (o["customer"]["region"], o["customer"]["id"])
        assert tuple(row["customer"]) == customer
        order = (o["order"]["sku"], o["order"]["amount"], (o["order"]["ship"]["country"], o["order"]["ship"]["express"]),
                 tuple(o["order"]["tags"]))
        _, [(_, (version, points))] = fns["scorer"](models[row["model"]])(None, customer, order)
        running[customer] += points
        assert (row["model"], row["total"]) == (version, running[customer]), (i, row)
        versions[customer].append(row["model"])
        if i < 2 * 12:
            assert row["model"] == 1, (i, row)  # committed before the swap was made
        if i >= 6 * 12:
            assert row["model"] == 2, (i, row)  # landed after it completed; the restart keeps it
    assert all(v == sorted(v) for v in versions.values()), versions  # 1 then 2, never back


def _page_stream(spark: Any, base: str) -> Any:
    """The ``stream = ...`` statement of fries_job.py (in its ``start`` function), evaluated with
    ``spark`` and ``base``."""
    tree = ast.parse(blocks()["fries_job.py"])
    (node,) = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "stream" for t in n.targets)]
    return eval(compile(ast.Expression(node.value), "fries_job.py", "eval"), {"spark": spark, "base": base})


@pytest.mark.spark
def test_a_bad_line_stops_the_pages_query_and_a_file_corrected_in_place_continues_exactly_once(
        spark: Any, tmp_path: Any) -> None:
    """docs/production/fries.md, "Bad input stops the query, never becomes nulls": with the
    page's stream, a field of the wrong type fails the micro-batch (Spark names the record; the
    driver's one line names the field and the file) and nothing of it is committed; the same file corrected in place is read on restart, once."""
    base = str(tmp_path / "base")
    os.makedirs(os.path.join(base, "in"))
    good = dict(SCHEMA_ORDER)
    bad = {"customer": {"region": "eu", "id": 1}, "order": {**SCHEMA_ORDER["order"], "amount": "three"}}

    def land(rows: list[dict[str, Any]]) -> None:
        tmp = os.path.join(base, ".f0.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(r) + "\n" for r in rows)
        os.replace(tmp, os.path.join(base, "in", "f0.json"))

    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])

    def seen(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        return (state or 0) + 1, [(key, value[1])]

    def start() -> Any:
        job = user_job(flow, {"M": UserOperator(flow.kind("M"), seen)}, ListSource(()), parallelism={"M": 2})
        return start_query(spark, job, _page_stream(spark, base), scheduler="fries",
                           checkpoint_dir=os.path.join(base, "ckpt"), key_column="customer", value_column="order")

    land([good, bad])
    run = start()
    try:
        with pytest.raises(Exception, match="MALFORMED_RECORD_IN_PARSING"):
            run.query.processAllAvailable()
        with pytest.raises(QueryFailed) as failed:  # the driver's exit line names the field and the file
            run.await_termination(30)
        assert str(failed.value).startswith("the query failed: [CANNOT_PARSE_JSON_FIELD] Cannot parse the field "
                                            "name 'amount' and the value three"), failed.value
        assert "(in [FAILED_READ_FILE.NO_HINT] Encountered error while reading file " in str(failed.value)
        assert "/in/f0.json" in str(failed.value) and "Python Proxy" not in str(failed.value)
    finally:
        run.stop()
    assert run.executor.state[0].committed.offset == 0
    land([good, {**bad, "order": {**bad["order"], "amount": 4}}])  # corrected in place, same name
    run = start()
    try:
        run.query.processAllAvailable()
    finally:
        run.stop()
    (result,) = collect_results(run.executor)
    assert sorted((txn, k, v) for _, txn, k, v in result.outputs) == [("S:0", ("eu", 7), 3), ("S:1", ("eu", 1), 4)]
