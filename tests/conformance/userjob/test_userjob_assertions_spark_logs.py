"""``assert_job_conforms`` (the pytest plugin's ``streamproof_oracle.check``) runs the suite with
Spark's loggers quiet on the session it is given, a user's, and leaves that session at its own
level afterwards, also when the suite fails (conformance/userjob/assertions.py;
docs/conformance.md after the ``--json`` example)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

import conformance.userjob.assertions as assertions
from conformance.core.results import CheckResult, FailureReport, SuiteResult
from support.fake_jvm import FakeJvm, session_of


@pytest.mark.parametrize("fails", [False, True])
def test_the_users_session_is_quiet_while_the_suite_runs_and_at_its_own_level_after(
        fails: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    jvm = FakeJvm("INFO")
    during: list[str] = []

    def suite(config: Any, spark: Any, under: Any) -> SuiteResult:
        during.append(jvm.level)
        result = SuiteResult("userjob", "spark", 0, checks=[CheckResult("spark vs reference", cases=1)])
        if fails:
            result.checks[0].failed = 1
            result.failures.append(FailureReport("spark vs reference", 0, ("outputs",), "differs", 1, 1, 0, {}))
        return result

    monkeypatch.delenv("STREAMPROOF_SPARK_LOG_LEVEL", raising=False)
    monkeypatch.setattr(assertions, "under_test", lambda job, requests, options: SimpleNamespace(ref="jobs.py:job"))
    monkeypatch.setattr(assertions, "run_userjob_suite", suite)
    if fails:
        with pytest.raises(AssertionError):
            assertions.assert_job_conforms("jobs.py:job", spark=session_of(jvm), cases=1)
    else:
        assertions.assert_job_conforms("jobs.py:job", spark=session_of(jvm), cases=1)
    assert during == ["OFF"] and jvm.level == "INFO"


def test_spark_log_level_chooses_the_level_during_the_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    jvm = FakeJvm("ERROR")
    during: list[str] = []

    def suite(config: Any, spark: Any, under: Any) -> SuiteResult:
        during.append(jvm.level)
        return SuiteResult("userjob", "spark", 0, checks=[CheckResult("spark vs reference", cases=1)])

    monkeypatch.setattr(assertions, "under_test", lambda job, requests, options: SimpleNamespace(ref="jobs.py:job"))
    monkeypatch.setattr(assertions, "run_userjob_suite", suite)
    assertions.assert_job_conforms("jobs.py:job", spark=session_of(jvm), cases=1, spark_log_level="warn")
    assert during == ["WARN"] and jvm.level == "ERROR"
