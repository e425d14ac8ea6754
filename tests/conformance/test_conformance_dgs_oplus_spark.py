"""The DGS and O+ suites' Spark engines: non-trivial cases in one
batch each pass, and a case that makes the batch call raise is isolated as that case's
``engine`` failure while the rest of the batch is still judged."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from conformance.core.cases import draw_cases
from conformance.core.crashes import Crash
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.oracles import judge
from conformance.dgs.engines.batch import spark_engine
from conformance.oplus.cases import oplus_cases
from conformance.oplus.oracles import spark_discrepancies
from conformance.oplus.engines.batch import spark_engine as oplus_engine

pytestmark = pytest.mark.spark


def test_dgs_cases_pass_on_spark_in_one_batch_and_a_crashing_case_is_isolated(spark: Any) -> None:
    # one driver tick each, so every engine call is one Spark job (the bisection makes 3)
    cases = [replace(c, tick=1_000_000) for c in draw_dgs_cases(5, 4)]
    broken = replace(cases[3], tick=0)  # run_dgs_many refuses it: the whole batch call raises
    batch = cases[:3] + [broken] + cases[4:]
    observed = spark_engine(spark)(batch)
    assert isinstance(observed[3], Crash) and "tick" in observed[3].message
    assert [o for o, _ in judge(broken, observed[3])] == ["engine"]
    problems = {i: judge(c, o) for i, (c, o) in enumerate(zip(batch, observed)) if i != 3}
    assert all(not p for p in problems.values()), problems


def test_oplus_cases_with_their_own_round_sizes_pass_on_spark_and_a_crash_is_isolated(spark: Any) -> None:
    drawn = draw_cases(oplus_cases(), 6, 3)
    assert len({k for _, k in drawn}) >= 2  # rounds of different sizes in one batch
    batch = drawn[:3] + [(drawn[3][0], 0)] + drawn[4:]  # 0 items per round: the call raises
    problems = spark_discrepancies(batch, oplus_engine(frozenset(), spark))
    assert problems[3] is not None and problems[3].startswith("[engine]") and "items_per_round" in problems[3]
    assert [i for i, p in enumerate(problems) if p is not None] == [3], problems
