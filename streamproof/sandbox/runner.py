"""The parent's side of the ``check-dgs`` sandbox: start the child, watch it, enforce the limits.

:func:`run_check` starts ``python -P -m streamproof.sandbox.child DIR`` in a new session
(a Ctrl-C on the terminal reaches only us; we then kill every process of the child's session,
:mod:`streamproof.sandbox.session` - the program cannot leave it or signal us,
:mod:`streamproof.sandbox.confine`), with its stdout and stderr redirected to files
in a private temporary directory. While it runs we read the shared record
(:mod:`streamproof.sandbox.beacon`) every :data:`POLL` seconds to

* kill it when one piece of user code runs longer than ``call_timeout``, or the whole run
  longer than ``timeout``, or it prints more than :data:`MAX_OUTPUT` bytes - each an
  :class:`~spec.errors.InputError` naming where the time went (we attribute each poll interval
  to what the child was doing, a sampling profile) and, from a stack dump
  (:mod:`streamproof.sandbox.stack`), the user's line. A user call is timed as a whole; an
  activity that mixes user code with a library's or ours (the import, a draw, a call on
  symbolic values, our own phases calling a ``__repr__``) is stopped only when two stack dumps
  show the user's own code on top - or when no stack dump comes at all (the program replaced
  or ignored ``SIGUSR1``, the signal that asks for one): then where the time goes cannot be
  told, and any activity past the per-call limit is the program's fault;
* draw a progress bar on a terminal.

The verdict comes back in the child's result file; a child that ends without one ended while
in user code (``os._exit``, a signal) - the user's fault - or in ours (a bug).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamproof.sandbox import beacon
from streamproof.sandbox.captured import Captured, read_captured
from streamproof.sandbox.blame import located
from streamproof.sandbox.child import BEACON, REQUEST, RESULT, STACK, STDERR, STDOUT
from streamproof.sandbox.check import CONDITIONS, Request
from streamproof.sandbox.guard import STRATEGY, SYMBOLIC
from streamproof.sandbox.plan_task import PlanRequest
from streamproof.sandbox.session import end_session
from streamproof.sandbox.stack import UNKNOWN, StackProbe
from conformance.core.progress import ProgressBar
from spec.errors import InputError, cut, one_line
import conformance

POLL = 0.05
MAX_OUTPUT = 50_000_000
PROGRESS_AFTER = 1.0
MAX_MESSAGE = 2000
STARTING = "starting Python and the checker"


@dataclass(frozen=True)
class Limits:
    """``call_timeout``: seconds one piece of user code may run; ``timeout``: seconds for the
    whole check."""

    call_timeout: float
    timeout: float


@dataclass(frozen=True)
class Verdict:
    """The child's report: ``document`` (the ``--json`` object), ``lines`` (plain words),
    ``consistent``, and what the user's code printed."""

    consistent: bool
    document: dict[str, Any]
    lines: list[str]
    output: Captured


class InternalError(Exception):
    """The child failed in streamproof's code (a bug); ``detail`` is its traceback."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


@dataclass
class _Watch:
    """What the parent learns while the child runs."""

    started: float = field(default_factory=time.monotonic)
    profile: dict[str, float] = field(default_factory=dict)
    last: beacon.Snapshot | None = None


def run_check(request: Request | PlanRequest, limits: Limits, *, progress: bool) -> Verdict:
    """Run ``request`` in the sandbox; the verdict, or an InputError (the program's fault, a
    limit hit) or :class:`InternalError`."""
    with tempfile.TemporaryDirectory(prefix="streamproof-check-dgs-") as work:
        folder = Path(work)
        beacon.create(str(folder / BEACON))
        (folder / REQUEST).write_text(json.dumps(request.__dict__))
        with open(folder / STDOUT, "wb") as out, open(folder / STDERR, "wb") as err:
            child = subprocess.Popen(
                [sys.executable, "-P", "-m", "streamproof.sandbox.child", work],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                env=_child_env(),
            )
            reader = beacon.Reader(str(folder / BEACON))
            probe = StackProbe(child, folder / STACK)
            try:
                try:
                    watch = _watch(child, reader, probe, limits, (out, err), progress,
                                   "run" if isinstance(request, PlanRequest) else "check")
                except InputError as limit:
                    raise _with_location(limit, probe) from None
            finally:
                end_session(child)
                reader.close()
        output = read_captured(folder / STDOUT, folder / STDERR)
        result_path = folder / RESULT
        if not result_path.exists():
            raise _died(child.returncode, watch, output)
        return _verdict(json.loads(result_path.read_text()), output)


def _watch(
    child: subprocess.Popen[bytes],
    reader: beacon.Reader,
    probe: StackProbe,
    limits: Limits,
    files: tuple[Any, ...],
    progress: bool,
    task: str = "check",
) -> _Watch:
    """Wait for the child, enforcing the limits (see the module docstring)."""
    watch = _Watch()
    bar = _Bar(limits) if progress else None
    previous = next_probe = watch.started
    # outside any activity the record's start time is stale: time that state from when we saw
    # it begin (the calls counter moving means the child is making progress)
    idle_key: tuple[str, float, int] | None = None
    idle_since = watch.started
    try:
        while True:
            try:
                child.wait(POLL)
                finished = True
            except subprocess.TimeoutExpired:
                finished = False
            now = time.monotonic()
            snap = watch.last = reader.read()
            label = _activity(snap)
            watch.profile[label] = watch.profile.get(label, 0.0) + now - previous
            previous = now
            if finished:
                return watch
            if snap.kind == beacon.USER and now - snap.started > limits.call_timeout:
                raise _call_limit(snap, limits)
            if not snap.label and (snap.label, snap.started, snap.calls) != idle_key:
                idle_key, idle_since = (snap.label, snap.started, snap.calls), now
            began = snap.started if snap.label else idle_since
            if (snap.kind != beacon.USER and (snap.label or probe.ready()) and now - began > limits.call_timeout
                    and now > next_probe):
                # no call into the program for a while: is the program's code running all the
                # same (the import, a draw, a __repr__ or __eq__ our code called)?
                next_probe = now + limits.call_timeout
                stuck = probe.stuck_in_user_code()
                if stuck is not None:
                    raise _stuck_limit(stuck, snap, limits)
            if now - watch.started > limits.timeout:
                raise _total_limit(watch, limits, task)
            if sum(os.fstat(f.fileno()).st_size for f in files) > MAX_OUTPUT:
                raise InputError(
                    f"the program printed more than {MAX_OUTPUT // 1_000_000} MB; stopped while in "
                    f"{_activity(snap)}"
                )
            if bar is not None and now - watch.started > PROGRESS_AFTER:
                bar.draw(snap, now - watch.started)
    finally:
        if bar is not None:
            bar.clear()


def _with_location(limit: InputError, probe: StackProbe) -> InputError:
    """``limit`` with the user's line the child was running when it was hit (nothing added if
    the stack dump does not say)."""
    if "the program was at" in limit.problem:
        return limit
    where = located(probe.dump())
    if where is None:
        return limit
    return InputError(f"{limit.problem}; the program was at {where}", limit.where)


def _stuck_limit(where: str, snap: beacon.Snapshot, limits: Limits) -> InputError:
    """The program's own code ran past the per-call limit in a :data:`beacon.MIXED` activity
    or while our code was in charge (a dunder our code called)."""
    verb, how = "did not return", ""
    if snap.kind == beacon.OURS or not snap.label:
        whose = "the program's code"
        how = f", called by streamproof's checker outside any callback while {snap.label or 'writing its report'}"
    elif snap.label.endswith(SYMBOLIC):
        whose, how = snap.label[: -len(SYMBOLIC)], ", run on symbolic values by --prove"
    elif snap.label.endswith(STRATEGY):
        whose, how = snap.label, f", drawing an event{_during(snap)}"
    else:
        whose, verb = snap.label, "did not finish"
    if where == UNKNOWN and snap.kind == beacon.OURS and snap.label:
        how = f" while streamproof's checker was {snap.label}"
    return InputError(
        f"{verb} within {limits.call_timeout:g} s (the per-call limit, --call-timeout){how}; "
        f"an infinite loop, or raise --call-timeout; the program was at {where}",
        whose,
    )


def _activity(snap: beacon.Snapshot) -> str:
    """What the child was doing, in words."""
    if snap.label.startswith(("checking ", "proving ")):
        return f"streamproof's checker ({snap.label})"
    return snap.label or STARTING


def _call_limit(snap: beacon.Snapshot, limits: Limits) -> InputError:
    return InputError(
        f"did not return within {limits.call_timeout:g} s (the per-call limit, --call-timeout){_during(snap)}; "
        "an infinite loop, or raise --call-timeout",
        _activity(snap),
    )


def _total_limit(watch: _Watch, limits: Limits, task: str = "check") -> InputError:
    total = sum(watch.profile.values()) or 1.0
    spent = ", ".join(
        f"{label} {seconds:.1f} s ({100 * seconds / total:.0f}%)"
        for label, seconds in sorted(watch.profile.items(), key=lambda item: -item[1])[:3]
    )
    now = f"; it was in {_activity(watch.last)}{_during(watch.last)}" if watch.last else ""
    return InputError(
        f"the {task} did not finish within {limits.timeout:g} s (the total limit, --timeout){now}; "
        f"time went to: {spent}; raise --timeout"
        + (" or lower --examples" if task == "check" else "")
    )


def _during(snap: beacon.Snapshot) -> str:
    if snap.label and 0 <= snap.condition < len(CONDITIONS) and not snap.label.startswith(("checking", "proving")):
        return f" while checking {CONDITIONS[snap.condition]}"
    return ""


def _died(code: int | None, watch: _Watch, output: Captured) -> Exception:
    """Why a child that wrote no result ended."""
    how = f"was killed by signal {-code}" if code is not None and code < 0 else f"exited with status {code}"
    snap = watch.last
    if code == -signal.SIGUSR1:  # only we send it, and the child handles it unless the program changed that
        return InputError(f"the program's process {how} (SIGUSR1: the program replaced the handler streamproof "
                          f"uses to see where it is){output.hint()}", snap.label if snap else None)
    if snap is not None and snap.kind != beacon.OURS:
        return InputError(f"the program's process {how} without a result{_during(snap)}{output.hint()}", snap.label)
    return InternalError(f"the checker's process {how} without a result{output.hint()}")


def _verdict(result: dict[str, Any], output: Captured) -> Verdict:
    kind = result.get("kind")
    if kind == "input_error":
        raise InputError(cut(one_line(f"{result['message']}{output.hint()}"), MAX_MESSAGE))
    if kind == "internal_error":
        raise InternalError(str(result["message"]), str(result.get("traceback", "")))
    return Verdict(bool(result["consistent"]), result["document"], list(result["lines"]), output)


def _child_env() -> dict[str, str]:
    """The environment of the child: ours, with streamproof's packages first on the path
    (``-P`` keeps the current directory, where a user file could shadow them, off it)."""
    root = str(Path(conformance.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    env["PYTHONIOENCODING"] = "utf-8:backslashreplace"
    return env


class _Bar:
    """The progress bar: conditions done of three, with the elapsed time against --timeout,
    the calls into user code and what runs now."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bar = ProgressBar("check-dgs", unit=None)
        self.drawn = False

    def draw(self, snap: beacon.Snapshot, elapsed: float) -> None:
        done = max(snap.condition, 0)
        condition = CONDITIONS[snap.condition] if 0 <= snap.condition < len(CONDITIONS) else "loading"
        self.bar.label = f"check-dgs {condition}"
        self.bar(done, len(CONDITIONS), detail=(
            f"{elapsed:.0f}/{self.limits.timeout:g} s, {snap.calls:,} calls, in {_activity(snap)}"
        ))
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.bar.clear()
