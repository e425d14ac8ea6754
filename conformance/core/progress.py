"""Progress of long suite runs: a bar on stderr (:class:`ProgressBar`) and a counter of cases
done across checks (:class:`Ticker`).

On a terminal the bar redraws in place (carriage return); when stderr is a file or a pipe it
prints one line per reported step instead, so CI logs stay readable. Never writes to stdout,
which belongs to the summary (and to ``--json``).
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO


class ProgressBar:
    """``bar(done, total)`` draws ``label [#####.....] done/total  rate``."""

    def __init__(
        self, label: str, stream: TextIO | None = None, width: int = 30, unit: str | None = "cases"
    ) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.unit = unit  # None: no rate shown
        self.start = time.monotonic()
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown = 0

    def __call__(self, done: int, total: int, detail: str = "") -> None:
        filled = self.width * done // total if total else self.width
        elapsed = time.monotonic() - self.start
        rate = f"{done / elapsed:.1f} {self.unit}/s" if self.unit and elapsed > 0 and done else ""
        line = " ".join(p for p in (f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}", rate, detail) if p)
        if self.tty:
            self.stream.write("\r" + line.ljust(self._shown) + ("\n" if done >= total else ""))
            self._shown = 0 if done >= total else len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def clear(self) -> None:
        """Erase a bar drawn in place (on a terminal), so the next output starts clean."""
        if self.tty and self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self.stream.flush()
            self._shown = 0


class Ticker:
    """Counts completed cases across several checks and reports ``progress(done, total)``
    after each step (nothing when ``progress`` is None)."""

    def __init__(self, progress: Callable[[int, int], None] | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self, n: int) -> None:
        """``n`` more cases done."""
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)
