"""Checking, before a long run starts, that the directories it will write into can be written.

A run that ends by writing a report or saved cases (``conformance --report DIR``,
``--save-dir DIR``) must not find out only then that ``DIR`` is a file, ``/dev/null`` or cannot
be created: the run's result would be lost (the whole suite ran, then exit 3).
:func:`check_output_dir` answers before the run, with one :class:`~spec.errors.InputError`
naming the flag, and leaves nothing behind: a directory it had to create to find out is
removed again (the run creates it when it writes).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from spec.errors import InputError


def check_output_dir(path: str, flag: str) -> None:
    """InputError (at ``flag``) unless ``path`` is, or can be made, a directory this process
    can create files in (module docstring)."""
    if not path:
        raise InputError("expected a directory, got an empty path", flag)
    target = Path(path)
    if "\0" in path:
        raise InputError("a path cannot contain a NUL character", flag)
    if target.exists() and not target.is_dir():
        raise InputError(f"{path!r} exists and is not a directory", flag)
    created: list[Path] = []
    try:
        missing = [p for p in [target, *target.parents] if not p.exists()]
        for directory in reversed(missing):
            directory.mkdir()
            created.append(directory)
        handle, probe = tempfile.mkstemp(prefix=".streamproof-probe-", dir=target)
        os.close(handle)
        os.unlink(probe)
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise InputError(f"cannot write into {path!r} ({reason})", flag) from None
    finally:
        for directory in reversed(created):
            try:
                directory.rmdir()
            except OSError:
                pass
