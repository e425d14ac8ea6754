"""What the user's code printed in the sandbox, for the report.

The child's stdout and stderr go to files; we keep the last :data:`KEEP` characters of each
(decoded as UTF-8, undecodable bytes replaced), so a program that prints a lot cannot flood
the report. ``--json`` gets them as ``"output": {"stdout", "stderr", "truncated"}``; the
plain-words report lists them after the verdict; an error line gets a short hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec.errors import cut, one_line

KEEP = 4000
SHOWN_LINES = 20


@dataclass(frozen=True)
class Captured:
    """The tails of the user's stdout and stderr; ``truncated`` if either was cut."""

    stdout: str
    stderr: str
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        """``{"stdout", "stderr", "truncated"}``."""
        return {"stdout": self.stdout, "stderr": self.stderr, "truncated": self.truncated}

    def lines(self) -> list[str]:
        """The output in plain words, after the verdict (nothing if it printed nothing)."""
        out: list[str] = []
        for name, text in (("stdout", self.stdout), ("stderr", self.stderr)):
            if text:
                shown = text.splitlines()[-SHOWN_LINES:]
                cut = " (last lines)" if self.truncated or len(text.splitlines()) > SHOWN_LINES else ""
                out.append(f"the program printed on {name}{cut}:")
                out += [f"  | {one_line(line)}" for line in shown]
        return out

    def hint(self) -> str:
        """A short suffix for an error line: the last line the program printed, if any."""
        for name, text in (("stderr", self.stderr), ("stdout", self.stdout)):
            last = [line for line in text.splitlines() if line.strip()]
            if last:
                return f" (last line the program printed on {name}: {cut(one_line(last[-1].strip()), 160)})"
        return ""


def read_captured(stdout: Path, stderr: Path) -> Captured:
    """The tails of the two capture files."""
    out, cut_out = _tail(stdout)
    err, cut_err = _tail(stderr)
    return Captured(out, err, cut_out or cut_err)


def _tail(path: Path) -> tuple[str, bool]:
    with open(path, "rb") as handle:
        size = handle.seek(0, 2)
        handle.seek(max(0, size - 4 * KEEP))
        raw = handle.read()
    text = raw.decode("utf-8", "replace")
    return (text[-KEEP:], size > len(raw) or len(text) > KEEP)
