"""Properties of the Fries schedulers in the simulator (Fries Lemma 4.10, Theorems 5.8, 6.4;
§7.3), on random scenarios from :mod:`conformance.fries.cases.scenarios` with random timing.

Every Fries (with every pruning switch), epoch and multi-version run is conflict-serializable
and computes what the serial execution in the checker's witness order computes; the naive
scheduler and Alg. 2 on one-to-many dataflows are not, and hypothesis finds runs showing it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, assume, find, given, settings
from hypothesis import strategies as st

from conformance.fries.cases.scenarios import scenarios
from conformance.fries.cases.timing import with_timing
from reference.fries.simulator import check_run, inconsistent_checkpoints, simulate
from spec.fries.scenario import Scenario

TIMED = with_timing(scenarios())
#: The multi-version scheduler supports only the commutative functions (simulate refuses
#: fold / digest for it: per-version states cannot be merged in order).
COMMUTATIVE = with_timing(scenarios(order_sensitive=False))
# Finding is what is tested here: generation only (shrinking a scenario through repeated
# simulations costs minutes on a loaded machine; the conformance suite has its own shrinker).
FIND = settings(max_examples=3000, database=None, deadline=None, phases=[Phase.generate],
                suppress_health_check=list(HealthCheck))


def _every_update_once(scenario: Scenario, schedule_logs: dict[str, list[str]]) -> None:
    for rid, reconfiguration in enumerate(scenario.reconfigurations, start=1):
        for op in reconfiguration.updates:
            for obj in scenario.objects(op):
                assert schedule_logs[obj].count(f"R{rid}") == 1, (obj, rid)


@settings(max_examples=300)
@given(st.data(), st.booleans(), st.booleans(), st.sampled_from(["fries", "epoch", "multi-version"]))
def test_consistent_schedulers_are_serializable_and_match_the_serial_execution(
        data: st.DataObject, prune_edgewise: bool, prune_uniqueness: bool, scheduler: str) -> None:
    scenario = data.draw(COMMUTATIVE if scheduler == "multi-version" else TIMED)
    options = {"prune_edgewise": prune_edgewise, "prune_uniqueness": prune_uniqueness} \
        if scheduler == "fries" else {}
    result = simulate(scenario, scheduler, **options)
    # The uniqueness rule is sound only for runs that keep the declared property.
    assume(not result.uniqueness_violations or not prune_uniqueness or scheduler != "fries")
    judgement = check_run(scenario, result)
    assert judgement.ok, judgement.explain()
    logs = {obj: [op.txn for op in log] for obj, log in result.schedule.logs.items()}
    _every_update_once(scenario, logs)
    assert all(delay >= 0 for delay in result.delays)
    assert len(result.delays) == len(scenario.reconfigurations)


@settings(max_examples=60)
@given(TIMED, st.sampled_from(["fries", "epoch"]))
def test_checkpoints_are_consistent_under_the_section_7_3_rule(scenario: Scenario, scheduler: str) -> None:
    result = simulate(scenario, scheduler, checkpoint_interval=1.5)
    assume(not result.uniqueness_violations)
    assert inconsistent_checkpoints(scenario, result) == ()
    assert check_run(scenario, result).ok


@settings(max_examples=40)
@given(st.data(), st.sampled_from(["naive", "multi-version", "epoch", "fries"]))
def test_runs_are_deterministic(data: st.DataObject, scheduler: str) -> None:
    scenario = data.draw(COMMUTATIVE if scheduler == "multi-version" else TIMED)
    assert simulate(scenario, scheduler) == simulate(scenario, scheduler)


def test_hypothesis_finds_a_naive_run_that_is_not_serializable() -> None:
    def broken(scenario: Scenario) -> bool:
        return not check_run(scenario, simulate(scenario, "naive")).verdict.serializable

    found = find(TIMED, broken, settings=FIND)
    assert not check_run(found, simulate(found, "naive")).verdict.serializable


def test_hypothesis_finds_an_inconsistent_checkpoint_without_the_rule() -> None:
    def broken(scenario: Scenario) -> bool:
        result = simulate(scenario, "fries", checkpoint_interval=1.5, checkpoint_rule=False)
        return bool(inconsistent_checkpoints(scenario, result))

    found = find(TIMED, broken, settings=FIND)
    result = simulate(found, "fries", checkpoint_interval=1.5, checkpoint_rule=False)
    assert inconsistent_checkpoints(found, result)


@pytest.mark.slow
def test_hypothesis_finds_alg2_unsound_on_one_to_many_dataflows() -> None:
    """Fries §6.1: without the one-to-many extension (Alg. 2 only) some run is not
    serializable."""
    def broken(scenario: Scenario) -> bool:
        result = simulate(scenario, "fries", one_to_many=False)
        return not result.uniqueness_violations and not check_run(scenario, result).verdict.serializable

    found = find(with_timing(scenarios(), "stragglers"), broken,
                 settings=settings(FIND, max_examples=20000))
    assert broken(found)
