"""Every DGS case's plan is valid and its invalid variants are refused, each error located at
the job it belongs to (``conformance.dgs.checks.plans.validity_problems``, DGS Def. 3.2 and
docs/spark-dgs-oplus.md): the suite's cases are all P-valid, so no run sees the executor's
validation; this check does, and is shown here to name a validation that accepts everything
and an error not located at ``jobs[i]``. Spark-free."""

from __future__ import annotations

import pytest

from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.checks.plans import validity_problems
from spark_impl.dgs import topology
from spec.errors import InputError


def test_dgs_plan_validation_refuses_invalid_variants_of_every_case_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = draw_dgs_cases(12, 0)
    assert validity_problems(cases) == []
    real = InputError.located
    monkeypatch.setattr(InputError, "located", lambda self, where: self)  # errors no longer located
    assert "expected jobs[1]" in validity_problems(cases)[0]
    monkeypatch.setattr(InputError, "located", real)
    monkeypatch.setattr(topology, "check_valid_plan", lambda program, plan: None)
    found = validity_problems(cases)
    assert len(found) >= len(cases) and "with an unknown tag was accepted" in found[0]
