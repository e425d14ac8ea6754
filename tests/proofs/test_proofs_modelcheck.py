"""The explicit-state model checker of the Fries protocol (proofs/fries/modelcheck).

It must (1) find nothing wrong with Fries and epoch and find the naive scheduler's violation
on every dataflow up to 3 objects (4 behind ``-m slow``); (2) find a planted protocol bug
(members align on the first marker instead of one from every input); (3) report
counterexamples that really are non-serializable (checked by the spec's brute-force
definition) and shortest; (4) agree with the reference simulator: every violation the
simulator shows on a random DAG is found, and the Z3 rows' counterexamples are found.
"""

from __future__ import annotations

import json
import random

import pytest

from proofs.fries.modelcheck.configs import Config, configurations
from proofs.fries.modelcheck.control import SCHEDULERS, build_objects, control_for
from proofs.fries.modelcheck.run import check
from proofs.fries.modelcheck.search import explore
from reference.fries.serializability import check_serializability
from reference.fries.simulator import simulate
from spec.fries.dataflow import Dataflow, dataflow
from spec.fries.serializability import is_conflict_serializable
from support.fries_dataflows import random_flows
from support.fries_witness import scenario_for
from streamproof.main import main


def test_every_scheduler_as_expected_up_to_three_objects() -> None:
    rows = {s: check(s, 3) for s in SCHEDULERS}
    assert rows["fries"].dags == 48 and rows["fries-alg2"].dags < 48  # Alg. 2: one-to-one only
    for name in ("fries", "fries-alg3", "fries-alg2", "epoch"):
        assert rows[name].violations == 0, rows[name].counterexample
        assert rows[name].states > rows[name].dags  # interleavings were explored
    naive = rows["naive"]
    assert naive.violations > 0 and naive.counterexample is not None
    # the shortest naive violation: A -> B -> C, both reconfigured, 6 actions
    assert naive.config is not None and len(naive.config.flow.names) == 3
    assert len(naive.counterexample.steps) == 6
    assert not is_conflict_serializable(naive.counterexample.schedule)


@pytest.mark.parametrize("scheduler", ["epoch", "fries"])
def test_a_planted_alignment_bug_is_found(scheduler: str) -> None:
    """An object aligned by its *first* marker (not one from every input it aligns on) lets
    a tuple sent before the marker on another input meet the new function: the checker finds
    it, with a trace the spec's definition rejects."""
    # Fries needs two inputs inside the MCS: 4 objects; its parallel dataflows keep it quick
    bound = 3 if scheduler == "epoch" else 4
    domain = [c for c in configurations(bound) if scheduler == "epoch" or c.workers]
    row = check(scheduler, bound, align_on_any=True, configs=domain)
    assert row.violations > 0
    assert row.counterexample is not None and row.counterexample.verdict is not None
    assert not is_conflict_serializable(row.counterexample.schedule)
    assert any("takes the marker" in step for step in row.counterexample.steps)
    assert check(scheduler, bound, configs=domain).violations == 0  # the correct protocol


def test_two_source_tuples_change_no_verdict() -> None:
    """The one-tuple reduction (docs/proofs.md): with two source tuples every configuration
    up to 3 objects has the same verdict as with one."""
    configs = list(configurations(3))
    for scheduler in ("naive", "fries", "epoch"):
        for config in configs:
            objects = build_objects(config)
            control = control_for(scheduler, objects)
            one = explore(objects, control, 1).counterexample is None
            two = explore(objects, control, 2).counterexample is None
            assert one == two, (scheduler, config.to_json())


def _config(flow: Dataflow, reconfigured: list[str]) -> Config:
    return Config(flow, {}, frozenset(reconfigured))


def _violates(config: Config, scheduler: str) -> bool:
    objects = build_objects(config)
    return explore(objects, control_for(scheduler, objects)).counterexample is not None


def test_every_violation_the_simulator_shows_is_found() -> None:
    """On 30 random DAGs of 3-5 operators: whenever the reference simulator (many tuples,
    random timing) produces a non-serializable schedule under naive or Alg. 2, the model
    checker finds a violation on that DAG; it finds none for full Fries."""
    seen = 0
    for flow, reconf in random_flows(random.Random(11), 30):
        config = _config(flow, reconf)
        assert not _violates(config, "fries"), config.to_json()
        witness = {"dataflow": flow.to_json(), "reconfigured": reconf}
        for scheduler, name, options in (("naive", "naive", {}),
                                         ("fries", "fries-alg2", {"one_to_many": False})):
            runs = [simulate(scenario_for(witness, seed), scheduler, **options).schedule
                    for seed in range(6)]
            if all(check_serializability(s).serializable for s in runs):
                continue
            seen += 1
            assert _violates(config, name), (name, config.to_json())
    assert seen >= 5  # not vacuous


def test_workers_and_unique_operators_are_explored() -> None:
    configs = list(configurations(4))
    assert any(c.workers for c in configs)
    assert any(op.unique for c in configs for op in c.flow.operators)
    # the uniqueness rule matters: Fig. 10's shape - a replicate whose two branches meet at a
    # unique operator before the reconfigured one - is safe under Alg. 4 (X pruned) and the
    # unpruned Alg. 3 alike, but only because U emits once
    flow = dataflow([("A", "source"), ("X", "replicate"), ("B", "one-to-one"),
                     ("C", "one-to-one"), ("U", "one-to-one", True), ("O", "one-to-one")],
                    [("A", "X"), ("X", "B"), ("X", "C"), ("B", "U"), ("C", "U"), ("U", "O")])
    assert not _violates(_config(flow, ["O"]), "fries")
    not_unique = dataflow([("A", "source"), ("X", "replicate"), ("B", "one-to-one"),
                           ("C", "one-to-one"), ("U", "one-to-one"), ("O", "one-to-one")],
                          [("A", "X"), ("X", "B"), ("X", "C"), ("B", "U"), ("C", "U"),
                           ("U", "O")])
    assert _violates(_config(not_unique, ["O"]), "fries-alg2")
    assert not _violates(_config(not_unique, ["O"]), "fries")


def test_cli_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["modelcheck", "--max-operators", "3", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["results"]
    for row in document["results"]:
        assert list(row) == ["scheduler", "max_operators", "dags", "states", "violations",
                             "seconds", "counterexample"]
    by_name = {row["scheduler"]: row for row in document["results"]}
    assert by_name["naive"]["counterexample"]["trace"]
    assert by_name["fries"]["counterexample"] is None
    assert main(["modelcheck", "--max-operators", "3", "--scheduler", "naive"]) == 0
    assert main(["modelcheck", "--max-operators", "3", "--scheduler", "epoch"]) == 0
    capsys.readouterr()
    assert main(["modelcheck", "--max-operators", "1"]) == 2
    assert "--max-operators" in capsys.readouterr().err


@pytest.mark.slow
def test_every_scheduler_as_expected_up_to_four_objects() -> None:
    rows = {s: check(s, 4) for s in SCHEDULERS}
    assert all(rows[s].violations == 0 for s in ("fries", "fries-alg3", "fries-alg2", "epoch"))
    assert rows["naive"].violations > 0
