"""Liveness and shutdown of the live front ends (Fries ``start_query``, O+
``start_oplus_query``, DGS ``start_dgs_query``; docs/production/operating.md).

Invariant: **no wait of this API outlives a dead query.** Every wait polls the query's
liveness at most :data:`POLL_S` apart and, once the query has terminated, returns (stopped) or
raises :class:`QueryFailed` carrying the query's error (failed) - so a driver whose query died
ends within a bounded time and a supervisor (systemd, Kubernetes) sees it. Why polling and not
``query.awaitTermination()``: a long py4j call in the main thread is what a Ctrl-C interrupts
into py4j's "reentrant call" tracebacks; short calls between ``time.sleep`` keep the main
thread in Python, where a signal handler can run.

Three pieces:

* :class:`LiveRun`, the base of every front end's run handle: :meth:`LiveRun.await_termination`,
  :meth:`LiveRun.wait_for`, :meth:`LiveRun.failure`, and ``with start_...(...) as run:`` (the
  block's end stops the query at a batch boundary, ``run.stop()``).
* :func:`install_signal_handlers`: SIGINT / SIGTERM request a stop at the next batch boundary.
  The handler only records the signal and sets an event; a helper thread calls ``run.stop()``
  (never py4j inside a signal handler). A second signal while stopping exits at once with
  ``128 + signal`` (as a kill would: the exactly-once protocol recovers from it).
* :func:`supervised`: the driver's main block; it installs the handlers, runs the block and
  waits until the query ends, then leaves the process with ONE stderr line and an exit code:
  :data:`EXIT_STOPPED` (0, stopped by ``run.stop()``), :data:`EXIT_FAILED` (1, the query
  failed, or the start function given to it raised), :data:`EXIT_BAD_INPUT` (2, the start
  function or the block raised ``InputError``), ``128 + signal`` (130 for SIGINT, 143 for
  SIGTERM: stopped at a batch boundary).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Iterator, NoReturn, TextIO, TypeVar

from spec.errors import InputError
from spark_impl.query_errors import describe_error

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_STOPPED", "LiveRun", "POLL_S", "QueryFailed", "QueryStopped",
           "StopSignals", "describe_error", "install_signal_handlers", "supervised"]

POLL_S = 0.1
"""Seconds between two liveness checks of a wait (the bound on noticing a dead query)."""

EXIT_STOPPED = 0
"""Exit code of :func:`supervised` when the query was stopped by ``run.stop()`` (no signal)."""

EXIT_FAILED = 1
"""Exit code of :func:`supervised` when the query failed (its error on the one stderr line)."""

EXIT_BAD_INPUT = 2
"""Exit code of :func:`supervised` when its block raised ``InputError`` (the query is stopped)."""

LOG = logging.getLogger("streamproof.lifecycle")



class QueryFailed(RuntimeError):
    """The query terminated with an error. ``str()`` is one line naming the error (the user's
    exception where the query's error holds a Python traceback); ``error`` is the query's
    whole error text."""

    def __init__(self, line: str, error: str) -> None:
        super().__init__(line)
        self.error = error


class QueryStopped(RuntimeError):
    """A wait ended because the query was stopped (``run.stop()`` or a signal) before what it
    waited for happened. ``signal`` is the signal number when a signal asked for the stop."""

    def __init__(self, line: str, signum: int | None = None) -> None:
        super().__init__(line)
        self.signal = signum


class LiveRun:
    """Liveness and stop for a run handle with a Structured Streaming ``query``, a
    ``stopping`` event (set by ``stop()``) and ``stop()`` itself (a batch-boundary stop).

    A subclass may override :meth:`expected_failure` for errors that are not failures of the
    query (a test harness's simulated crash)."""

    query: Any
    stopping: threading.Event
    batch_ms: dict[int, float]

    def stop(self) -> None:
        """Stop at a batch boundary (the front end's)."""
        raise NotImplementedError

    def settle_stream(self, timeout: float = 10.0) -> None:
        """Part of ``stop()``, after the running batch finished: wait (at most ``timeout``
        seconds, while the query runs) until Structured Streaming has recorded the last batch
        this process handled as committed, so the restart does not replay it. (A replay would
        be harmless - every front end skips a batch it committed - but it is work and a
        WARNING line.)"""
        if not self.batch_ms or self.query is None:
            return
        last = max(self.batch_ms)
        deadline = time.monotonic() + timeout
        # a test harness's stand-in query (no isActive / lastProgress) has no Structured Streaming
        # commit log to wait for
        if not hasattr(self.query, "lastProgress"):
            return
        while getattr(self.query, "isActive", False) is True and time.monotonic() < deadline:
            progress = self.query.lastProgress
            if progress is not None and int(progress.batchId) >= last:
                return
            time.sleep(0.02)

    # --- what happened ---------------------------------------------------------------------

    stopped_by: int | None = None
    """The signal that asked for the stop (set by :func:`install_signal_handlers`), else None."""

    def expected_failure(self) -> bool:
        """True when the query's error is one the caller asked for (default: never)."""
        return False

    def failure(self) -> QueryFailed | None:
        """The query's error as :class:`QueryFailed` once it has terminated with one; None while
        it runs or after a clean stop. A batch refused because ``stop()`` was called
        (``StreamStopped``) is part of the stop, not a failure."""
        query = self.query
        if query is None or query.isActive:
            return None
        error = query.exception()
        if error is None:
            return None
        text = str(error)
        if self.stopping.is_set() and "StreamStopped" in text:
            return None
        return QueryFailed(f"the query failed: {describe_error(text)}", text)

    def check_alive(self) -> None:
        """Raise :class:`QueryFailed` if the query failed, :class:`QueryStopped` if a signal
        stopped it; nothing otherwise (a query stopped by ``stop()`` may still be inspected)."""
        if self.query is None or self.query.isActive:
            return
        failed = self.failure()
        if failed is not None and not self.expected_failure():
            raise failed
        if self.stopped_by is not None:
            raise QueryStopped(f"stopped by {signal.Signals(self.stopped_by).name}", self.stopped_by)

    # --- waits -----------------------------------------------------------------------------

    def await_termination(self, timeout: float | None = None) -> bool:
        """Wait until the query terminates: True once it has stopped, False when ``timeout``
        seconds passed first; raises :class:`QueryFailed` (with the query's error) if it
        failed. Notices the end within :data:`POLL_S`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.query is None or self.query.isActive:
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic())))
        failed = self.failure()
        if failed is not None and not self.expected_failure():
            raise failed
        return True

    def wait_for(self, condition: Callable[[], Any], timeout: float | None = None, what: str = "the condition") -> None:
        """Wait until ``condition()`` is true. Raises :class:`QueryFailed` if the query fails,
        :class:`QueryStopped` if it stops first, ``TimeoutError`` after ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not condition():
            if self.query is not None and not self.query.isActive:
                if condition():
                    return
                self.check_alive()
                raise QueryStopped(f"the query stopped before {what}")
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"no {what} within {timeout} s")
            time.sleep(POLL_S)

    # --- with start_...(...) as run: ---------------------------------------------------------

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


R = TypeVar("R", bound=LiveRun)
"""A front end's run handle type (``supervised`` yields the handle it was given or started)."""


class StopSignals:
    """What :func:`install_signal_handlers` installed: ``signal`` is the first signal
    received (None so far); :meth:`restore` puts the previous handlers back."""

    def __init__(self, run: LiveRun, signals: tuple[int, ...]) -> None:
        self.run = run
        self.signal: int | None = None
        self.requested = threading.Event()
        self.previous: dict[int, Any] = {}
        self.thread = threading.Thread(target=self._stop_when_requested, name="streamproof-stop", daemon=True)
        self.thread.start()
        for signum in signals:
            self.previous[signum] = signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # a signal handler: no py4j, no logging (locks), no blocking - record and wake the thread
        if self.requested.is_set():
            os._exit(128 + signum)  # a second signal while stopping: leave now, as a kill would
        self.signal = signum
        self.run.stopped_by = signum
        self.requested.set()

    def _stop_when_requested(self) -> None:
        self.requested.wait()
        signum = self.signal
        name = signal.Signals(signum).name if signum is not None else "a signal"
        LOG.info("%s received: stopping at the next batch boundary", name)
        try:
            self.run.stop()
        except Exception as error:  # noqa: BLE001 - a query that already died: the waits report it
            LOG.warning("stop after %s: %s", name, describe_error(str(error)))

    def restore(self) -> None:
        """Put the previous handlers back (the stop thread stays idle)."""
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)


def install_signal_handlers(run: LiveRun, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> StopSignals:
    """Make SIGINT and SIGTERM stop ``run`` at the next batch boundary (module docstring).
    Call from the main thread (Python's rule for signal handlers)."""
    return StopSignals(run, signals)


@contextmanager
def supervised(run: R | Callable[[], R], *, stream: TextIO | None = None) -> Iterator[R]:
    """The driver's main block: ``with supervised(start) as run: ...`` or ``with
    supervised(run): ...``. Installs the signal handlers, runs the block, then waits until the
    query ends and exits the process with one line on ``stream`` (stderr) and the module
    docstring's exit code - also when the block raised :class:`QueryFailed` or
    :class:`QueryStopped` (e.g. from ``run.in_progress()``); any other exception of the block
    stops the query and exits 1 with one line (its traceback is logged at DEBUG on
    ``streamproof.lifecycle``). Never returns.

    ``start``, a callable of no arguments returning the run (the driver's function that builds
    the job and calls ``start_query`` / ``start_oplus_query`` / ``start_dgs_query``), is called
    here, so that a start-up failure leaves the same way: ``InputError`` (a misspelt policy, a
    missing column, a user module that does not load) exits :data:`EXIT_BAD_INPUT` with one
    line ``streamproof: bad input: ...``, any other exception exits :data:`EXIT_FAILED` with one
    line ``streamproof: the query could not start: ...`` - never a traceback. A run handle
    passed directly was started before, outside this protection."""
    out = stream if stream is not None else sys.stderr
    if not isinstance(run, LiveRun):
        run = _start(run, out)
    installed = install_signal_handlers(run)
    try:
        yield run
        run.await_termination()
    except QueryFailed as failed:
        _leave(out, EXIT_FAILED, f"streamproof: {failed}")
    except QueryStopped:
        pass
    except InputError as bad:
        run.stop()
        _leave(out, EXIT_BAD_INPUT, f"streamproof: bad input: {bad}")
    except Exception as error:  # noqa: BLE001 - the driver's own code failed: stop, say so, leave
        LOG.debug("the driver's block raised", exc_info=True)
        run.stop()
        _leave(out, EXIT_FAILED, f"streamproof: the driver failed: {_named(error)}")
    installed.restore()
    _leave_stopped(run, out)


def _start(start: Callable[[], R], out: TextIO) -> R:
    """Call the driver's start function; a failure leaves the process with one line."""
    try:
        run = start()
    except InputError as bad:
        _leave(out, EXIT_BAD_INPUT, f"streamproof: bad input: {bad}")
    except Exception as error:  # noqa: BLE001 - the start failed: say so in one line, leave
        LOG.debug("the start raised", exc_info=True)
        _leave(out, EXIT_FAILED, f"streamproof: the query could not start: {_named(error)}")
    if not isinstance(run, LiveRun):  # e.g. a start function without ``return``
        _leave(out, EXIT_BAD_INPUT, f"streamproof: bad input: supervised: the start function returned "
                                    f"{type(run).__name__}, not a run (return start_query(...) or the like)")
    return run


def _named(error: BaseException) -> str:
    """``Name: cause`` of an exception raised in the driver (a py4j error's cause found in its text)."""
    cause = describe_error(str(error))
    return cause if cause.split(":", 1)[0].split(" ", 1)[0].endswith(("Error", "Exception")) else (
        f"{type(error).__name__}: {cause}")


def _leave_stopped(run: LiveRun, out: TextIO) -> NoReturn:
    if not run.stopping.is_set():  # the block ended with QueryStopped while the query still runs
        run.stop()
    run.await_termination(timeout=60.0)
    failed = run.failure()
    if failed is not None and not run.expected_failure():
        _leave(out, EXIT_FAILED, f"streamproof: {failed}")
    if run.stopped_by is not None:
        name = signal.Signals(run.stopped_by).name
        _leave(out, 128 + run.stopped_by,
               f"streamproof: stopped by {name} at a batch boundary; start again on the same checkpoint to continue")
    _leave(out, EXIT_STOPPED, "streamproof: stopped at a batch boundary; start again on the same checkpoint to continue")


def _leave(out: TextIO, code: int, line: str) -> NoReturn:
    out.write(line.replace("\n", " ") + "\n")
    out.flush()
    try:
        sys.stdout.flush()
    finally:
        os._exit(code)  # no interpreter teardown: py4j's and Spark's threads cannot hang the exit
