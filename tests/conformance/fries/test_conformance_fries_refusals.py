"""The Fries executor's refusals and ``submit``'s answers without Spark
(:mod:`conformance.fries.checks.refusals`): ``collect_results`` reports every rejection,
including one made after the job's last commit."""

from __future__ import annotations

import pytest

from conformance.fries.checks.refusals import refusal_problem


def test_the_refusals_check_passes_on_the_executor() -> None:
    assert refusal_problem() is None


def test_rejections_reported_from_the_committed_view_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """api.py ``collect_results``: ``tuple(st.live.rejected)`` -> ``tuple(prog.rejected)`` (the
    committed view) loses the end-of-input rejection, which no commit follows; the suite's runs
    reject nothing."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import api

    monkeypatch.setattr(api, "collect_results", rewritten_function(api, "collect_results", "tuple(st.live.rejected)",
                                                        "tuple(prog.rejected)"))
    found = refusal_problem()
    assert found is not None and "collect_results reports the rejections" in found, found
    assert "reached the end of its input" in found.rsplit("submit answered", 1)[1]
