"""Running an engine call with a time limit.

An engine that never returns (a reconfiguration that never completes, a stream that never
drains) is a liveness failure, and the suite must report it rather than hang with it. The
call runs in a daemon thread; if it has not finished after ``timeout_s`` the caller gets
``(False, None)`` and moves on. A Spark engine's thread is left to itself: the caller treats
the engine as unusable afterwards (see :class:`conformance.fries.engines.batch.SparkEngine`), and a
daemon thread does not keep the process alive at exit.

A call to pure-Python code (a Spark-free check, a user's function run by the reference) is
*stopped* instead (``interrupt=True``): :class:`Abandoned` is raised inside the thread at its
next Python instruction. Left running, such a thread spins for the rest of the process and,
holding the GIL half the time, slows everything after it: one endless loop left by a test made
the whole pytest run three times slower and a Z3 proof that takes 4 s exceed its 300 s budget.
Code blocked inside a C call is stopped when it returns to Python.
"""

from __future__ import annotations

import ctypes
import threading
import time
from typing import TYPE_CHECKING, Callable, TypeVar

from conformance.core.results import CheckResult, FailureReport

if TYPE_CHECKING:
    from conformance.core.results import SuiteResult

T = TypeVar("T")


THREAD_NAME = "streamproof-call"
"""The name of every thread :func:`call_with_timeout` starts (a test can look for leftovers)."""


class Abandoned(BaseException):
    """Raised inside a timed-out call's thread to stop it (``interrupt=True``); a
    ``BaseException`` so that the code it stops, which may catch ``Exception``, lets it pass."""


def call_with_timeout(fn: Callable[[], T], timeout_s: float, *, interrupt: bool = False) -> tuple[bool, T | None]:
    """``(True, fn())`` if ``fn`` returns within ``timeout_s`` seconds (its exception is
    re-raised), else ``(False, None)``; with ``interrupt`` the call is then stopped
    (:func:`stop_thread`, module docstring)."""
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as error:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=work, name=THREAD_NAME, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        if interrupt:
            stop_thread(thread)
        return False, None
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return True, box.get("value")  # type: ignore[return-value]


def stop_thread(thread: threading.Thread, wait_s: float = 2.0) -> bool:
    """Raise :class:`Abandoned` inside ``thread`` and wait up to ``wait_s`` for it to end;
    True if it ended (a thread blocked in a C call ends only when that call returns)."""
    ident = thread.ident
    if ident is None or not thread.is_alive():
        return True
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(Abandoned))
    thread.join(wait_s)
    return not thread.is_alive()


CHECK_LIMIT_S = 120.0
"""A Spark-free check of the suite (run in this process) that takes longer hangs: each takes
well under 5 s on this 2-core machine, under 10 s at a load of 16."""


class Hang(Exception):
    """A Spark-free check that did not finish within its limit (:func:`bounded`)."""


def bounded(fn: Callable[[], T], what: str, limit_s: float | None = None) -> T:
    """``fn()`` if it returns within ``limit_s`` seconds (default :data:`CHECK_LIMIT_S`, read at
    the call; its exception is re-raised), else
    :class:`Hang`. The suite's Spark-free checks run the executor's code in this process, where
    no engine watchdog looks: a loop that never ends there (a control reader that never moves
    on) hung the whole run; now it is a failure of that check, the loop is stopped
    (:func:`stop_thread`) and the run goes on."""
    limit = CHECK_LIMIT_S if limit_s is None else limit_s
    finished, value = call_with_timeout(fn, limit, interrupt=True)
    if not finished:
        raise Hang(f"{what} did not finish within {limit:g} s (an endless loop in the code it runs?)")
    return value  # type: ignore[return-value]


def contained_check(result: "SuiteResult", name: str, run: Callable[[], "CheckResult"],
                    limit_s: float | None = None) -> "CheckResult":
    """``run()``, a Spark-free check that appends its failures to ``result`` and returns its
    :class:`CheckResult`, within ``limit_s`` (:func:`bounded`); a crash or a hang of the code
    under it is a failure of check ``name`` (oracle ``engine``: exit 1, never the CLI's
    internal error)."""
    start = time.monotonic()
    try:
        return bounded(run, name, limit_s)
    except Exception as error:  # noqa: BLE001 - a crash of the executor's code is a finding
        problem = f"{name}: raised {type(error).__name__}: {error}"
    check = CheckResult(name, cases=1, failed=1, elapsed_s=time.monotonic() - start)
    check.oracle_failures["engine"] += 1
    result.failures.append(FailureReport(name, 0, ("engine",), f"[engine] {problem}", 1, 1, 0, {"problem": problem}))
    return check
