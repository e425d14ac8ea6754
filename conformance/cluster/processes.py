"""Process bookkeeping for the local cluster: start in a new process group, find descendants,
kill whole groups, and say what is still alive.

Why all of this and not ``Popen.terminate``: ``spark-class`` execs a JVM that forks more JVMs
(a worker forks one executor per application) and every executor forks a PySpark daemon that
puts itself in a process group of its own (``os.setpgid(0, 0)`` in ``pyspark/daemon.py``),
which forks the Python workers. Killing one pid, or even one process group, can leave the rest
running. :func:`kill_tree` therefore snapshots every descendant (through ``/proc``) first, then
signals every process group it found, then every pid, and waits until all are gone.

Children also get ``PR_SET_PDEATHSIG`` = SIGKILL (Linux): if the Python process that started
them dies without running any clean-up (``kill -9``), the kernel kills the direct children;
their own children notice their parent is gone (executors watch their worker, PySpark daemons
read EOF on stdin) and exit.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from types import FrameType
from typing import IO, Iterable, Iterator, Mapping, Sequence

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGKILL when the process that started it dies (Linux)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except OSError:  # not Linux / no libc: the context manager and atexit still clean up
        pass


def start_group(command: Sequence[str], env: Mapping[str, str], log: IO[bytes],
                cwd: str | None = None) -> "subprocess.Popen[bytes]":
    """Start ``command`` as the leader of a new session (so of a new process group), output to
    ``log``, killed by the kernel if this process dies."""
    return subprocess.Popen(list(command), env=dict(env), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True,
                            preexec_fn=_die_with_parent)


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, process group) of ``pid``, None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()
    if not fields or fields[0] == "Z":
        return None
    return int(fields[1]), int(fields[2])


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    return _stat(pid) is not None


def command_line(pid: int) -> str:
    """The command line of ``pid`` (arguments joined by spaces), "" when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def parent_of(pid: int) -> int | None:
    """The parent pid of ``pid``, None when it is gone."""
    found = _stat(pid)
    return None if found is None else found[0]


def descendants(roots: Iterable[int]) -> set[int]:
    """Every live process below ``roots`` (not the roots themselves), from one scan of /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                children.setdefault(found[0], []).append(int(entry))
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def kill_tree(roots: Iterable[int], grace_s: float = 10.0) -> set[int]:
    """SIGTERM every process group and process in the trees below (and including) ``roots``,
    SIGKILL what is left after ``grace_s``; return the pids still alive after that (normally
    none). Processes that appear during the grace period under a root are killed too."""
    roots = [pid for pid in roots if alive(pid)]
    known = set(roots) | descendants(roots)
    _signal_all(known, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        known |= descendants(known)
        if not any(alive(pid) for pid in known):
            return set()
        time.sleep(0.2)
    for _ in range(3):
        known |= descendants(known)
        _signal_all(known, signal.SIGKILL)
        time.sleep(0.5)
        if not any(alive(pid) for pid in known):
            return set()
    return {pid for pid in known if alive(pid)}


def kill_now(roots: Iterable[int]) -> set[int]:
    """``kill -9`` of the trees below (and including) ``roots``, no grace period (the nemesis'
    driver crash); return the pids that were signalled."""
    known = {pid for pid in roots if alive(pid)}
    known |= descendants(known)
    _signal_all(known, signal.SIGKILL)
    return known


def _signal_all(pids: Iterable[int], sig: signal.Signals) -> None:
    groups = set()
    for pid in pids:
        found = _stat(pid)
        if found is not None:
            groups.add(found[1])
    for group in groups:
        if group > 1 and group != os.getpgrp():
            try:
                os.killpg(group, sig)
            except OSError:
                pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def reap(process: "subprocess.Popen[bytes]") -> None:
    """Collect the exit status of a killed child (so it is not left a zombie)."""
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def matching(marker: str) -> list[int]:
    """Live pids whose command line contains ``marker`` (e.g. the cluster's unique directory)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid() and marker in command_line(int(entry)) \
                and alive(int(entry)):
            found.append(int(entry))
    return sorted(found)


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """Within the block SIGTERM raises ``SystemExit(143)`` (like Ctrl-C raises
    KeyboardInterrupt), so the ``finally`` that stops a cluster runs on both."""
    previous = signal.signal(signal.SIGTERM, _raise_exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
