"""The default DGS and O+ suites' live checks (conformance.dgs_oplus_live), without Spark: the
live engines are replaced by the reference (a passing engine) and by a broken one; a failure
is reported, saved as a ``spark-streaming`` case, and its replay goes to the live engine (it
went to the reference before, which passed every saved live failure)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pytest

from conformance.core.cases import draw_cases
from conformance.core.crashes import Crash
from conformance.dgs.suite import dgs_live_check
from conformance.oplus.suite import oplus_live_check
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.engines.reference import reference_engine
from conformance.oplus.cases import oplus_cases
from conformance.oplus.oracles import rows_of
from conformance.oplus.engines.live import LATE_EVERY
from conformance.core.saved_case import load_case
from conformance.core.results import SuiteResult
from conformance.core.verdict import OracleName, Verdict, fails
from conformance.dgs import oracles as dgs_oracles, suite as dgs_suite
from spec.oplus.emission import emission_rounds, emitting_instance
from spec.oplus.scenario import parse_scenario
from conformance.dgs.engines import live as dgs_live
from conformance.dgs.suite import replay as dgs_replay
from conformance.oplus.engines import live as oplus_live
from conformance.oplus.suite import replay as oplus_replay

DGS = draw_dgs_cases(20, 0)
BROKEN = 13
OPLUS = draw_cases(oplus_cases(), 20, 0)


def _dgs_engine(broken: bool) -> Any:
    def run(cases: Sequence[Any]) -> list[Any]:
        seen = [o for o in reference_engine()(cases) if not isinstance(o, Crash)]  # (none crashes)
        # broken: case DGS[BROKEN] loses its first processed event
        return [(outputs, state, processed[1:] if broken and case == DGS[BROKEN] else processed)
                for case, (outputs, state, processed) in zip(cases, seen)]
    return lambda spark=None: run


def test_the_dgs_live_check_runs_every_case_and_saves_a_failure_for_the_live_replay(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:

    monkeypatch.setattr(dgs_live, "streaming_engine", _dgs_engine(False))
    result = SuiteResult("dgs", "spark", 0)
    check = dgs_live_check(DGS, None, 0, str(tmp_path), result)
    assert (check.cases, check.failed, result.failures) == (20, 0, [])
    monkeypatch.setattr(dgs_live, "streaming_engine", _dgs_engine(True))
    check = dgs_live_check(DGS, None, 0, str(tmp_path), result)
    assert check.failed == 1 and result.failures[0].case_index == BROKEN
    assert result.failures[0].oracles == ("processed",) and result.failures[0].replay_file
    record = load_case(result.failures[0].replay_file)
    assert record["engine"] == "spark-streaming"


    assert dgs_replay(record, None)[0] is False  # the (broken) live engine, not the reference


def test_the_oplus_live_check_judges_rows_rounds_and_instances_and_replays_live(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:

    fed: list[Any] = []

    def engine(broken: bool) -> Any:
        def make(faults: frozenset[str], spark: Any = None) -> Any:
            def run(cases: Sequence[tuple[dict[str, Any], int]]) -> list[Any]:
                fed[:] = cases
                seen = []
                for case, per_round in cases:
                    scenario = parse_scenario(case)
                    due = emission_rounds(scenario, per_round, lambda s: rows_of(s, "sequential"))
                    rows = [row for (row, _), n in due.items() for _ in range(n)]
                    rounds = [r for (_, r), n in due.items() for _ in range(n)]
                    where = [(r + int(broken), emitting_instance(scenario, per_round, row[1], r) or 0)
                             for row, r in zip(rows, rounds)]
                    seen.append((rows, where, None))
                return seen
            return run
        return make

    monkeypatch.setattr(oplus_live, "streaming_engine", engine(False))
    result = SuiteResult("oplus", "spark", 0)
    check = oplus_live_check(OPLUS, frozenset(), None, 0, str(tmp_path), result)
    assert (check.cases, check.failed) == (20, 0)
    # every case, a third with a silent source: the live run and the oracles get the same arrival
    assert [i for i, (case, _) in enumerate(fed) if case != OPLUS[i][0]] == list(range(1, 20, LATE_EVERY))
    assert all(oplus_live.silent_prefix(fed[i][0]["inputs"][s]) for i in range(1, 20, LATE_EVERY)
               for s in range(len(fed[i][0]["inputs"])) if fed[i][0]["inputs"][s] != OPLUS[i][0]["inputs"][s])
    monkeypatch.setattr(oplus_live, "streaming_engine", engine(True))  # every row one round late
    check = oplus_live_check(OPLUS, frozenset(), None, 0, str(tmp_path), result)
    with_rows = [c for c, _ in OPLUS if rows_of(parse_scenario(c), "sequential")]
    assert check.failed == len(with_rows) and check.oracle_failures["round"] == len(with_rows)
    record = load_case(result.failures[0].replay_file or "")
    assert record["scheduler"] == "spark-streaming"


    assert oplus_replay(record, None)[0] is False


def _dgs_engine_losing_every_first_event() -> Any:
    def run(cases: Sequence[Any]) -> list[Any]:
        seen = [o for o in reference_engine()(cases) if not isinstance(o, Crash)]
        return [(outputs, state, processed[1:]) for outputs, state, processed in seen]
    return lambda spark=None: run


def test_a_dgs_live_failure_is_shrunk_with_the_live_engine_within_the_budget(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The live engine shrinks the default suite's live failures (saved as drawn they would
    show sizes 0 -> 0, no steps), and ``--shrink-budget 0`` leaves them as drawn."""

    monkeypatch.setattr(dgs_live, "streaming_engine", _dgs_engine_losing_every_first_event())
    result = SuiteResult("dgs", "spark", 0)
    dgs_live_check(DGS, None, 0, str(tmp_path), result)
    shrunk = result.failures[0]
    assert shrunk.oracles == ("processed",) and shrunk.reproduced
    assert 0 < shrunk.shrunk_size < shrunk.original_size and shrunk.shrink_steps > 0
    assert load_case(shrunk.replay_file or "")["engine"] == "spark-streaming"
    kept = SuiteResult("dgs", "spark", 0)
    dgs_live_check(DGS, None, 0, None, kept, shrink_budget=0)
    assert kept.failures[0].shrink_steps == 0
    assert kept.failures[0].shrunk_size == kept.failures[0].original_size == shrunk.original_size


def test_an_oplus_live_failure_is_shrunk_with_the_live_engine_within_the_budget(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:

    def make(faults: frozenset[str], spark: Any = None) -> Any:
        def run(cases: Sequence[tuple[dict[str, Any], int]]) -> list[Any]:
            seen = []
            for case, per_round in cases:  # every row one round late
                scenario = parse_scenario(case)
                due = emission_rounds(scenario, per_round, lambda s: rows_of(s, "sequential"))
                rows = [row for (row, _), n in due.items() for _ in range(n)]
                rounds = [r for (_, r), n in due.items() for _ in range(n)]
                seen.append((rows, [(r + 1, emitting_instance(scenario, per_round, row[1], r) or 0)
                                    for row, r in zip(rows, rounds)], None))
            return seen
        return run

    monkeypatch.setattr(oplus_live, "streaming_engine", make)
    result = SuiteResult("oplus", "spark", 0)
    oplus_live_check(OPLUS, frozenset(), None, 0, str(tmp_path), result)
    shrunk = result.failures[0]
    assert shrunk.oracles == ("round",) and shrunk.reproduced
    assert shrunk.shrunk_size < shrunk.original_size and shrunk.shrink_steps > 0
    assert load_case(shrunk.replay_file or "")["scheduler"] == "spark-streaming"
    kept = SuiteResult("oplus", "spark", 0)
    oplus_live_check(OPLUS, frozenset(), None, 0, None, kept, shrink_budget=0)
    assert kept.failures[0].shrink_steps == 0 and kept.failures[0].shrunk_size == kept.failures[0].original_size


def test_the_dgs_suite_honours_the_shrink_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--shrink-budget N``: at most N candidates (0: none). The DGS and O+ suites honour it
    too (a DGS shrinker that ignored it would always run up to 300 candidates)."""
    original = dgs_oracles.verdicts

    def verdicts(case: Any, observed: Any) -> tuple[Verdict, ...]:  # a "bug" in every case with an event
        planted = (fails(OracleName.OUTPUTS, "planted"),) if any(case.streams.values()) else ()
        return original(case, observed) + planted

    monkeypatch.setattr(dgs_oracles, "verdicts", verdicts)
    shrunk = dgs_suite.run_dgs_suite(cases=20, seed=0).failures[0]
    assert shrunk.shrink_steps > 0 and shrunk.shrunk_size < shrunk.original_size
    kept = dgs_suite.run_dgs_suite(cases=20, seed=0, shrink_budget=0).failures[0]
    assert kept.shrink_steps == 0 and kept.shrunk_size == kept.original_size
