"""Alignment probes (conformance/generators/alignment.py) and their place in the Fries suite.

The probes must (1) have the shape that forces alignment - a reconfigured member whose
in-component parent operator has several workers, keys on every worker - (2) be honest cases:
the reference simulator's correct schedulers pass them, and (3) have teeth without knowing any
fault: the simulator's unaligned (naive) scheduler fails most of them. The Spark side (the
seeded ``missing-alignment`` fault) is in tests/spark_impl/reconfig/test_spark_reconfig.py and the slow fault run
of tests/conformance/test_conformance_spark.py."""

from __future__ import annotations

from conformance.core.cases import draw_cases
from conformance.fries.engines.catalogue import make_engine
from conformance.fries.config import FriesConfig
from conformance.fries.suite import judge_batch
from conformance.fries.cases.sections import race_section, race_strategy
from conformance.fries.cases.alignment import (
    PROBE_HEAD_COST,
    alignment_probes,
    is_probe_shaped,
    pruning_shape,
)

PROBES = draw_cases(alignment_probes(), 30, 0)
MANY_PROBES = draw_cases(alignment_probes(), 90, 0)


def test_probes_have_the_shape_that_needs_alignment() -> None:
    assert len(PROBES) == 30
    for probe in PROBES:
        assert is_probe_shaped(probe)
        (request,) = probe.reconfigurations
        workers = probe.workers("X")
        keys = {t.key % workers for t in probe.sources["S"]}
        assert keys == set(range(workers))           # every head gets data
        assert len(probe.sources["S"]) >= request.at + 24   # data keeps flowing after the request
        assert probe.timing.fcm_delay[1] - probe.timing.fcm_delay[0] >= 1000  # heads switch apart


def test_probes_pass_correct_schedulers_and_fail_an_unaligned_one() -> None:
    for scheduler in ("fries", "epoch"):
        judged = judge_batch(make_engine("reference", scheduler=scheduler, faults=frozenset()), PROBES)
        assert [j.failed_oracles for _, j, _ in judged if not j.ok] == [], scheduler
    # How many probes an unaligned scheduler fails depends on the drawn timing: 5-19 of 30 on
    # seeds 0-2 since the probes draw order-sensitive members, 30 of these 90.
    naive = judge_batch(make_engine("reference", scheduler="fries", faults=frozenset({"naive"})),
                        MANY_PROBES)
    failed = [j for _, j, _ in naive if not j.ok]
    assert len(failed) >= len(MANY_PROBES) // 4
    assert all("serializable" in j.failed_oracles for j in failed)


def test_every_race_batch_starts_with_a_probe() -> None:
    strategy = race_strategy()
    assert not isinstance(strategy, str)
    config = FriesConfig(cases=40, race_batch_size=8)
    cases = race_section(strategy, 20, config)
    assert len(cases) == 20
    probes = [c for c in cases if list(c.timing.operator_cost.values()) == [PROBE_HEAD_COST]]
    starts = [cases[o] for o in range(0, len(cases), 8)]
    assert all(any(c is p for p in probes) for c in starts)  # every batch starts with a probe
    kinds = {pruning_shape(c) or ("alignment" if is_probe_shaped(c) else None) for c in probes}
    assert len(probes) == 4 and kinds == {"alignment", "one-to-many", "replicate", "uniqueness"}
