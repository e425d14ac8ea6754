"""Ending the sandbox: kill the child and every process the program started.

The child runs in a session of its own (``start_new_session``) and the program cannot leave
it (``setsid`` is refused, :mod:`streamproof.sandbox.confine`), so "everything the program
started" is "every process of that session", whatever its parent or process group is now (a
double fork, a daemon, ``setpgid``). :func:`end_session` kills the child's process group, then
scans ``/proc`` for the session's remaining processes and kills them, again until none is
left (a process forking while we kill is found in the next round).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

ROUNDS = 50
PAUSE = 0.01


def session_members(session: int) -> list[int]:
    """The live (not zombie) processes of ``session``, read from ``/proc`` (empty where there
    is no ``/proc``)."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            text = Path("/proc", entry, "stat").read_text()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        fields = text[text.rfind(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp session
        if len(fields) > 3 and fields[0] != "Z" and int(fields[3]) == session:
            members.append(int(entry))
    return members


def end_session(child: subprocess.Popen[bytes]) -> list[int]:
    """Kill ``child`` (a session leader) and every process of its session; reap the child.
    Returns the pids that were still alive after the last round (empty normally)."""
    session = child.pid
    try:
        os.killpg(session, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    left: list[int] = []
    for _ in range(ROUNDS):
        left = [pid for pid in session_members(session) if pid != os.getpid()]
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(PAUSE)
    child.wait()
    return left
