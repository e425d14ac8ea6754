"""The child of :mod:`streamproof.job_probe`: load and validate a user's ``--job`` once, alone.

``python -m streamproof.job_probe_child RESULT STACK FILE.py:NAME`` imports the job file, calls
``NAME`` and checks what it returns (:func:`conformance.userjob.load.load_job`: the source's
count, the requests, the options), then writes ``{"ok": true}`` - or ``{"error": ..., "where":
...}`` naming the user's line - to RESULT. Whatever the user's code does on the way
(``sys.exit``, ``KeyboardInterrupt``, ``os._exit``, a signal, a write to fd 1, an endless loop)
happens here, where the parent watches it with a time limit, never in the CLI's own process.
Where the user's code was when a signal or ``os._exit`` ended the process goes to STACK (a
``faulthandler`` dump), so the parent can name the line.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from spec.errors import InputError, cut, one_line

from conformance.userjob.load import load_job
from streamproof.sandbox.blame import is_user_file

_OURS = str(Path(__file__).resolve().parent) + os.sep

#: Signals whose arrival dumps the stack to STACK before the default action ends the process.
DUMPED = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2,
          signal.SIGALRM)


def user_line(error: BaseException) -> str:
    """``" at FILE:LINE"`` of the innermost user frame in ``error``'s traceback or its context
    chain (InputErrors are raised ``from None`` over the user's exception), else ''."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        frames = [f for f in traceback.extract_tb(current.__traceback__)
                  if is_user_file(f.filename) and not f.filename.startswith(_OURS)]
        if frames:
            return f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}"
        current = current.__cause__ or current.__context__
    return ""


def _write(path: str, document: dict[str, Any]) -> None:
    temporary = f"{path}.part"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.replace(temporary, path)


def _exit_recorded(stack: Any) -> Any:
    real = os._exit

    def recorded(status: int) -> NoReturn:
        traceback.print_stack(file=stack)
        stack.flush()
        real(status)

    return recorded


def _die_with_parent() -> None:
    """Ask Linux to kill this process when the CLI dies (no orphaned endless loop)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the parent's kill of the group still applies
        pass


def main(result: str, stack_path: str, ref: str) -> None:
    """Load ``ref`` and write the verdict (module docstring)."""
    _die_with_parent()
    stack = open(stack_path, "w", encoding="utf-8")
    faulthandler.enable(file=stack, all_threads=False)  # SIGSEGV, SIGABRT... in an extension the job uses
    for number in DUMPED:
        faulthandler.register(number, file=stack, all_threads=False, chain=True)
    setattr(os, "_exit", _exit_recorded(stack))
    try:
        load_job(ref)
    except InputError as error:
        _write(result, {"error": cut(one_line(error.problem), 1500) + user_line(error), "where": error.where})
        return
    except BaseException as error:  # noqa: BLE001 - the user's code, whatever it raised
        try:
            said = str(error)
            text = cut(one_line(f"{type(error).__name__}: {said}" if said else type(error).__name__), 600)
        except Exception:  # noqa: BLE001 - its str() raises too
            text = type(error).__name__
        _write(result, {"error": f"loading the job raised {text}{user_line(error)}", "where": ref})
        return
    _write(result, {"ok": True})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
