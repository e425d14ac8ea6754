"""Whose fault is it: the user's program or streamproof?

An exception that escapes the check without being named by the guard
(:mod:`streamproof.sandbox.guard`) is classified here (:func:`classify`):

* an :class:`~spec.errors.InputError` anywhere inside it (in an exception group, as its cause or
  context: hypothesis wraps what a test raised in ``FlakyFailure``) is that bad input;
* raised while user code was on the stack - a frame in a file that is not streamproof's, the
  standard library's or an installed package's (:func:`is_user_file`) - it is the user's fault,
  located at the innermost such frame; so is a ``BaseException`` that is not an ``Exception``;
* a ``RecursionError``, a ``MemoryError`` or an integer too long to print in our code is the
  user's too: none of our code recurses deeply, allocates much or makes huge numbers unless the
  program's values are deeply nested or huge;
* anything else is a bug of ours.

:func:`located` reads a ``faulthandler`` stack dump of the child (taken when a time limit is
hit) and names the innermost user frame, so a limit message says where the time went even
when our code was running the user's ``__repr__`` or ``__eq__``.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sysconfig
import traceback
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from spec.dgs.program import describe_error
from spec.errors import InputError

_DUMP_FRAME = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+) in (?P<name>\S+)')


def classify(error: BaseException, target: str, label: str | None) -> dict[str, Any]:
    """The child's outcome for ``error`` (``input_error`` or ``internal_error``); ``label`` is
    the innermost activity it escaped from (a phase like ``checking C1``, or None)."""
    for inner in _chain(error, set()):
        if isinstance(inner, InputError):
            return {"kind": "input_error", "message": str(inner)}
    fault = _user_fault(error)
    if fault is not None or not isinstance(error, Exception):
        cause, where = fault if fault is not None else (error, "")
        if label is None or label.startswith(("checking ", "proving ")):  # outside any callback
            where = f"{where} while {label}" if label else where
            label = target
        return {"kind": "input_error", "message": f"{label}: raised {describe_error(cause)}{where}"}
    if isinstance(error, (RecursionError, MemoryError)) or _huge_integer(error):
        return {"kind": "input_error", "message": (
            f"{target}: the program's values are too deeply nested or too large for the checker "
            f"({describe_error(error)})"
        )}
    return {
        "kind": "internal_error",
        "message": describe_error(error),
        "traceback": "".join(traceback.format_exception(error)),
    }


def _huge_integer(error: BaseException) -> bool:
    """Python refused to print an integer with too many digits: one of the program's values."""
    return isinstance(error, ValueError) and "integer string conversion" in str(error)


def is_user_file(filename: str) -> bool:
    """True for a source file that is neither streamproof's, the standard library's nor an
    installed package's (``<string>`` and the like count as the user's)."""
    if filename.startswith("<frozen"):
        return False
    path = filename if filename.startswith("<") else str(Path(filename).resolve())
    return not any(path.startswith(root) for root in _our_roots())


def located(stack_dump: str) -> str | None:
    """``"prog.py:12 in update"`` for the innermost user frame of a ``faulthandler`` dump of the
    current thread (most recent call first), or None."""
    for name, line, function in frames(stack_dump):
        if is_user_file(name):
            return f"{Path(name).name}:{line} in {function}"
    return None


def frames(stack_dump: str) -> list[tuple[str, int, str]]:
    """``(file, line, function)`` of each frame of a ``faulthandler`` dump, most recent first
    (the first dump in the text)."""
    found: list[tuple[str, int, str]] = []
    for text in stack_dump.splitlines():
        match = _DUMP_FRAME.match(text)
        if match:
            found.append((match["file"], int(match["line"]), match["name"]))
        elif found and not text.strip():
            break
    return found


def _chain(error: BaseException, seen: set[int]) -> Iterator[BaseException]:
    """``error``, the members of its groups, its causes and contexts (each once)."""
    if id(error) in seen:
        return
    seen.add(id(error))
    yield error
    inner = list(error.exceptions) if isinstance(error, BaseExceptionGroup) else []
    for other in inner + [error.__cause__, error.__context__]:
        if other is not None:
            yield from _chain(other, seen)


def _user_fault(error: BaseException) -> tuple[BaseException, str] | None:
    """The first exception of ``error``'s chain raised with user code on the stack, and
    ``" at file:line"`` of its innermost user frame."""
    for inner in _chain(error, set()):
        frames = [f for f in traceback.extract_tb(inner.__traceback__) if is_user_file(f.filename)]
        if frames:
            return inner, f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}"
    return None


@lru_cache(maxsize=1)
def _our_roots() -> tuple[str, ...]:
    """The directories of streamproof's own packages (found without importing them: the
    sandboxed child must not import Spark's executor just to name its files), the standard
    library's and the installed packages'."""
    roots = []
    for name in ("spec", "reference", "proofs", "conformance", "spark_impl", "streamproof"):
        found = importlib.util.find_spec(name)
        if found is not None and found.submodule_search_locations:
            roots += list(found.submodule_search_locations)
    paths = sysconfig.get_paths()
    roots += [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    return tuple(str(Path(p).resolve()) + os.sep for p in roots)
