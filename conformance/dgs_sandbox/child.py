"""The sandboxed process of ``check-dgs``: ``python -P -m conformance.dgs_sandbox.child DIR``.

It reads ``DIR/request.json``, loads and checks the user's program with every call into user
code marked and guarded (:mod:`conformance.dgs_sandbox.guard`), and writes its verdict to
``DIR/result.json`` (atomically) as one of

* ``{"kind": "report", "consistent", "document", "lines"}`` - the check ran;
* ``{"kind": "input_error", "message"}`` - bad input, the user program's fault included;
* ``{"kind": "internal_error", "message", "traceback"}`` - a bug in streamproof.

The user's stdout and stderr are this process's, which the parent captures into files: a
``print()`` in the user's code never reaches the CLI's stdout. The process dies with its
parent (``PR_SET_PDEATHSIG``), its address space is capped (``--memory-limit``), and it ends
with ``os._exit``, so neither the user's ``atexit``
handlers nor their threads can keep it alive.

An exception that escapes the check without being named by the guard is classified by its
traceback: raised while user code was on the stack (a frame in a file that is not streamproof,
the standard library or an installed package), or a ``BaseException`` that is not an
``Exception``, is the user's fault; so is a ``RecursionError`` or ``MemoryError`` in our code
(none of it recurses deeply or allocates much unless the user's values are deeply nested or
huge); anything else is ours.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import Any

from conformance.dgs_sandbox.beacon import Writer
from conformance.dgs_sandbox.check import Request, check_program
from conformance.dgs_sandbox.guard import SandboxMonitor, UserAbort
from spec.dgs.program import describe_error
from spec.errors import InputError
from spec.jsonio import write_json_atomic

REQUEST = "request.json"
RESULT = "result.json"
BEACON = "beacon"
STDOUT = "stdout"
STDERR = "stderr"
_INT_DIGITS = 4000  # below Python's int-to-str limit (4300 digits)


def main(workdir: str) -> None:
    """Run the request in ``workdir`` and write its result there; never returns."""
    _die_with_parent()
    folder = Path(workdir)
    request = Request.from_json(json.loads((folder / REQUEST).read_text()))
    _limit_memory(request.memory_mb)
    monitor = SandboxMonitor(Writer(str(folder / BEACON)))
    outcome = run(request, monitor)
    write_json_atomic(folder / RESULT, _bounded(outcome), indent=None)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - the user may have replaced or closed them
            pass
    os._exit(0)


def run(request: Request, monitor: SandboxMonitor) -> dict[str, Any]:
    """The outcome of ``request`` as a JSON-able dict (see the module docstring)."""
    try:
        return check_program(request, monitor)
    except UserAbort as abort:
        return {"kind": "input_error", "message": str(abort.error)}
    except InputError as error:
        return {"kind": "input_error", "message": str(error)}
    except BaseException as error:  # noqa: BLE001 - classified below
        fault = _user_fault(error, set())
        if fault is not None or not isinstance(error, Exception):
            cause, where = fault if fault is not None else (error, "")
            label = monitor.where_raised(error) or ""
            if label.startswith(("checking ", "proving ")):  # outside any callback: say when
                label, where = request.target, f"{where} while {label}"
            return {"kind": "input_error", "message": f"{label or request.target}: raised {describe_error(cause)}{where}"}
        if isinstance(error, (RecursionError, MemoryError)):  # our code is not deeply recursive
            return {"kind": "input_error", "message": (
                f"{request.target}: the program's values are too deeply nested or too large for the "
                f"checker ({describe_error(error)})"
            )}
        return {
            "kind": "internal_error",
            "message": describe_error(error),
            "traceback": "".join(traceback.format_exception(error)),
        }


def _user_fault(error: BaseException, seen: set[int]) -> tuple[BaseException, str] | None:
    """The exception raised in user code behind ``error`` (itself, one in its group, its cause
    or context) and ``" at file:line"`` of the innermost user frame, or None."""
    if id(error) in seen:
        return None
    seen.add(id(error))
    ours = [str(Path(p).resolve()) + os.sep for p in _our_roots()]
    found = None
    for frame in traceback.extract_tb(error.__traceback__):
        if frame.filename.startswith("<frozen"):
            continue
        path = frame.filename if frame.filename.startswith("<") else str(Path(frame.filename).resolve())
        if not any(path.startswith(root) for root in ours):
            found = f" at {Path(frame.filename).name}:{frame.lineno}"
    if found is not None:
        return error, found
    inner = list(error.exceptions) if isinstance(error, BaseExceptionGroup) else []
    for other in inner + [error.__cause__, error.__context__]:
        if other is not None:
            fault = _user_fault(other, seen)
            if fault is not None:
                return fault
    return None


def _our_roots() -> list[str]:
    import conformance
    import proofs
    import reference
    import spec

    roots = [os.path.dirname(m.__file__ or "") for m in (spec, reference, proofs, conformance)]
    paths = sysconfig.get_paths()
    return roots + [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]


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


def _limit_memory(megabytes: int) -> None:
    """Cap this process's address space: a program that allocates without end gets a
    ``MemoryError`` (its fault, exit 2) instead of exhausting the machine."""
    if megabytes > 0:
        import resource

        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _die_with_parent() -> None:
    """Ask Linux to kill this process when the parent dies (no orphaned infinite loop)."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the parent's kill still applies
        pass


if __name__ == "__main__":
    main(sys.argv[1])
