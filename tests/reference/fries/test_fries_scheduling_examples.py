"""The schedulers on the paper's own examples (Fries Figure 2, §6.1/Figure 8, §7.1, §7.2)
and the simulator's basic guarantees (FIFO channels, bad input)."""

from __future__ import annotations

from typing import Any

import pytest

from reference.fries.simulator import check_run, simulate
from spec.errors import InputError
from spec.fries.scenario import Scenario, ingestion_order, scenario_from_json, serial_execution


def _map(mul: int, add: int = 0) -> dict[str, Any]:
    return {"op": "map", "mul": mul, "add": add}


def _chain(ops: list[tuple[str, str]], functions: dict[str, Any], tuples: int, **extra: Any) -> Scenario:
    names = [name for name, _ in ops]
    return scenario_from_json({
        "dataflow": {"operators": [{"name": n, "kind": k} for n, k in ops],
                     "edges": [[a, b] for a, b in zip(names, names[1:])]},
        "functions": functions,
        "sources": {names[0]: [{"key": i % 3, "value": i + 1} for i in range(tuples)]},
        **extra,
    })


def figure_2() -> Scenario:
    """Fries Figure 2: a tuple flows through two reconfigured operators M (the merchant
    fraud detector) and C (the combiner); C is slow, so tuples queue in front of it."""
    return _chain(
        [("S", "source"), ("M", "one-to-one"), ("C", "one-to-one"), ("K", "one-to-one")],
        {"M": _map(1), "C": _map(1), "K": _map(1)}, 6,
        reconfigurations=[{"at": 2, "updates": {"M": {"function": _map(10)},
                                                "C": {"function": _map(100), "state": {"mul": 2}}}}],
        timing={"ingest_interval": 1, "operator_cost": {"C": 3}},
    )


def test_naive_breaks_figure_2_and_no_serial_order_computes_its_outputs() -> None:
    scenario = figure_2()
    result = simulate(scenario, "naive")
    judgement = check_run(scenario, result)
    assert not judgement.verdict.serializable
    assert judgement.verdict.cycle is not None and "R1" in judgement.verdict.cycle
    txns = [t.txn for t in ingestion_order(scenario)]
    for position in range(len(txns) + 1):
        order = txns[:position] + ["R1"] + txns[position:]
        assert serial_execution(scenario, order).outputs != result.outputs


@pytest.mark.parametrize("scheduler", ["epoch", "fries", "multi-version"])
def test_consistent_schedulers_on_figure_2(scheduler: str) -> None:
    scenario = figure_2()
    judgement = check_run(scenario, simulate(scenario, scheduler))
    assert judgement.ok, judgement.explain()


def test_fries_skips_the_queue_in_front_of_a_slow_upstream_operator() -> None:
    """§3.2: the epoch marker waits behind every in-flight tuple of the slow operator P
    upstream of the reconfigured M and C; Fries' FCM goes straight to M."""
    scenario = _chain(
        [("S", "source"), ("P", "one-to-one"), ("M", "one-to-one"), ("C", "one-to-one")],
        {"P": _map(1), "M": _map(1), "C": _map(1)}, 20,
        reconfigurations=[{"at": 10, "updates": {"M": {"function": _map(10)}, "C": {"function": _map(3)}}}],
        timing={"ingest_interval": 1, "operator_cost": {"P": 3}},
    )
    fries, epoch = simulate(scenario, "fries"), simulate(scenario, "epoch")
    assert fries.delays[0] < epoch.delays[0]
    assert (fries.stats.markers, epoch.stats.markers) == (1, 3)
    assert check_run(scenario, fries).ok and check_run(scenario, epoch).ok


def test_multi_version_log_puts_old_version_operations_before_the_update() -> None:
    scenario = figure_2()
    log = [op.txn for op in simulate(scenario, "multi-version").schedule.logs["C"]]
    assert log.index("R1") >= 2  # S:0 and S:1 were ingested before the request


def figure_8() -> Scenario:
    """Fries §6.1 / Figure 8: a one-to-many Join J emits two tuples per input; the
    reconfigured FD receives both; the FCM lands between them."""
    return _chain(
        [("S", "source"), ("J", "one-to-many"), ("FD", "one-to-one")],
        {"J": {"op": "fanout", "copies": 2}, "FD": _map(1)}, 3,
        reconfigurations=[{"at": 1, "updates": {"FD": {"function": _map(7)}}}],
        timing={"ingest_interval": 0.5, "operator_cost": {"FD": 1}},
    )


def test_alg2_breaks_figure_8_and_alg3_does_not() -> None:
    scenario = figure_8()
    alg2 = check_run(scenario, simulate(scenario, "fries", one_to_many=False))
    assert not alg2.verdict.serializable
    assert alg2.verdict.cycle is not None and set(alg2.verdict.cycle) == {"S:0", "R1"}
    alg3 = check_run(scenario, simulate(scenario, "fries"))
    assert alg3.ok, alg3.explain()


def test_workers_each_apply_the_update_once() -> None:
    scenario = _chain(
        [("S", "source"), ("A", "one-to-one"), ("B", "one-to-one")], {"A": _map(2), "B": _map(1)}, 9,
        parallelism={"S": 2, "A": 3, "B": 2},
        reconfigurations=[{"at": 4, "updates": {"A": {"function": _map(5)}, "B": {"function": _map(3)}}}],
        timing={"ingest_interval": 0.5, "operator_cost": {"A": 1, "B": 0.7}, "channel_delay": [0, 2],
                "stragglers": {"A#1": 4}},
    )
    for scheduler in ("naive", "epoch", "fries", "multi-version"):
        result = simulate(scenario, scheduler)
        assert sorted(result.schedule.logs) == ["A#0", "A#1", "A#2", "B#0", "B#1"]
        for obj, log in result.schedule.logs.items():
            assert [op.txn for op in log].count("R1") == 1, (scheduler, obj)
        if scheduler != "naive":
            assert check_run(scenario, result).ok


def test_blocking_operator_flushes_after_the_reconfiguration() -> None:
    scenario = _chain(
        [("S", "source"), ("A", "one-to-one"), ("B", "blocking"), ("C", "one-to-one")],
        {"A": _map(2), "B": {"op": "sum", "mul": 1, "add": 0}, "C": _map(1)}, 6,
        reconfigurations=[{"at": 3, "updates": {"A": {"function": _map(3)},
                                                "B": {"function": {"op": "sum", "mul": 10, "add": 1}},
                                                "C": {"function": _map(-1)}}}],
        timing={"operator_cost": {"A": 2}},
    )
    for scheduler in ("epoch", "fries", "multi-version"):
        result = simulate(scenario, scheduler)
        assert check_run(scenario, result).ok
        assert [op.txn for op in result.schedule.logs["B"]][-1] == "B:final"
        assert any(txn == "B:final" for (_, txn, _, _) in result.outputs)


def test_channels_are_fifo() -> None:
    scenario = _chain([("S", "source"), ("A", "one-to-one")], {"A": _map(1)}, 30,
                      timing={"channel_delay": [0, 25], "ingest_interval": 0.1, "seed": 7})
    log = [op.txn for op in simulate(scenario, "epoch").schedule.logs["A"]]
    assert log == [t.txn for t in ingestion_order(scenario)]


def test_unknown_scheduler_and_options_are_input_errors() -> None:
    with pytest.raises(InputError, match="unknown scheduler"):
        simulate(figure_2(), "optimistic")
    with pytest.raises(InputError, match="takes no options"):
        simulate(figure_2(), "epoch", prune_edgewise=False)
    with pytest.raises(InputError, match="unknown Fries option"):
        simulate(figure_2(), "fries", prune_everything=True)


def test_multi_version_waits_for_old_version_tuples() -> None:
    """§4.1: the multi-version scheduler still drains the old-tagged in-flight tuples."""
    scenario = _chain(
        [("S", "source"), ("P", "one-to-one"), ("M", "one-to-one")], {"P": _map(1), "M": _map(1)}, 20,
        reconfigurations=[{"at": 10, "updates": {"M": {"function": _map(10)}}}],
        timing={"ingest_interval": 1, "operator_cost": {"M": 3}},
    )
    fries, multi = simulate(scenario, "fries"), simulate(scenario, "multi-version")
    assert fries.delays[0] < multi.delays[0]
    assert check_run(scenario, multi).ok


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_channel_counts_of_the_paper_table_7(workers: int) -> None:
    """Table 7's W2 shape: a 4-join chain with ``workers`` workers each and a single-worker
    sink has 4w^2 + w channels, of which the MCS of {J1, J4} uses 3w^2 - and Fries sends a
    marker on exactly those, epoch on all of them."""
    names = ["Src", "J1", "J2", "J3", "J4", "Sink"]
    scenario = _chain([(n, "source" if n == "Src" else "one-to-one") for n in names],
                      {n: _map(1) for n in names[1:]}, 12,
                      parallelism={n: workers for n in names[:-1]} if workers > 1 else {},
                      reconfigurations=[{"at": 6, "updates": {"J1": {"function": _map(2)},
                                                              "J4": {"function": _map(3)}}}])
    fries, epoch = simulate(scenario, "fries"), simulate(scenario, "epoch")
    assert epoch.stats.marker_channels == 4 * workers ** 2 + workers
    assert fries.stats.marker_channels == 3 * workers ** 2


def _overlapping_epochs(seed: int) -> Scenario:
    """Two reconfigurations of D requested together. The roots are the two source workers
    S#0, S#1 (they update nothing) and D (first operator after the blocking A, §7.1); A
    aligns markers from both source workers. D applies R1 on its FCM at once, while R1's FCM
    to a source worker can still be on its way."""
    return scenario_from_json({
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "blocking"},
                                   {"name": "D", "kind": "one-to-one"}],
                     "edges": [["S", "A"], ["A", "D"]]},
        "functions": {"A": {"op": "sum", "mul": 1, "add": 0}, "D": _map(1)},
        "sources": {"S": []},
        "parallelism": {"S": 2},
        "reconfigurations": [{"at": 0, "updates": {"D": {"function": _map(2)}}},
                             {"at": 0, "updates": {"D": {"function": _map(3)}}}],
        "timing": {"seed": seed, "fcm_delay": [0, 10]},
    })


@pytest.mark.parametrize("seed", range(16))
def test_epoch_waits_for_the_previous_epoch_to_end(seed: int) -> None:
    """Regression (`streamproof conformance --suite fries --scheduler epoch`, seed 0:
    "messages left undelivered at 'A'" / "R2 did not complete"). R1 used to complete as soon
    as D had applied it; R2's FCM to S#0 could then overtake R1's, S#0 sent R2's marker before
    R1's, and A - holding S#1 for R1 and S#0 for R2 - deadlocked. Seeds 0, 8, 9 and 15 did so
    before the fix; now a reconfiguration completes only when its epoch is over (every
    marker taken)."""
    scenario = _overlapping_epochs(seed)
    judgement = check_run(scenario, simulate(scenario, "epoch"))
    assert judgement.ok, judgement.explain()
