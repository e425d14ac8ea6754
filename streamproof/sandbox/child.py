"""The sandboxed process of ``check-dgs``: ``python -P -m streamproof.sandbox.child DIR``.

It reads ``DIR/request.json``, loads and checks the user's program with every call into user
code marked and guarded (:mod:`streamproof.sandbox.guard`), and writes its verdict to
``DIR/result.json`` (atomically) as one of

* ``{"kind": "report", "consistent", "document", "lines"}`` - the check ran;
* ``{"kind": "input_error", "message"}`` - bad input, the user program's fault included;
* ``{"kind": "internal_error", "message", "traceback"}`` - a bug in streamproof.

The user's stdout and stderr are this process's, which the parent captures into files: a
``print()`` in the user's code never reaches the CLI's stdout. The process dies with its
parent (``PR_SET_PDEATHSIG``), may neither start a new session nor signal its parent
(:mod:`streamproof.sandbox.confine`), its address space is capped (``--memory-limit``, or the
hard ``RLIMIT_AS`` streamproof itself runs under when that is lower), and it ends
with ``os._exit``, so neither the user's ``atexit``
handlers nor their threads can keep it alive.

An exception that escapes the check without being named by the guard is classified by
:mod:`streamproof.sandbox.blame`. On ``SIGUSR1`` (sent by the parent when a time limit is
hit) ``faulthandler`` writes the current stack to ``DIR/stack``, so the parent can say where
the time went.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import resource
import signal
import sys
from pathlib import Path
from typing import Any

from streamproof.sandbox.beacon import Writer
from streamproof.sandbox.blame import classify
from streamproof.sandbox.check import Request, check_program
from streamproof.sandbox.confine import confine
from streamproof.sandbox.guard import SandboxMonitor, UserAbort
from streamproof.sandbox.plan_task import TASK, PlanRequest, plan_program
from spec.errors import InputError
from spec.jsonio import write_json_atomic

REQUEST = "request.json"
RESULT = "result.json"
BEACON = "beacon"
STDOUT = "stdout"
STDERR = "stderr"
STACK = "stack"
_INT_DIGITS = 4000  # in the result: below Python's default int-to-str limit (4300 digits)
INT_DIGITS = 100_000  # while checking: the program's numbers may be this long


def main(workdir: str) -> None:
    """Run the request in ``workdir`` and write its result there; never returns."""
    _die_with_parent()
    confine()  # no new session, no signal to the parent (where the kernel allows the filter)
    leader = os.getpid()
    folder = Path(workdir)
    data = json.loads((folder / REQUEST).read_text())
    request = PlanRequest.from_json(data) if data.get("task") == TASK else Request.from_json(data)
    _limit_memory(request.memory_mb)
    sys.set_int_max_str_digits(INT_DIGITS)  # the program's numbers may be long; printing them is ours
    _dump_stack_on_request(folder / STACK)
    monitor = SandboxMonitor(Writer(str(folder / BEACON)))
    outcome = run(request, monitor)
    if os.getpid() != leader:  # a copy the program forked (os.fork) got here: only we report
        os._exit(0)
    write_json_atomic(folder / RESULT, _bounded(outcome), indent=None)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - the user may have replaced or closed them
            pass
    os._exit(0)


def run(request: Request | PlanRequest, monitor: SandboxMonitor) -> dict[str, Any]:
    """The outcome of ``request`` as a JSON-able dict (see the module docstring); a request
    with ``"task": "plan"`` is ``dgs-plan``'s (:mod:`streamproof.sandbox.plan_task`)."""
    try:
        if isinstance(request, PlanRequest):
            return plan_program(request, monitor)
        return check_program(request, monitor)
    except UserAbort as abort:
        return {"kind": "input_error", "message": str(abort.error)}
    except InputError as error:
        return {"kind": "input_error", "message": str(error)}
    except BaseException as error:  # noqa: BLE001 - classified by blame
        return classify(error, request.target, monitor.where_raised(error))


def _bounded(value: Any) -> Any:
    """``value`` with integers too long for ``json`` (Python's int-to-str limit) replaced by a
    description, so a user state holding a huge number cannot break the result."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value.bit_length() > _INT_DIGITS * 3:
        return f"<an integer of about {int(value.bit_length() * 0.30103)} digits>"
    if isinstance(value, list):
        return [_bounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _bounded(v) for k, v in value.items()}
    return value


def _dump_stack_on_request(path: Path) -> None:
    """On ``SIGUSR1``, write the current stack to ``path`` (done inside the signal handler in C,
    so it works even while the main thread is stuck in a C loop)."""
    staging = path.with_name(path.name + ".new")
    faulthandler.register(signal.SIGUSR1, file=open(staging, "w"), all_threads=False)
    os.rename(staging, path)  # the parent sends SIGUSR1 only once the file exists: registered by then


def _limit_memory(megabytes: int) -> None:
    """Cap this process's address space: a program that allocates without end gets a
    ``MemoryError`` (its fault, exit 2) instead of exhausting the machine."""
    if megabytes > 0:
        limit = megabytes * 1024 * 1024
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:  # a lower hard limit (ulimit -v) stays, and wins
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _die_with_parent() -> None:
    """Ask Linux to kill this process when the parent dies (no orphaned infinite loop)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the parent's kill still applies
        pass


if __name__ == "__main__":
    main(sys.argv[1])
