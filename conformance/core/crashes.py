"""Crashes are findings: an engine call that raises or never returns.

Every suite runs its cases through an engine in batches (one call, one batch of Spark jobs).
An exception inside that call used to escape to the CLI and exit 3 ("internal error"), hiding
which case broke the engine. :func:`run_isolating` runs a batch and, when the call raises,
bisects it (halves, recursively) to find the cases that crash on their own; each such case
becomes a :class:`Crash` (reported by the suite as an ``engine`` failure, exit 1, shrunk and
saved like any other failure). A batch that crashes while both halves pass is a crash of the
batch: every case of it is a :class:`Crash` with ``alone=False`` (said in the report).

A call that does not return within ``timeout_s`` is a liveness failure: every case of the
batch is a :class:`Crash` and :class:`Guard` refuses further calls (the hung thread cannot be
killed, see :mod:`conformance.core.watchdog`).

One exception is not a finding: a lost connection to Spark's JVM (it died, was killed, ran out
of memory). No case can run after it, and the engine under test did nothing wrong; the call
raises :class:`SparkGone` instead (the command line's one error line, exit 3), so a dead JVM is
never reported as a discrepancy of spark_impl - and never found only in Spark's own log lines,
which the suite keeps quiet (:mod:`conformance.core.spark_logs`).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import Callable, Generic, Sequence, TypeVar

from conformance.core.watchdog import call_with_timeout

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Crash:
    """One case's engine failure: the exception (type and message) or the hang, and whether
    it reproduced with the case alone (or in a smaller batch) rather than only in its batch."""

    message: str
    alone: bool = True

    def explain(self) -> str:
        """The failure in words."""
        if self.alone:
            return f"the engine crashed on this case: {self.message}"
        return (f"the engine crashed on a batch containing this case ({self.message}), but not on any "
                "smaller part of it (a batch-only crash)")


def describe(error: BaseException) -> str:
    """``Type: message`` of an exception, on one line (Py4J's Java trace cut to its first
    line naming the Python error, when there is one)."""
    text = str(error).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    named = [line for line in lines if "Error: " in line or "Exception: " in line]
    first = named[-1] if named and len(lines) > 3 else (lines[0] if lines else "")
    return f"{type(error).__name__}: {first[:500]}"


class SparkGone(RuntimeError):
    """The connection to Spark's JVM is lost: the run cannot go on (module docstring)."""


def lost_gateway(error: BaseException) -> str | None:
    """``Type: message`` of the exception in ``error``'s chain that says py4j lost its JVM (a
    ``Py4JNetworkError``, or a connection error raised inside py4j's own code), else None."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        network = type(current).__name__ == "Py4JNetworkError"
        connection = isinstance(current, ConnectionError) and any(
            f"{os.sep}py4j{os.sep}" in frame.filename for frame in traceback.extract_tb(current.__traceback__))
        if network or connection:
            return describe(current)
        current = current.__cause__ or current.__context__
    return None


class Guard(Generic[T, R]):
    """An engine's batch call under a watchdog, with crash isolation (module docstring).
    ``hung`` is set after a call timed out; later calls then return crashes without running."""

    def __init__(self, run: Callable[[Sequence[T]], Sequence[R]], timeout_s: float = 900.0,
                 on_hang: Callable[[], None] | None = None) -> None:
        self.run = run
        self.timeout_s = timeout_s
        self.on_hang = on_hang
        self.hung: str | None = None

    def __call__(self, items: Sequence[T]) -> list[R | Crash]:
        """One result or :class:`Crash` per item, in order."""
        return self._isolate(list(items))

    def _call(self, items: list[T]) -> list[R] | Crash:
        if self.hung is not None:
            return Crash(f"not run: {self.hung}")
        try:
            finished, results = call_with_timeout(lambda: list(self.run(items)), self.timeout_s)
        except Exception as error:  # noqa: BLE001 - an engine crash is a finding
            lost = lost_gateway(error)
            if lost is not None:
                raise SparkGone(f"the connection to Spark's JVM is lost ({lost}): the suite cannot go on; "
                                "rerun with --spark-log-level WARN to see Spark's own log lines") from error
            return Crash(describe(error))
        if not finished:
            self.hung = (f"the engine did not finish a batch of {len(items)} case(s) within "
                         f"{self.timeout_s:.0f} s (a liveness failure: some run never ends); the engine "
                         "is not used again in this process")
            if self.on_hang is not None:
                try:
                    self.on_hang()
                except Exception:  # noqa: BLE001 - best effort
                    pass
            return Crash(self.hung)
        assert results is not None
        if len(results) != len(items):
            return Crash(f"the engine returned {len(results)} results for {len(items)} cases")
        return results

    def _isolate(self, items: list[T]) -> list[R | Crash]:
        if not items:
            return []
        outcome = self._call(items)
        if not isinstance(outcome, Crash):
            return list(outcome)
        if self.hung is not None or len(items) == 1:
            return [outcome] * len(items)
        middle = len(items) // 2
        halves = self._isolate(items[:middle]) + self._isolate(items[middle:])
        if any(isinstance(r, Crash) for r in halves):
            return halves
        return [Crash(outcome.message, alone=False)] * len(items)


def run_isolating(run: Callable[[Sequence[T]], Sequence[R]], items: Sequence[T],
                  timeout_s: float = 900.0) -> list[R | Crash]:
    """``Guard(run, timeout_s)(items)``: one call, crashes isolated (module docstring)."""
    return Guard(run, timeout_s)(items)
