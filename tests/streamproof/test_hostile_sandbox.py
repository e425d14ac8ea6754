"""The ``check-dgs`` / ``dgs-plan`` sandbox against a program that fights it (docs/cli.md
"streamproof check-dgs": the per-call limit covers every piece of the program's code, the
import and a ``__repr__`` included; nothing of the program is left running; docs/dgs.md "The
sandbox": the program may not start a new session nor signal streamproof; the CLI's own
``RLIMIT_AS`` is respected; docs/cli.md: ``SIGTERM`` / ``SIGHUP`` to the CLI stop the run with
one line, exit 128 + N, nothing left behind)."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.dgs_helpers import EXAMPLES, simple_program
from support.hostile_cli import assert_contract, run

STREAMS = str(EXAMPLES / "streams" / "key_counter.json")
TWO_STREAMS = '{"streams": {"s0": [{"ts": 1, "event": "a"}, {"ts": 3, "heartbeat": true}], ' \
    '"s1": [{"ts": 2, "event": "b"}, {"ts": 3, "heartbeat": true}]}}'


def _program(tmp_path: Path, prelude: str, name: str = "prog.py") -> str:
    """The simple program with ``prelude`` run at import; the target ``FILE:P``."""
    path = tmp_path / name
    path.write_text(prelude + "\n" + simple_program())
    return f"{path}:P"


def _streams(tmp_path: Path) -> str:
    path = tmp_path / "streams.json"
    path.write_text(TWO_STREAMS)
    return str(path)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _pids(path: Path, wait: float = 2.0) -> list[int]:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.05)
    return [int(line) for line in path.read_text().split()] if path.exists() else []


FORKS = {
    "setsid in a fork": (
        "import os, time\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    try:\n"
        "        os.setsid()\n"
        "    except OSError:\n"
        "        pass\n"
        "    open(PIDS, 'a').write(f'{os.getpid()}\\n')\n"
        "    time.sleep(120)\n"
        "    os._exit(0)\n"),
    "double fork": (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        open(PIDS, 'a').write(f'{os.getpid()}\\n')\n"
        "        time.sleep(120)\n"
        "    os._exit(0)\n"),
    "a sleep started in the background": (
        "import os, subprocess\n"
        "p = subprocess.Popen(['sleep', '120'])\n"
        "open(PIDS, 'a').write(f'{p.pid}\\n')\n"),
}


@pytest.mark.parametrize("name", sorted(FORKS))
@pytest.mark.parametrize("command", ["check-dgs", "dgs-plan"])
def test_nothing_the_program_started_is_left_running(tmp_path: Path, name: str, command: str) -> None:
    """A program that forks at import (a ``setsid()`` child, a double fork, a background
    ``sleep``) left a sandbox child and a ``sleep 120`` running after exit 0."""
    pids = tmp_path / "pids"
    target = _program(tmp_path, f"PIDS = {str(pids)!r}\n" + FORKS[name])
    extra = ["--examples", "3"] if command == "check-dgs" else ["--streams", _streams(tmp_path)]
    outcome = run([command, target, *extra, "--json", "--timeout", "60"], 90)
    assert_contract(outcome)
    started = _pids(pids)
    assert started, outcome.describe()
    time.sleep(0.2)
    assert not [pid for pid in started if _alive(pid)], outcome.describe()


def test_a_new_session_is_refused(tmp_path: Path) -> None:
    """``Popen(start_new_session=True)`` at import is refused (PermissionError, the program's
    fault: exit 2 naming it), so nothing escapes the sandbox's session."""
    target = _program(tmp_path, "import subprocess\nsubprocess.Popen(['sleep', '120'], start_new_session=True)\n")
    outcome = run(["dgs-plan", target, "--streams", _streams(tmp_path), "--json"], 60)
    assert_contract(outcome)
    assert outcome.code == 2 and "PermissionError" in outcome.err, outcome.describe()


def _cli(argv: list[str], tmp: Path, **kwargs: object) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONIOENCODING": "utf-8"}
    return subprocess.Popen([sys.executable, "-m", "streamproof", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, **kwargs)  # type: ignore[call-overload]


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGUSR1", "SIGSTOP", "SIGKILL"])
def test_the_program_cannot_signal_streamproof(tmp_path: Path, signame: str) -> None:
    """A program that signals its parent (``os.getppid()``) killed the CLI without a message,
    or (SIGSTOP) left it stopped past ``--timeout``: now the signal is refused
    (PermissionError at import, exit 2)."""
    target = _program(tmp_path, f"import os, signal\nos.kill(os.getppid(), signal.{signame})\n")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cli = _cli(["dgs-plan", target, "--streams", _streams(tmp_path), "--timeout", "30"], tmp)
    try:
        out, err = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            os.kill(cli.pid, signal.SIGCONT)
            cli.kill()
            cli.wait()
    text = err.decode()
    assert cli.returncode == 2 and len(text.splitlines()) == 1, (cli.returncode, text)
    assert "PermissionError" in text and out == b""
    assert not list(tmp.iterdir())


LOOP = "import time\nopen(PIDS, 'w').write(str(__import__('os').getpid()))\nwhile True:\n    time.sleep(0.01)\n"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_terminated_run_says_so_and_leaves_nothing(tmp_path: Path, signum: int) -> None:
    """docs/cli.md: SIGTERM (or SIGHUP) to the CLI stops the run with one stderr line, exit
    128 + N, the program's process gone and no temporary file left (it exited 143 silently
    and left ``request.json``, a copy of the user's streams, behind)."""
    pids = tmp_path / "pid"
    target = _program(tmp_path, f"PIDS = {str(pids)!r}\n" + LOOP)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cli = _cli(["dgs-plan", target, "--streams", _streams(tmp_path), "--call-timeout", "60"], tmp)
    try:
        program = _pids(pids, 30)
        cli.send_signal(signum)
        out, err = cli.communicate(timeout=30)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    text = err.decode()
    assert cli.returncode == 128 + signum, (cli.returncode, text)
    assert len(text.splitlines()) == 1 and "terminated by" in text, text
    assert program and not _alive(program[0])
    assert not list(tmp.iterdir())


def test_a_program_ignoring_sigusr1_is_held_to_the_call_limit(tmp_path: Path) -> None:
    """A program that ignores SIGUSR1 (streamproof's stack probe) and loops at import ran to the
    total limit, blamed on "starting Python and the checker"; now the per-call limit stops it
    and the message says where it was cannot be told, and why."""
    target = _program(tmp_path, "import signal\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\nwhile True:\n    pass\n")
    started = time.monotonic()
    outcome = run(["dgs-plan", target, "--streams", _streams(tmp_path), "--call-timeout", "1",
                   "--timeout", "120"], 60)
    assert_contract(outcome)
    assert outcome.code == 2 and "--call-timeout" in outcome.err and "SIGUSR1" in outcome.err, outcome.describe()
    assert "importing" in outcome.err and "starting Python" not in outcome.err
    assert time.monotonic() - started < 30


REPR_LOOP = simple_program().replace(
    "class P:", "class Loop:\n    def __repr__(self):\n        while True:\n            pass\n"
    "    def __eq__(self, other):\n        return False\n    __hash__ = object.__hash__\n\nclass P:").replace(
    "def out(s, e): return []", "def out(s, e): return [Loop()]")


def test_an_output_whose_repr_loops_is_held_to_the_call_limit(tmp_path: Path) -> None:
    """An output whose ``__repr__`` loops, printed by streamproof's report, was stopped only by
    the total limit; now by the per-call limit, naming the program's line."""
    path = tmp_path / "repr_loop.py"
    path.write_text(REPR_LOOP)
    started = time.monotonic()
    outcome = run(["dgs-plan", f"{path}:P", "--streams", _streams(tmp_path), "--call-timeout", "1",
                   "--timeout", "120"], 60)
    assert_contract(outcome)
    assert outcome.code == 2 and "--call-timeout" in outcome.err and "__repr__" in outcome.err, outcome.describe()
    assert time.monotonic() - started < 30


def test_a_lower_hard_memory_limit_is_respected(tmp_path: Path) -> None:
    """Under ``ulimit -v 3000000`` (a hard RLIMIT_AS below the default --memory-limit) the
    sandbox ran into "not allowed to raise maximum limit", exit 3; now the lower hard limit
    applies."""
    limit = 3_000_000 * 1024

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run([sys.executable, "-m", "streamproof", "dgs-plan", f"{EXAMPLES / 'key_counter.py'}:KeyCounter",
                           "--streams", STREAMS, "--json"], capture_output=True, timeout=120, preexec_fn=lower,
                          check=False)
    assert done.returncode == 0, done.stderr.decode()


MANY_TAGS = simple_program().replace('tags = frozenset({"a", "b"})', "tags = frozenset(range(300))").replace(
    'def events(): return st.sampled_from(["a", "b"])', "def events(): return st.integers(0, 299)")


def test_a_long_run_of_streamproof_own_code_is_not_blamed_on_the_program(tmp_path: Path) -> None:
    """docs/cli.md: only the program's own code is held to ``--call-timeout``; streamproof's
    checker running longer than that (300 streams with a tag each: 599 workers, tens of
    thousands of ``depends`` calls) is not. This input gave no answer in 120 s (or exit 3),
    and streamproof's own files (``streamproof/``, ``spark_impl/``) were taken for the
    program's, so a long run could be stopped as "stuck" in ``beacon.py``."""
    path = tmp_path / "many.py"
    path.write_text(MANY_TAGS)
    streams = tmp_path / "streams.json"
    streams.write_text(json.dumps({"streams": {f"s{i}": [{"ts": 1, "event": i}, {"ts": 2, "heartbeat": True}]
                                               for i in range(300)}}))
    outcome = run(["dgs-plan", f"{path}:P", "--streams", str(streams), "--call-timeout", "0.3", "--json"], 120)
    assert_contract(outcome)
    assert outcome.code == 0, outcome.describe()
