"""Within the allowed lateness nothing is lost, up to its edge.

docs/production/oplus.md ("Bounded out-of-orderness") and docs/conformance.md ("O+ files
landed out of order"): within the allowed lateness the results equal the reference fed the
event-time-sorted input. The differential check runs every case at its tightest lateness
(``conformance.oplus.engines.disorder.tightest``), where a tuple sits exactly at the watermark
the previous batch left: a front end that takes such a tuple for late is caught there.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.cases import draw_cases
from conformance.oplus.cases import oplus_cases
from conformance.oplus.edges import with_edges
from conformance.oplus.engines import disorder
from conformance.core.verdict import OracleName
from conformance.oplus.oracles import first_failure


def _family(seed: int, drawn: int = 32) -> list[Any]:
    return disorder.family(with_edges(draw_cases(oplus_cases(), drawn, seed), seed))


def _at_watermark(case: Any, lateness: int) -> list[int]:
    """Event times of the tuples that land exactly at their job's watermark after the
    previous file (the documented rule, written out independently of the module)."""
    tops = [float("-inf")] * len(case[0]["inputs"])
    hits: list[int] = []
    for rows in disorder.placed(case):
        watermark = min(tops) - lateness
        hits.extend(item["ts"] for _, _, item in rows if item["ts"] == watermark)
        for source, _, item in rows:
            tops[source] = max(tops[source], item["ts"])
    return hits


def test_the_tightest_lateness_is_the_edge_of_within_the_allowed_lateness() -> None:
    seen_edge = 0
    for seed in range(3):
        for case in _family(seed):
            edge = disorder.tightest(case)
            assert 0 <= edge <= disorder.disorder(case)
            assert disorder.predicted_late(case, edge) == set()  # within: nothing late
            if edge > 0:
                assert disorder.predicted_late(case, edge - 1)  # one unit less: something late
                assert _at_watermark(case, edge)  # so a tuple sits exactly at the watermark
                seen_edge += 1
    assert seen_edge >= 6


def test_a_silent_source_holds_the_edge_at_zero() -> None:
    items = [{"ts": t, "key": "a", "value": 1} for t in (3, 4, 1, 2)]
    scenario = {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 1,
                "inputs": [sorted(items, key=lambda i: i["ts"]), []], "reconfigurations": []}
    # source 1 never delivers: its bound stays -inf, so no watermark and no tuple is late
    assert disorder.tightest((scenario, 2)) == 0
    assert disorder.tightest(({**scenario, "inputs": scenario["inputs"][:1]}, 2)) == 3


@pytest.mark.slow
def test_within_the_allowed_lateness_a_tuple_at_the_watermark_is_kept(spark: Any) -> None:
    cases = _family(0)
    judged, _ = disorder.disorder_verdicts(cases, frozenset({"drop-near-watermark"}), spark)
    found = [f for f in (first_failure(verdicts) for verdicts in judged) if f is not None]
    assert found, "a front end that drops the tuple at the previous watermark passed the out-of-order check"
    assert found[0].oracle is OracleName.OUTPUTS, found[0]
