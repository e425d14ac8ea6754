"""The DGS and O+ suites run non-trivial cases: what the generators
promise, checked on the cases a default run draws; the DGS oracles have teeth; replay files
round-trip."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from spec.dgs.streams import StreamEvent
from spec.dgs.validity import v1_holds, v2_holds
from spec.oplus.scenario import parse_scenario
from reference.dgs.examples import CONSISTENT

from conformance.core.cases import draw_cases
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.oracles import judge
from conformance.dgs.engines.reference import reference_engine
from conformance.dgs.cases import case_from_json, case_to_json, program_of
from conformance.oplus.cases import OPERATORS, oplus_cases
from conformance.oplus.edges import EVERY, KINDS, with_edges
from conformance.oplus.suite import discrepancy
from spec.oplus.emission import round_watermark, rounds

DGS = draw_dgs_cases(60, 0)
OPLUS = draw_cases(oplus_cases(), 100, 0)


def _sync_and_leaf_events(case: Any) -> tuple[int, int]:
    program = program_of(case.name)
    owner = {impl: w for w in case.plan.workers() for impl in w.impl_tags}
    kinds = Counter(bool(owner[(program.tag(item.payload), stream)].children)
                    for stream, items in case.streams.items() for item in items if isinstance(item, StreamEvent))
    return kinds[True], kinds[False]


def test_every_dgs_case_is_non_trivial_and_p_valid() -> None:
    assert Counter(c.name for c in DGS) == {name: 10 for name in CONSISTENT}  # every example, in turn
    for index, case in enumerate(DGS):
        program = program_of(case.name)
        assert v1_holds(program, case.plan) and v2_holds(program, case.plan)
        assert len(case.plan.root.children) == 2
        syncs, leaves = _sync_and_leaf_events(case)
        dense = (index // len(CONSISTENT)) % 3 == 2
        assert (syncs >= 3 and leaves >= 3 and case.inline_below > 0) if dense else (syncs >= 1 and leaves >= 5), case
    assert sum(len(list(c.plan.workers())) >= 5 for c in DGS) > 30  # mostly deeper than one fork
    assert {c.tick for c in DGS} >= {1, 3, 8, 20} and {c.inline_below for c in DGS} >= {0, 2, 5}
    assert sum(c.max_delay > 0 for c in DGS) > 30 and sum(c.max_jitter > 0 for c in DGS) > 20
    ties = sum(1 for c in DGS if len({i.ts for items in c.streams.values() for i in items})
               < sum(len(items) for items in c.streams.values()))
    assert ties > 20  # equal timestamps across streams


def test_dgs_cases_are_reproducible_and_round_trip_through_json() -> None:
    again = draw_dgs_cases(10, 0)
    assert [case_to_json(c) for c in again] == [case_to_json(c) for c in DGS[:10]]
    for case in DGS:
        assert case_from_json(case_to_json(case)) == case


def test_the_reference_plan_executor_passes_every_dgs_case() -> None:
    assert all(not judge(c, seen) for c, seen in zip(DGS, reference_engine()(DGS)))


def test_the_dgs_oracles_catch_a_lost_event_a_wrong_worker_and_a_wrong_state() -> None:
    runs = reference_engine()(DGS[:12])
    # a case whose root processes events (synchronizing events are routed to the root)
    case, (outputs, state, processed) = next(  # type: ignore[misc]
        (c, r) for c, r in zip(DGS, runs) if any(w == c.plan.root.id for w, _, _ in r[2]))  # type: ignore[index]
    assert not judge(case, (outputs, state, processed))
    lost = judge(case, (outputs, state, processed[1:]))
    assert [o for o, _ in lost] == ["processed"] and "never processed" in lost[0][1]
    twice = judge(case, (outputs, state, processed + processed[:1]))
    assert [o for o, _ in twice] == ["processed"]
    leaf = next(w.id for w in case.plan.workers() if not w.children)
    elsewhere = [(leaf if w == case.plan.root.id else case.plan.root.id, key, payload)
                 for w, key, payload in processed]
    moved = judge(case, (outputs, state, elsewhere))
    assert [o for o, _ in moved] == ["processed"] and "responsible worker" in moved[0][1]
    wrong_state = judge(case, (outputs, {"no": "such state"}, processed))
    assert [o for o, _ in wrong_state] == ["state"]


def test_oplus_cases_cover_every_operator_boundary_rescale_and_round_size() -> None:
    scenarios = [s for s, _ in OPLUS]
    for s in scenarios:
        parse_scenario(s)
    operators = Counter(s["operator"] for s in scenarios)
    assert set(operators) == set(OPERATORS) and min(operators.values()) >= 5
    assert {(s["operator"], s.get("WT")) for s in scenarios} >= {(o, wt) for o in OPERATORS[:4]
                                                                 for wt in ("single", "multi")}
    assert {k for _, k in OPLUS} == {1, 2, 3, 4, 5}
    ups = downs = both = 0
    for s in scenarios:
        sizes = [s["parallelism"]] + [r["parallelism"] for r in s["reconfigurations"]]
        up = any(b > a for a, b in zip(sizes, sizes[1:]))
        down = any(b < a for a, b in zip(sizes, sizes[1:]))
        ups, downs, both = ups + up, downs + down, both + (up and down)
    assert ups >= 20 and downs >= 20 and both >= 3
    assert sum(not s["reconfigurations"] and s["parallelism"] > 1 for s in scenarios) >= 5

    def stamps(s: dict[str, Any]) -> list[int]:
        return [i["ts"] for items in s["inputs"] for i in items if "ts" in i]

    assert sum(len(stamps(s)) > len(set(stamps(s))) for s in scenarios) >= 50  # equal timestamps
    at_end = sum(any(b - a == s["WS"] for a in stamps(s) for b in stamps(s)) for s in scenarios)
    assert at_end >= 50  # a tuple exactly at ts + WS of another (window end, ScaleJoin band)
    tight = sum(any("watermark" in x and i + 1 < len(items) and items[i + 1].get("ts") == x["watermark"]
                    for items in s["inputs"] for i, x in enumerate(items)) for s in scenarios)
    assert tight >= 20  # watermark equal to the next tuple's timestamp


@pytest.mark.parametrize("mode", ["sn", "vsn"])
def test_the_reference_executions_pass_every_oplus_case(mode: str) -> None:
    assert [i for i, (s, _) in enumerate(OPLUS) if discrepancy(s, mode, i) is not None] == []


def test_concat_joins_are_order_sensitive_so_a_swapped_join_is_a_wrong_state() -> None:
    program = program_of("concat.py:Concat")
    front, back = program.fork("split", {0: "s"}, frozenset({("pre", 0)}), frozenset({("app", 0)}))
    front = program.update("Front", front, ("pre", 0, "c"))
    back = program.update("Back", back, ("app", 0, "d"))
    assert program.join("concat", front, back) == {0: "csd"}
    assert program.join("concat_back", back, front) == {0: "csd"}  # the mirror fork's join
    assert program.join("concat", back, front) == {0: "dcs"}  # arguments swapped: a different state
    case = next(c for c in DGS if c.name == "concat.py:Concat" and any(
        isinstance(i, StreamEvent) and i.payload[0] == "read" for items in c.streams.values() for i in items))
    outputs, state, processed = reference_engine()([case])[0]  # type: ignore[misc]
    assert not judge(case, (outputs, state, processed))
    assert [o for o, _ in judge(case, (outputs, {0: "zz"}, processed))] == ["state"]


def test_every_third_oplus_case_is_a_targeted_edge_case_hitting_its_edge() -> None:
    drawn = with_edges(OPLUS, 0)
    edges = drawn[EVERY - 1::EVERY]
    assert len(edges) == 33 and drawn[0] == OPLUS[0]
    by_kind = {kind: edges[i::len(KINDS)] for i, kind in enumerate(KINDS)}
    for kind, cases in by_kind.items():
        assert len(cases) >= 5, kind
        for case, per_round in cases:
            scenario = parse_scenario(case)
            marks = {round_watermark(scenario, per_round, r) for r in range(rounds(scenario, per_round))}
            stamps = [i["ts"] for items in case["inputs"] for i in items if "ts" in i]
            if kind == "window-end":  # a round's watermark is exactly a window end with a tuple before it
                ends = {t - t % case["WA"] + case["WS"] for t in stamps} | {
                    t - t % case["WA"] - case["WA"] * j + case["WS"] for t in stamps for j in range(4)}
                assert marks & ends & {t for t in stamps}, case
            elif kind == "join-band":
                left, right = case["inputs"]
                ws = case["WS"]
                assert any(abs(r["ts"] - x["ts"]) in (ws, ws - 1) for x in left for r in right)
            elif kind == "rescale":  # a reconfiguration at a watermark a round boundary reaches exactly
                assert {r["watermark"] for r in case["reconfigurations"]} & marks, case
            elif kind == "pair-distance":
                distance = {"low": 3, "medium": 10}[case["params"]["duplication"]]
                assert all(len(set(i["text"].split())) > distance for i in case["inputs"][0])
    bands = [c for c, _ in by_kind["join-band"]]
    assert any(abs(x["x"] - r["a"]) == c["params"]["band"] and abs(r["ts"] - x["ts"]) < c["WS"]
               for c in bands for x in c["inputs"][0] for r in c["inputs"][1])


