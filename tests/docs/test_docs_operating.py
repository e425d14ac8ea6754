"""docs/production/operating.md, run as an operator would run it.

The scripts are the page's code blocks whose first line is ``# <name>.py: ...``, copied as they
are. Default run (no Spark): every script is there, compiles and imports only names that exist,
and the page's metric table names exactly ``spark_impl.observe.METRICS``. Slow: the driver in
its own process (its own SparkSession, metrics on a free port), files landing while it runs, a
reconfiguration, SIGTERM to the driver ("stopped by SIGTERM at a batch boundary", exit 143, one
line, no traceback), a restart on the same ``BASE`` that continues exactly once, the status
script from the checkpoint alone, a user function raising mid-stream (exit 1 within 30 s, one
line naming the error), and the Spark-free reader: every tuple exactly once.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Any, Callable

import pytest

from support.doc_blocks import assert_compiles_and_imports_exist
from support.doc_blocks import doc_scripts as blocks_of
from support.paths import ROOT
from spark_impl.observe import METRICS

DOC = os.path.join(str(ROOT), "docs", "production", "operating.md")
SCRIPTS = ("fries_service.py", "fries_status.py", "fries_results.py")
WAIT_S = 600.0
DEAD_WITHIN_S = 30.0


def doc_scripts() -> dict[str, str]:
    """The page's script blocks."""
    return blocks_of(DOC)


def test_every_script_of_the_page_is_there_compiles_and_imports_what_exists() -> None:
    files = doc_scripts()
    assert sorted(files) == sorted(SCRIPTS)
    for name, code in files.items():
        assert_compiles_and_imports_exist(name, code)


def test_the_pages_metric_table_names_every_metric_and_no_other() -> None:
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## Metrics", 1)[1].split("## Status", 1)[0]
    assert sorted(re.findall(r"^\| `(streamproof_\w+)` \|", section, re.M)) == sorted(METRICS)


class Operator:
    """The page's scripts in ``root/scripts``, ``BASE`` = ``root/base``, the driver's output in files."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.base = os.path.join(root, "base")
        os.makedirs(os.path.join(root, "scripts"))
        os.makedirs(os.path.join(self.base, "in"))
        for name, code in doc_scripts().items():
            with open(os.path.join(root, "scripts", name), "w", encoding="utf-8") as handle:
                handle.write(code)
        self.landed: list[list[dict[str, Any]]] = []
        self.t0 = int(time.time()) - 10_000
        self.procs: list[subprocess.Popen[bytes]] = []

    def land(self, rows: list[dict[str, Any]]) -> None:
        number = len(self.landed)
        tmp = os.path.join(self.root, f".land-{number}")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        os.utime(tmp, (self.t0 + number, self.t0 + number))
        os.replace(tmp, os.path.join(self.base, "in", f"part-{number:04d}.json"))
        self.landed.append(rows)

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        number = len(self.procs)
        with open(self.path(number, "out"), "wb") as out, open(self.path(number, "err"), "wb") as err:
            proc = subprocess.Popen([sys.executable, os.path.join(self.root, "scripts", "fries_service.py"), self.base,
                                     *args], stdout=out, stderr=err, start_new_session=True, cwd=self.root,
                                    env={**os.environ, "METRICS_PORT": "0"})
        self.procs.append(proc)
        return proc

    def path(self, number: int, kind: str) -> str:
        return os.path.join(self.root, f"driver-{number}.{kind}")

    def text(self, proc: subprocess.Popen[bytes], kind: str) -> str:
        with open(self.path(self.procs.index(proc), kind), encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def wait(self, proc: subprocess.Popen[bytes], what: str, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not done():
            assert proc.poll() is None, f"the driver exited ({proc.returncode}) before {what}:\n" \
                                        f"{self.text(proc, 'err')[-3000:]}"
            assert time.monotonic() < deadline, f"no {what} in {WAIT_S:.0f} s:\n{self.text(proc, 'err')[-3000:]}"
            time.sleep(0.2)

    def committed(self, batch: int) -> bool:
        return os.path.exists(os.path.join(self.base, "ckpt", "query", "commits", str(batch)))

    def feed(self, proc: subprocess.Popen[bytes], rows: list[dict[str, Any]]) -> None:
        self.land(rows)
        batch = len(self.landed) - 1
        self.wait(proc, f"commit of batch {batch}", lambda: self.committed(batch))

    def exit_code(self, proc: subprocess.Popen[bytes], within: float) -> int:
        try:
            return proc.wait(within)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the driver did not exit within {within} s:\n{self.text(proc, 'err')[-3000:]}")

    def script(self, name: str) -> str:
        done = subprocess.run([sys.executable, os.path.join(self.root, "scripts", name), self.base],
                              capture_output=True, text=True, timeout=120, cwd=self.root)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def rows(user: str, *amounts: int) -> list[dict[str, Any]]:
    return [{"user": user, "amount": a} for a in amounts]


@pytest.mark.slow
@pytest.mark.spark
def test_sigterm_stops_at_a_batch_boundary_restart_continues_exactly_once_and_a_dead_query_exits_1(
        tmp_path: Any) -> None:
    op = Operator(str(tmp_path))
    try:
        op.land(rows("ann", 1, 2) + rows("bob", 3))
        first = op.start("reconfigure")
        op.wait(first, "request accepted", lambda: "request accepted" in op.text(first, "out"))
        op.land(rows("cy", 4))  # the batch that makes the request
        op.wait(first, "reconfigured", lambda: "reconfigured" in op.text(first, "out"))
        doubled_from = len(op.landed)  # every file landed from here on runs count_double
        op.feed(first, rows("ann", 5) + rows("dé", 6))
        port = int(re.search(r"127\.0\.0\.1:(\d+)/metrics", op.text(first, "out")).group(1))  # type: ignore[union-attr]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            metrics = answer.read().decode()
        assert 'streamproof_operator_version{operator="M",version="R1"} 1.0' in metrics
        assert "streamproof_input_rows_total 6.0" in metrics
        assert "streamproof.fries" in op.text(first, "err") and "batch 2: 2 rows in, 2 rows out" in op.text(first, "err")

        os.kill(first.pid, signal.SIGTERM)  # the driver only, as Kubernetes or systemd KillMode=mixed do
        assert op.exit_code(first, 120) == 128 + signal.SIGTERM
        err = op.text(first, "err")
        assert last_line(err) == ("streamproof: stopped by SIGTERM at a batch boundary; start again on the same "
                                  "checkpoint to continue")
        assert "Traceback" not in err and "reentrant" not in err
        index = json.load(open(os.path.join(op.base, "ckpt", "input", "index.json"), encoding="utf-8"))
        assert op.committed(index["last"]) and not op.committed(index["last"] + 1)  # nothing half done

        op.land(rows("bob", 7))  # lands while no driver runs
        second = op.start()
        down = len(op.landed) - 1
        op.wait(second, f"commit of batch {down}", lambda: op.committed(down))
        op.feed(second, rows("ann", 8, 9))
        status = json.loads(op.script("fries_status.py").splitlines()[0])
        assert status["versions"] == {"M": "R1"}  # the completed request survived the restart
        assert [(r["request"], r["state"]) for r in status["requests"]] == [("R1", "applied")]

        op.land(rows("ann", -5))  # the user function raises: the query dies, the driver exits
        landed = time.monotonic()
        assert op.exit_code(second, 300) == 1
        took = time.monotonic() - landed
        assert last_line(op.text(second, "err")) == "streamproof: the query failed: ValueError: negative amount -5 for ann"
        assert took < DEAD_WITHIN_S, f"the driver exited {took:.1f} s after its query's death"

        found = [json.loads(line) for line in op.script("fries_results.py").splitlines()]
        inputs = [row for file in op.landed[:-1] for row in file]  # tuple i of the input log is S:i
        assert sorted(int(r["txn"].split(":")[1]) for r in found) == list(range(len(inputs)))  # exactly once
        for r in found:
            i = int(r["txn"].split(":")[1])
            amount, user = inputs[i]["amount"], inputs[i]["user"]
            first_doubled = sum(len(f) for f in op.landed[:doubled_from])
            wanted = {2 * amount} if i >= first_doubled else {amount} if i < 3 else {amount, 2 * amount}
            assert r["key"] == user and r["value"] in wanted, (r, inputs[i])
    finally:
        op.cleanup()
