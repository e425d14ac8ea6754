"""spark_impl.lifecycle's promises without Spark, on a stand-in query (the module docstring):
``supervised`` leaves the process with one line and the documented exit code (1 failed, 143
SIGTERM, 130 SIGINT, 0 stopped, 2 bad input); the signal handler only sets a flag (the stop
runs in a thread: a handler that called the query would run inside whatever the main thread
was doing); every wait ends within the poll bound once the query died; ``describe_error``
finds the user's exception in a query's error text. Plus the status and reader entry points
refusing a location that holds nothing (one clear InputError)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from typing import Any

import pytest

from spec.errors import InputError
from spark_impl.lifecycle import POLL_S, LiveRun, QueryFailed, QueryStopped, describe_error
from spark_impl.readers import read_result_rows
from spark_impl.status import read_status
from support.paths import ROOT as REPOSITORY

ROOT = str(REPOSITORY)

STAND_IN = textwrap.dedent('''
    import sys, threading, time
    from spark_impl.lifecycle import LiveRun, supervised
    from spec.errors import InputError

    class Query:
        def __init__(self):
            self.isActive, self.error, self.lastProgress = True, None, None
        def exception(self):
            return self.error
        def stop(self):
            self.isActive = False

    class Run(LiveRun):
        def __init__(self):
            self.query, self.stopping, self.batch_ms = Query(), threading.Event(), {}
        def stop(self):
            self.stopping.set()
            time.sleep(0.3)                 # the running batch finishes first
            self.query.stop()

    run = Run()
    mode = sys.argv[1]
    if mode == "dies":
        def die():
            time.sleep(0.5)
            run.query.error = "Traceback (most recent call last):\\n  File x\\nValueError: bad amount -5"
            run.query.isActive = False
        threading.Thread(target=die, daemon=True).start()
    elif mode == "stopped":
        threading.Timer(0.5, run.stop).start()
    with supervised(run):
        print("ready", flush=True)
        if mode == "bad":
            raise InputError("no such operator 'X'", "request")
        if mode == "bug":
            raise KeyError("amount")
    print("not reached", flush=True)
''')


def supervise(tmp_path: Any, mode: str, send: int | None = None) -> tuple[int, str, str]:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    proc = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PYTHONPATH": ROOT})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    if send is not None:
        proc.send_signal(send)
    out, err = proc.communicate(timeout=30)
    return proc.returncode, out, err


@pytest.mark.parametrize("mode,send,code,line", [
    ("dies", None, 1, "streamproof: the query failed: ValueError: bad amount -5"),
    ("runs", signal.SIGTERM, 143, "streamproof: stopped by SIGTERM at a batch boundary; start again on the same "
                                  "checkpoint to continue"),
    ("runs", signal.SIGINT, 130, "streamproof: stopped by SIGINT at a batch boundary; start again on the same "
                                 "checkpoint to continue"),
    ("stopped", None, 0, "streamproof: stopped at a batch boundary; start again on the same checkpoint to continue"),
    ("bad", None, 2, "streamproof: bad input: request: no such operator 'X'"),
    ("bug", None, 1, "streamproof: the driver failed: KeyError: 'amount'"),
])
def test_supervised_exits_with_the_documented_code_and_one_line(tmp_path: Any, mode: str, send: int | None,
                                                                 code: int, line: str) -> None:
    returncode, out, err = supervise(tmp_path, mode, send)
    assert (returncode, err.strip()) == (code, line), err
    assert "not reached" not in out and "Traceback" not in err


class _Query:
    def __init__(self) -> None:
        self.isActive, self.error, self.lastProgress, self.calls = True, None, None, 0

    def exception(self) -> Any:
        return self.error

    def stop(self) -> None:
        self.isActive = False


class _Run(LiveRun):
    def __init__(self) -> None:
        self.query, self.stopping, self.batch_ms = _Query(), threading.Event(), {}

    def stop(self) -> None:
        self.stopping.set()
        self.query.stop()


def test_every_wait_raises_the_querys_error_within_the_poll_bound_once_it_died() -> None:
    run = _Run()

    def die() -> None:
        run.query.error = "py4j...\norg.apache.spark.SparkException: Job aborted\nZeroDivisionError: eve\n\tat x"
        run.query.isActive = False

    threading.Timer(0.3, die).start()
    started = time.monotonic()
    with pytest.raises(QueryFailed, match="^the query failed: ZeroDivisionError: eve$"):
        run.wait_for(lambda: False, timeout=30.0)
    assert time.monotonic() - started < 0.3 + 3 * POLL_S + 0.5
    with pytest.raises(QueryFailed):
        run.await_termination(1.0)
    with pytest.raises(QueryFailed):
        run.check_alive()


def test_a_stop_refusing_the_next_batch_is_not_a_failure_and_a_signal_stop_ends_the_waits() -> None:
    run = _Run()
    run.stop()
    run.query.error = "StreamStopped: batch 7 started after stop(); it is replayed after a restart"
    assert run.failure() is None and run.await_termination(1.0)
    run.check_alive()  # stopped by stop(): an inspection, not an error
    run.stopped_by = signal.SIGTERM
    with pytest.raises(QueryStopped, match="SIGTERM"):
        run.wait_for(lambda: False, timeout=5.0)
    assert run.await_termination(0.0) is True


def test_await_termination_returns_false_after_the_timeout_while_the_query_runs() -> None:
    run = _Run()
    started = time.monotonic()
    assert run.await_termination(0.3) is False
    assert 0.3 <= time.monotonic() - started < 1.0
    with _Run() as other:
        assert other.query.isActive
    assert not other.query.isActive  # the with block stopped it


def test_describe_error_names_the_users_exception_else_the_first_line() -> None:
    text = ("An exception was raised by the Python Proxy. Return Message: Traceback (most recent call last):\n"
            "  File \"x.py\", line 3, in count\n    raise ValueError(f\"negative amount {value} for {key}\")\n"
            "ValueError: negative amount -5 for ann\n")
    assert describe_error(text) == "ValueError: negative amount -5 for ann"
    assert describe_error("[STREAM_FAILED] Query terminated\nwith nothing") == "[STREAM_FAILED] Query terminated"
    assert describe_error("spec.errors.InputError: batch 3: row has no ts") == "InputError: batch 3: row has no ts"
    assert len(describe_error("x" * 1000)) == 300


def test_status_and_readers_refuse_a_location_holding_nothing(tmp_path: Any) -> None:
    with pytest.raises(InputError, match="no live query checkpoint"):
        read_status(str(tmp_path))
    with pytest.raises(InputError, match="no result table"):
        read_result_rows(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    assert read_result_rows(str(tmp_path / "empty")) == []
