"""Asking the sandboxed child where it is: a ``faulthandler`` stack dump on ``SIGUSR1``.

The child registers ``faulthandler`` for ``SIGUSR1`` with its stack file
(:mod:`streamproof.sandbox.child`); the dump is written by the C signal handler, so it
comes even while the child is stuck in a C loop. Successive dumps are appended to the file;
:meth:`StackProbe.dump` returns the new one.
"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from streamproof.sandbox.blame import frames, is_user_file

WAIT = 1.0
SETTLE = 0.05
UNKNOWN = ("an unknown place (the program replaced or ignored SIGUSR1, the signal streamproof uses to "
           "see where it is)")
"""What :meth:`StackProbe.stuck_in_user_code` says when the child gives no stack dump."""


class StackProbe:
    """Stack dumps of ``child``, written to ``path``."""

    def __init__(self, child: subprocess.Popen[bytes], path: Path) -> None:
        self.child = child
        self.path = path
        self.read = 0

    def dump(self) -> str:
        """The child's current stack (most recent call first), or ``""`` if it gave none
        within :data:`WAIT` seconds (it ended, or the program replaced the handler)."""
        try:
            self.child.send_signal(signal.SIGUSR1)
        except ProcessLookupError:
            return ""
        deadline = time.monotonic() + WAIT
        size = self.read
        while time.monotonic() < deadline:
            time.sleep(SETTLE)
            now = self.path.stat().st_size if self.path.exists() else 0
            if now > self.read and now == size:  # it grew, and stopped growing
                break
            size = now
        if not self.path.exists():  # stopped before it set up the dump (a limit hit at start-up)
            return ""
        with open(self.path, "rb") as handle:
            handle.seek(self.read)
            text = handle.read().decode("utf-8", "replace")
        self.read += len(text.encode("utf-8", "replace"))
        return text

    def ready(self) -> bool:
        """Whether the child has set up its stack dumps (before that, ``SIGUSR1`` would kill
        it)."""
        return self.path.exists()

    def stuck_in_user_code(self) -> str | None:
        """``file:line in function`` when two dumps a moment apart both have the user's code
        on top of the stack (running, not just on the stack below our code); :data:`UNKNOWN`
        when the child, alive and set up, gives no dump at all; else None."""
        text = self.dump()
        if not text and self.ready() and self.child.poll() is None:
            return UNKNOWN
        first = frames(text)
        if not first or not is_user_file(first[0][0]):
            return None
        time.sleep(0.2)
        second = frames(self.dump())
        if not second or not is_user_file(second[0][0]):
            return None
        name, line, function = second[0]
        return f"{Path(name).name}:{line} in {function}"
