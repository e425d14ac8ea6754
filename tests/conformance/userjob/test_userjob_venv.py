"""The pytest plugin from a fresh virtual environment (slow).

Builds a new venv, ``pip install`` s the project (not editable: what a user gets) and pytest,
then runs a tiny user test file - outside the source tree, so neither this repository's
conftest nor its sources are on the path - whose only streamproof contact is the
``streamproof_oracle`` fixture the installed plugin provides. pip uses its cache (pyspark's
wheel is cached locally); with ``STREAMPROOF_WHEELHOUSE=DIR`` it installs offline from DIR
(``--no-index --find-links DIR``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

USER_JOB = '''
from spark_impl.reconfig import ListSource, Request, UserOperator, user_job, user_update
from spark_impl.workloads.fraud import fraud_flow

def count(state, key, value):
    return (state or 0) + 1, [(key, (value, (state or 0) + 1))]

def relay(state, key, value):
    return (state or 0) + 1, [(key, value)]

def job():
    flow = fraud_flow()
    source = ListSource(tuple(("payments", f"payments:{i}", f"c{i % 3}", (f"c{i % 3}", f"m{i % 2}", float(i)))
                              for i in range(8)))
    ops = {name: UserOperator(flow.kind(name), count if name == "Combiner" else relay)
           for name in ("FD1", "FD2", "Combiner")}
    swap = Request({"Combiner": user_update(flow, "Combiner", count, lambda s: s * 10)})
    return user_job(flow, ops, source, parallelism={"FD2": 2}), [swap], {"max_tuples": 6}
'''

USER_TEST = '''
import os

def test_my_job_conforms(streamproof_oracle):
    result = streamproof_oracle.check(os.path.join(str(TESTS), "user_job.py") + ":job", cases=2)
    assert result.cases == 2
'''


def _run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


@pytest.mark.slow
def test_the_plugin_works_from_a_fresh_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], tmp_path, 300)
    assert made.returncode == 0, made.stderr
    python = str(venv / "bin" / "python")
    wheelhouse = os.environ.get("STREAMPROOF_WHEELHOUSE")
    offline = ["--no-index", "--find-links", wheelhouse] if wheelhouse else []
    installed = _run([python, "-m", "pip", "install", "-q", *offline, str(ROOT), "pytest"], tmp_path, 3000)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    work = tmp_path / "user"
    work.mkdir()
    (work / "user_job.py").write_text(USER_JOB)
    (work / "test_user.py").write_text(USER_TEST)
    listed = _run([python, "-m", "pytest", "--fixtures", "-q", "test_user.py"], work, 600)
    assert "streamproof_oracle" in listed.stdout and "streamproof_spark" in listed.stdout, listed.stdout[-2000:]
    ran = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"], work, 1800)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]
    # the code under test is the installed copy, not this source tree
    where = _run([python, "-c", "import conformance.pytest_plugin as p; print(p.__file__)"], work, 120)
    assert str(venv) in where.stdout, where.stdout
