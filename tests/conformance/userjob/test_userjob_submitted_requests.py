"""The pytest plugin's oracle judges a run whose request was made with ``Executor.submit``.

docs/conformance.md ("Your own job", pytest plugin): ``streamproof_oracle.judge(job, outputs,
..., requests=result.requests)`` - the oracles need every request the run made, in transaction
order, planned and submitted alike; a request made with ``submit`` (the production way) is not
among the job's planned ones. A correct such run passes; the same run with an output missing
fails.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.standin.spark import LocalSpark
from conformance.testing.plugin import Oracle
from spark_impl.reconfig import Executor, GeneratedSource, collect_results
from spark_impl.reconfig.api import RunResult
from spark_impl.reconfig.model import Job, PlannedRequest, Request
from support.paths import ROOT

FRAUD = ROOT / "examples" / "fraud_job.py"


def _fraud() -> tuple[Job, Request]:
    spec = importlib.util.spec_from_file_location("fraud_job_submitted", FRAUD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    job, requests, _ = module.job()
    return job, requests[0]


def _submitted_run(tmp_path: Path) -> tuple[Job, Request, RunResult]:
    job, request = _fraud()
    assert isinstance(job.source, GeneratedSource)
    job = replace(job, planned=(), source=replace(job.source, n=40))
    ex = Executor(LocalSpark(), [job], "fries", str(tmp_path), partitions=2)
    submitted = False
    for _ in range(400):
        if ex.done():
            break
        if not submitted and ex.state[0].committed.offset >= 10:
            assert ex.submit(0, request) is None
            submitted = True
        ex.step()
    assert ex.done() and submitted
    return job, request, collect_results(ex)[0]


def test_a_run_with_a_submitted_request_conforms(tmp_path: Path) -> None:
    job, request, result = _submitted_run(tmp_path)
    assert result.requests is not None and len(result.requests) == 1
    run: dict[str, Any] = dict(schedule=result.schedule, states=result.states, senders=result.senders,
                               rejected=result.rejected)
    Oracle(None).judge(job, result.outputs, **run, requests=[request])
    Oracle(None).judge(job, result.outputs, **run, requests=result.requests)  # the run's own record
    Oracle(None).judge(job, result)  # the whole result: its requests included
    with pytest.raises(AssertionError, match="exactly-once|outputs"):
        Oracle(None).judge(job, replace(result, outputs=result.outputs[1:]))
    with pytest.raises(AssertionError, match="retention"):
        Oracle(None).judge(job, replace(result, requests=None))
    with pytest.raises(AssertionError, match="exactly-once|outputs"):
        Oracle(None).judge(job, result.outputs[1:], **run, requests=[request])
    with pytest.raises(AssertionError, match=re.escape("PlannedRequest(at, request)")):
        Oracle(None).judge(job, result.outputs, states=result.states, requests=[request])
    Oracle(None).judge(job, result.outputs, schedule=result.schedule, requests=[PlannedRequest(10, request)])
