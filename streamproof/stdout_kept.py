"""Keep the CLI's stdout for the CLI while a user's code runs in this process.

:func:`stdout_kept` moves file descriptor 1 onto stderr for the duration of a ``--job`` run and
gives ``sys.stdout`` a stream on a private duplicate of the real stdout. A user's function that
writes to fd 1 directly (``os.write(1, ...)``, a C extension, a child process or the Spark JVM
started during the run, which inherit fd 1) then writes to stderr, never into the summary or
the one JSON object of ``--json``; the CLI's own prints reach the real stdout. When
``sys.stdout`` is not fd 1 (a test's captured stream) only fd 1 moves.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from typing import Iterator


@contextlib.contextmanager
def stdout_kept() -> Iterator[None]:
    """Within the block fd 1 is stderr and ``sys.stdout`` the real stdout (module docstring)."""
    try:
        sys.stdout.flush()
        ours = sys.stdout.fileno() == 1
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        ours = False
    saved = os.dup(1)
    previous = sys.stdout
    try:
        os.dup2(2, 1)
        if ours:
            sys.stdout = open(saved, "w", encoding=previous.encoding, errors=previous.errors, closefd=False,
                              buffering=1 if previous.line_buffering else -1)
        yield
    finally:
        if ours:
            try:
                sys.stdout.flush()
            finally:
                sys.stdout = previous
        os.dup2(saved, 1)
        os.close(saved)
