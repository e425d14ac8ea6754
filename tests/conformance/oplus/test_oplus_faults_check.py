"""The O+ seeded faults are the bugs they name (``conformance.oplus.checks.faults``, run by the
O+ suite, no Spark job; docs/spark-dgs-oplus.md, "Seeded faults"): ``window-off-by-one``
reaches exactly one time unit past the window, ``drop-near-watermark`` drops tuples. Shown on
a fault reaching two units and on an instance that drops nothing."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.results import SuiteResult
from conformance.oplus.checks import faults as oplus_faults_check
from spark_impl.oplus import instance, operators


def test_oplus_seeded_faults_are_the_bugs_they_name(monkeypatch: pytest.MonkeyPatch) -> None:
    result = SuiteResult("oplus", "spark", 0)
    assert not oplus_faults_check.run_check(result) and result.failed == 0
    real = operators.lefts_of

    def off_by_two(op: Any, ts: int) -> range:
        return real(op, ts + 1) if op.off_by_one else real(op, ts)

    monkeypatch.setattr(operators, "lefts_of", off_by_two)
    assert "with window-off-by-one" in (oplus_faults_check.fault_problem() or "")
    monkeypatch.setattr(operators, "lefts_of", real)
    monkeypatch.setattr(instance, "process", lambda index, state, items, plans: ({0: {"k": {}}}, []))
    assert "drop-near-watermark on" in (oplus_faults_check.fault_problem() or "")
    assert oplus_faults_check.run_check(result) and result.failed == 1
