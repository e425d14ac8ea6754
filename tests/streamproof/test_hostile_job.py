"""docs/cli.md and docs/conformance.md ("Your own job", *What runs where*): a ``--job`` whose
code misbehaves while loading - any BaseException, ``sys.exit``, ``os._exit``, a signal to
itself, a write to fd 1, an endless loop - is the user's fault: exit 2, one stderr line naming
the job and its line, nothing on stdout, an answer within the load time limit, nothing of the
user's left running and no temporary file left behind.

Each case runs the real CLI in a subprocess (a hostile job must not be able to end the test
process); the job fails while loading, before Spark starts, so each case takes seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import signal
from pathlib import Path

import pytest
from support.paths import ROOT
from conformance.userjob.engine import user_route
from conformance.userjob.guard import GuardedLogic, UserCodeError

EXAMPLE = (ROOT / "examples" / "fraud_job.py").read_text(encoding="utf-8")

#: name -> what is appended to a valid job file (examples/fraud_job.py), and the word the
#: one stderr line must contain besides the job's file name.
HOSTILE = {
    "sys_exit_0_in_job": ("_j = job\ndef job():\n    raise SystemExit(0)\n", "SystemExit"),
    "sys_exit_5_at_import": ("import sys\nsys.exit(5)\n", "SystemExit"),
    "keyboard_interrupt_in_job": ("_j = job\ndef job():\n    raise KeyboardInterrupt\n", "KeyboardInterrupt"),
    "generator_exit_in_job": ("_j = job\ndef job():\n    raise GeneratorExit('x')\n", "GeneratorExit"),
    "own_base_exception_in_job": ("class Mine(BaseException):\n    pass\n_j = job\ndef job():\n    raise Mine('m')\n",
                                  "Mine"),
    "source_count_exits": ("_j = job\ndef job():\n    j, r, o = _j()\n    type(j.source).count = lambda self: "
                           "exec('raise SystemExit(3)')\n    return j, r, o\n", "SystemExit"),
    "os_exit_0_at_import": ("import os\nos._exit(0)\n", "exited with status 0"),
    "writes_fd_1_at_import": ("import os\nos.write(1, b'garbage\\n')\n", "file descriptor 1"),
    "sigterm_to_itself": ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n", "SIGTERM"),
    "loops_at_import": ("while True:\n    pass\n", "did not finish within 3 s"),
    "loops_in_job": ("_j = job\ndef job():\n    while True:\n        pass\n", "did not finish within 3 s"),
    "starts_a_sleeper_then_loops": ("import subprocess\nsubprocess.Popen(['sleep', '97'])\nwhile True:\n    pass\n",
                                    "did not finish"),
}


def _ours_left(marker: str) -> list[str]:
    found = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    return [line for line in found.splitlines() if marker in line or "sleep 97" in line]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_job_misbehaving_while_loading_is_one_line_of_bad_input(name: str, tmp_path: Path) -> None:
    """docs/conformance.md "Your own job": loading runs in a child with --load-timeout; any
    fault of the job there is exit 2 with one stderr line naming the job (and its line)."""
    snippet, word = HOSTILE[name]
    job = tmp_path / f"hostile_{name}.py"
    job.write_text(EXAMPLE + "\n" + snippet, encoding="utf-8")
    before = set(os.listdir(tempfile.gettempdir()))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", "--job", f"{job}:job",
                           "--cases", "1", "--json", "--load-timeout", "3", "--save-dir", str(tmp_path / "saved")],
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    took = time.monotonic() - began
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert job.name in lines[0] and word in lines[0], lines[0]
    assert done.stdout == ""
    assert took < 30
    assert _ours_left(job.name) == []
    left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("streamproof-job-")}
    assert left == set()


def test_a_job_loading_line_is_named(tmp_path: Path) -> None:
    """docs/conformance.md "Your own job": the one line names the user's line of the fault."""
    job = tmp_path / "exits.py"
    job.write_text(EXAMPLE + "\n_j = job\ndef job():\n    raise SystemExit(0)\n", encoding="utf-8")
    line = EXAMPLE.count("\n") + 4
    done = subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", "--job", f"{job}:job"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert f"exits.py:{line}" in done.stderr, done.stderr


@pytest.mark.parametrize("flag", ["--load-timeout", "--call-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "1e308"])
def test_time_limits_are_bounded(flag: str, value: str) -> None:
    """docs/cli.md: --load-timeout / --call-timeout outside (0, 86400] s are bad input."""
    done = subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", "--job", "x.py:job", flag, value],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and flag in done.stderr, done.stderr


@pytest.mark.parametrize("raised", [SystemExit(0), KeyboardInterrupt(), GeneratorExit("g"), type("Mine", (BaseException,), {})()])
def test_a_call_raising_any_base_exception_is_the_users_error(raised: BaseException) -> None:
    """conformance/userjob/guard.py: a call that raises anything - SystemExit, KeyboardInterrupt
    and GeneratorExit included - becomes a UserCodeError naming the call (oracle user-code)."""
    class Raising:
        def process(self, state: object, key: object, value: object) -> tuple[object, list[tuple[object, object]]]:
            raise raised

        def flush(self, state: object, key: object) -> list[tuple[object, object]]:
            raise raised

    logic = GuardedLogic("FD1", Raising())  # type: ignore[arg-type]
    with pytest.raises(UserCodeError, match=f"FD1.process.*raised {type(raised).__name__}"):
        logic.process(None, "k", 1)
    with pytest.raises(UserCodeError, match=f"FD1.flush.*raised {type(raised).__name__}"):
        logic.flush(None, "k")


def test_writes_to_fd_1_while_the_job_runs_go_to_stderr() -> None:
    """streamproof/stdout_kept.py: inside stdout_kept(), a raw write to fd 1 lands on stderr and
    print() on the real stdout; fd 1 is restored afterwards."""
    program = ("import os\nfrom streamproof.stdout_kept import stdout_kept\n"
               "with stdout_kept():\n    os.write(1, b'stray\\n')\n    print('ours')\nos.write(1, b'after\\n')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ours\nafter\n"
    assert done.stderr == "stray\n"


def test_replaying_a_case_of_a_misbehaving_job_is_one_line_of_bad_input(tmp_path: Path) -> None:
    """docs/conformance.md "Your own job": --replay of a saved user-job case loads its job in the
    child first, so a job that ends the process while loading is exit 2 with one line, not exit 0."""
    job = tmp_path / "exits.py"
    job.write_text(EXAMPLE + "\nimport os\nos._exit(0)\n", encoding="utf-8")
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"format": "streamproof-conformance-case/1", "suite": "userjob", "engine": "spark",
                                "scheduler": "fries", "faults": [], "seed": 0, "case": 0, "oracles": [],
                                "explanation": "", "case_data": {"job": f"{job}:job", "tuples": [0], "requests": [],
                                                                 "batch_size": 1}}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", "--replay", str(case), "--json"],
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2, (done.returncode, done.stdout[-300:], done.stderr[-1000:])
    assert len(done.stderr.strip().splitlines()) == 1 and "exits.py" in done.stderr and "status 0" in done.stderr
    assert done.stdout == ""


class _Unroutable:
    """A key type the deployment's route cannot place, whose ``__len__`` raises too."""

    def __hash__(self) -> int:
        return 1

    def __len__(self) -> int:
        raise RuntimeError("no len")


@pytest.mark.parametrize("key", [_Unroutable(), __import__("decimal").Decimal("NaN")], ids=["own-type", "decimal-nan"])
def test_a_key_the_route_cannot_place_is_the_users_error(key: object) -> None:
    """conformance/userjob/engine.py: a job's key that spark_impl.keys.route cannot place fails
    the case as the user's (oracle user-code), never an internal error (exit 3)."""
    with pytest.raises(UserCodeError, match="cannot be routed"):
        user_route(key, 2)
    assert user_route("k", 2) in (0, 1)


def test_sigterm_while_loading_leaves_nothing_behind(tmp_path: Path) -> None:
    """docs/cli.md: SIGTERM to the CLI while the job loads in its child ends the CLI with 143,
    kills the child and removes the child's temporary directory (streamproof/job_probe.py unwinds
    on SIGTERM while loading)."""
    job = tmp_path / "hangs_for_sigterm.py"
    job.write_text(EXAMPLE + "\nwhile True:\n    pass\n", encoding="utf-8")
    before = set(os.listdir(tempfile.gettempdir()))
    cli = subprocess.Popen([sys.executable, "-m", "streamproof.main", "conformance", "--job", f"{job}:job"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 30
    while not _ours_left(job.name)[1:] and time.monotonic() < deadline:  # the CLI and its child
        time.sleep(0.2)
    time.sleep(0.5)
    cli.send_signal(signal.SIGTERM)
    _, err = cli.communicate(timeout=30)
    assert cli.returncode == 143, err
    time.sleep(0.5)
    assert _ours_left(job.name) == []
    left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("streamproof-job-")}
    assert left == set()
