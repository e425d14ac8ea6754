"""Load a user's ``--job`` first in a child process, under a time limit (docs/conformance.md,
"Your own job", *What runs where*).

:func:`probe_job` runs :mod:`streamproof.job_probe_child` in a new session with its stdout and
stderr sent to files of a private temporary directory, and waits at most ``load_timeout``
seconds. Everything that goes wrong while the job file is imported, ``NAME()`` is called and
its pieces are checked is then the *user's* fault, reported as one :class:`InputError` (exit 2)
naming the job and, where known, the user's line:

* an exception of any kind (``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``, a user
  ``BaseException``) or a malformed result;
* a hang (no verdict within ``load_timeout``; the stack dumped just before the kill names the
  line);
* ``os._exit``, a signal (the child's own ``SIGTERM``...), a crash: the child ended without a
  verdict;
* a write to file descriptor 1 (the CLI's stdout, where ``--json`` goes).

Only a job that loads cleanly there is then loaded in the CLI's process. Whatever the child
started is killed with its process group; the temporary directory is removed in every case,
also when the CLI is interrupted while waiting.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import Iterator

from spec.errors import InputError, cut, one_line

from streamproof.sandbox.blame import frames, is_user_file
from streamproof.sandbox.session import end_session

#: Seconds between the stack dump of a hung load and its kill.
DUMP_GRACE = 1.0
#: Bytes of the child's stdout / stderr shown in a message.
SHOWN = 200


def probe_job(ref: str, load_timeout: float) -> None:
    """Return when ``ref`` loads cleanly in a child within ``load_timeout`` s, else raise the
    user's fault as an InputError (module docstring)."""
    with _unwinding_on_termination():
        workdir = tempfile.mkdtemp(prefix="streamproof-job-")
        try:
            _probe(ref, load_timeout, Path(workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


@contextlib.contextmanager
def _unwinding_on_termination() -> Iterator[None]:
    """While loading, a SIGTERM / SIGHUP whose handler is still the default one (the process
    would die without running ``finally``) raises ``SystemExit(128 + N)`` instead, so the child
    is killed and the temporary directory removed before the CLI exits with the usual status."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    replaced = {}
    for number in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(number) == signal.SIG_DFL:
            replaced[number] = signal.signal(number, _exit_for)
    try:
        yield
    finally:
        for number, previous in replaced.items():
            signal.signal(number, previous)


def _exit_for(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _probe(ref: str, load_timeout: float, workdir: Path) -> None:
    result, stack, out, err = (workdir / name for name in ("result.json", "stack.txt", "stdout", "stderr"))
    command = [sys.executable, "-m", "streamproof.job_probe_child", str(result), str(stack), ref]
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                 start_new_session=True, env=_child_env())
    try:
        try:
            code: int | None = child.wait(timeout=load_timeout)
        except subprocess.TimeoutExpired:
            os.kill(child.pid, signal.SIGUSR1)  # the child dumps its stack, then ends
            try:
                child.wait(timeout=DUMP_GRACE)
            except subprocess.TimeoutExpired:
                pass
            code = None
    finally:
        end_session(child)
    where = _where(stack)
    if code is None:
        raise InputError(f"loading the job did not finish within {load_timeout:g} s (--load-timeout; a hang at "
                         f"import or in NAME()){where}", ref)
    verdict = _verdict(result)
    if verdict is None:
        how = f"was killed by signal {_signal_name(-code)}" if code < 0 else f"exited with status {code}"
        raise InputError(f"the job's process {how} while loading (os._exit, a signal or a crash in the "
                         f"job's code){where}{_shown(err)}", ref)
    if "error" in verdict:
        raise InputError(str(verdict["error"]), str(verdict.get("where") or ref))
    if out.stat().st_size:
        raise InputError(f"the job wrote to file descriptor 1 (the CLI's stdout) while loading: "
                         f"{_shown(out, bare=True)}; print with print() (captured) or to stderr", ref)


def _verdict(path: Path) -> dict[str, object] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _where(stack: Path) -> str:
    """``" (at FILE:LINE in FUNCTION)"`` of the innermost user frame the child dumped, else ''."""
    try:
        text = stack.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    for name, line, function in frames(text):
        if is_user_file(name) and "streamproof" not in Path(name).parts[-2:-1]:
            return f" (at {Path(name).name}:{line} in {function})"
    for text_line in reversed(text.splitlines()):  # a traceback.print_stack of os._exit
        stripped = text_line.strip()
        if stripped.startswith('File "'):
            name = stripped.split('"')[1]
            if is_user_file(name) and not name.endswith("job_probe_child.py"):
                number = stripped.split("line ")[-1].split(",")[0]
                return f" (at {Path(name).name}:{number})"
    return ""


def _shown(path: Path, bare: bool = False) -> str:
    try:
        text = path.read_bytes()[-SHOWN:].decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    if not text:
        return ""
    shown = repr(cut(one_line(text), SHOWN))
    return shown if bare else f"; it printed {shown}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _child_env() -> dict[str, str]:
    """Our environment with our import path (the child imports what the CLI imports)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["PYTHONIOENCODING"] = "utf-8:backslashreplace"
    return env
