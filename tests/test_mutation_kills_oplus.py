"""The O+ seeded-faults check's round plans, shown without Spark: the check fails on a
one-line bug of the batch driver (the function recompiled from its source with one change) and
passes on the original."""

from __future__ import annotations

import pytest

from support.source_rewrite import rewritten_function


# --- the batch driver's round plans ---


def test_the_round_plans_keep_their_definitions() -> None:
    from conformance.oplus.checks.faults import fault_problem

    assert fault_problem() is None


def test_round_plans_that_hand_the_next_watermark_as_the_previous_one_are_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py (``watermark(r - 1)`` ->
    ``watermark(r + 1)``): only ``drop-near-watermark`` reads ``previous``."""
    import spark_impl.oplus.driver as driver
    from conformance.oplus.checks.faults import fault_problem

    monkeypatch.setattr(driver, "round_plans", rewritten_function(driver, "round_plans", "f.watermark(r - 1)",
                                                       "f.watermark(r + 1)"))
    found = fault_problem()
    assert found is not None and "round 0 of scenario 0" in found, found
