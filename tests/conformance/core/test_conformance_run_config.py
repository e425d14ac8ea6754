"""A run's options narrowed to one suite (conformance/core/run_config.py, ``RunConfig.for_suite``
and ``case_count``): every suite reads the options of the run it belongs to, with its own name,
number of cases, resolved engine and faults, and nothing else changes."""

from __future__ import annotations

import pytest

from conformance.core.run_config import SUITES, RunConfig


def test_a_run_narrowed_to_one_suite_keeps_every_other_option() -> None:
    config = RunConfig(cases=None, seed=7, engine="auto", faults=frozenset({"naive", "window-off-by-one"}),
                       batch_size=50, save_dir="out", shrink_budget=3, scheduler="epoch")
    narrowed = config.for_suite("oplus", 12, "spark", frozenset({"window-off-by-one"}))
    assert (narrowed.suites, narrowed.case_count, narrowed.engine, narrowed.faults) == (
        ("oplus",), 12, "spark", frozenset({"window-off-by-one"}))
    assert (narrowed.seed, narrowed.batch_size, narrowed.save_dir, narrowed.shrink_budget, narrowed.scheduler) == (
        7, 50, "out", 3, "epoch")
    assert config.suites == SUITES == ("fries", "dgs", "oplus")  # the default run: every catalogue suite


def test_a_suite_is_never_asked_for_an_unresolved_number_of_cases() -> None:
    with pytest.raises(ValueError):
        RunConfig().case_count
