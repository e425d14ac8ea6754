"""Run ``streamproof`` in-process the way a terminal would, and check the CLI contract.

:func:`run` calls :func:`streamproof.main.main` with stdout / stderr replaced by strict
UTF-8 text streams (as a real terminal's are, so a lone surrogate that would crash a real
run crashes here too) and a wall-clock limit (SIGALRM; a hang is reported, never waited
for). :func:`assert_contract` states docs/cli.md's promise: exit 0, 1 or 2; on exit 2
exactly one stderr line; with ``--json`` on exit 0 / 1, stdout is one JSON document.
"""

from __future__ import annotations

import io
import json
import signal
import sys
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Iterator, Sequence

from contextlib import contextmanager

from streamproof.main import main


class Hang(BaseException):
    """The command did not finish within its time limit."""


@dataclass(frozen=True)
class Outcome:
    """What one command run did."""

    argv: tuple[str, ...]
    code: int
    out: str
    err: str
    seconds_limit: float

    def describe(self) -> str:
        """A readable summary for assertion messages."""
        return (f"streamproof {' '.join(map(ascii, self.argv))} -> exit {self.code}\n"
                f"stderr: {self.err[:2000]!r}\nstdout: {self.out[:500]!r}")


def _stream() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n")


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8")


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    def expired(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


CODES: list[int] = []
"""Every exit code seen (for measuring what a fuzz run reached)."""


def run(argv: Sequence[str], seconds: float = 20.0) -> Outcome:
    """Run ``streamproof argv`` in this process (module docstring)."""
    out, err = _stream(), _stream()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        with _time_limit(seconds):
            try:
                code = main(list(argv))
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else 2
    finally:
        sys.stdout, sys.stderr = saved
    CODES.append(code)
    return Outcome(tuple(argv), code, _text(out), _text(err), seconds)


def assert_contract(outcome: Outcome) -> None:
    """docs/cli.md's promise (module docstring)."""
    assert outcome.code in (0, 1, 2), outcome.describe()
    if outcome.code == 2:
        assert len(outcome.err.splitlines()) == 1, outcome.describe()
        assert outcome.err.endswith("\n"), outcome.describe()
    if "--json" in outcome.argv and outcome.code in (0, 1):
        try:
            json.loads(outcome.out)
        except ValueError as error:  # pragma: no cover - the assertion reports it
            raise AssertionError(f"--json output is not JSON ({error})\n"
                                 + outcome.describe()) from None


def export_vectors(root: Path) -> Path:
    """A small vector directory (one Fries and one O+ vector) written into ``root``."""
    outcome = run(["vectors", "export", str(root), "--cases", "1", "--oplus-cases", "1"], 120)
    assert outcome.code == 0, outcome.describe()
    return root


def descendants(root: int) -> set[int]:
    """The live (not zombie) processes below ``root``, from ``/proc`` (parent links)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            children.setdefault(int(fields[2]), []).append(int(entry.name))
    found: set[int] = set()
    frontier = [root]
    while frontier:
        for child in children.get(frontier.pop(), []):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


@contextmanager
def leaves_nothing(temp: Path) -> Iterator[None]:
    """Runs the block with ``tempfile``'s directory set to the empty ``temp``; then asserts
    that no process started inside is still running and ``temp`` is empty again (docs/cli.md:
    nothing left running or half-written)."""
    before = descendants(os.getpid())
    saved, tempfile.tempdir = tempfile.tempdir, str(temp)
    try:
        yield
    finally:
        tempfile.tempdir = saved
    deadline = time.monotonic() + 2
    while (left := descendants(os.getpid()) - before) and time.monotonic() < deadline:
        time.sleep(0.05)  # a process killed a moment ago may still be exiting
    assert not left, f"processes left running: {sorted(left)}"
    assert not list(temp.iterdir()), f"left behind: {sorted(p.name for p in temp.iterdir())}"
