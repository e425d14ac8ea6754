"""A progress bar on stderr for long suite runs.

On a terminal the bar redraws in place (carriage return); when stderr is a file or a pipe it
prints one line per reported step instead, so CI logs stay readable. Never writes to stdout,
which belongs to the summary (and to ``--json``).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """``bar(done, total)`` draws ``label [#####.....] done/total  rate``."""

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.start = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        filled = self.width * done // total if total else self.width
        elapsed = time.monotonic() - self.start
        rate = f"{done / elapsed:.1f} cases/s" if elapsed > 0 and done else ""
        line = f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} {rate}"
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done >= total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
