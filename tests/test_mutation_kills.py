"""Checks added for mutants that survived the default conformance suite (issue 12, item 6;
docs/conformance.md, "Mutation testing"). Each test names the mutant it kills
(``module:operator:occurrence`` in benchmarks/mutation.py's ids) and why the suite could not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spark_impl.reconfig.streaming import BatchLogSource, _read_index


def test_input_index_without_base_counts_every_row(tmp_path: Path) -> None:
    """Kills streaming.py:core/NumberReplacer:23 (``raw.get("base", 0)`` -> ``-1``): the suite's
    queries only read indexes their own version wrote, which always hold ``base``; an index
    written before retention existed (no ``base``, no ``last``) must still count every row."""
    (tmp_path / "index.json").write_text(json.dumps({"batches": [[0, [["b0-p0.jsonl", 3]]], [1, [["b1-p0.jsonl", 2]]]]}))
    index = _read_index(str(tmp_path))
    assert (index.base, index.last, index.count()) == (0, 1, 5)
    assert BatchLogSource("S", str(tmp_path)).count() == 5


@pytest.mark.spark
def test_oplus_scenario_without_items_and_a_request_after_the_last_item(spark: Any) -> None:
    """Kills oplus/driver.py:core/NumberReplacer:21 (``max(1, min(partitions, len(items)))`` ->
    ``max(0, ...)``: a round in which no scenario of the batch has an item parallelizes into 0
    slices and raises; the suite batches 100 scenarios, so no round is ever empty). Also pins
    that a rescale requested after the last item is never applied (the neighbouring survivor
    ``r + 1 < rounds`` -> ``r | 1`` is equivalent: docs/conformance.md)."""
    from collections import Counter

    from reference.oplus.operators.catalogue import to_row
    from reference.oplus.run import execute
    from spec.oplus.scenario import parse_scenario
    from spark_impl.oplus import run_batch

    def rows(found: list[dict[str, Any]]) -> Counter[str]:
        return Counter(json.dumps(r, sort_keys=True) for r in found)

    base = {"operator": "forward", "WA": 1, "WS": 1, "params": {"keys": 1}, "parallelism": 2}
    empty = dict(base, inputs=[[], []], reconfigurations=[])
    assert run_batch(spark, [empty], items_per_round=1).rows == [[]]
    late = dict(base, parallelism=1, inputs=[[{"ts": t, "value": t} for t in range(4)], []],
                reconfigurations=[{"watermark": 100, "parallelism": 3}])
    result = run_batch(spark, [late], items_per_round=1)  # 4 rounds, the last one (r = 3) odd
    assert result.applied == [0] and result.handovers == []
    expected = [to_row(o) for o in execute(parse_scenario(late), "sequential", 0).outputs]
    assert rows(result.rows[0]) == rows(expected) and len(expected) == 4
