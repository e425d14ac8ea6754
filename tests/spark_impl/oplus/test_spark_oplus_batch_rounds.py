"""The O+ batch executor's rounds and its operator configuration (``spark_impl.oplus``,
docs/spark-dgs-oplus.md):

* a round in which no scenario of the batch has an item runs (it parallelizes into at least
  one slice), and a rescale requested after the last item is never applied;
* ``OperatorConfig.of`` has the seeded fault ``window-off-by-one`` off unless the caller asks
  for it: the default is the API a new caller gets.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from reference.oplus.operators.catalogue import to_row
from reference.oplus.run import execute
from spec.oplus.scenario import parse_scenario
from spark_impl.oplus import run_batch
from spark_impl.oplus.operators import OperatorConfig, in_window


def _rows(found: list[dict[str, Any]]) -> Counter[str]:
    return Counter(json.dumps(r, sort_keys=True) for r in found)


@pytest.mark.spark
def test_a_round_without_items_runs_and_a_rescale_after_the_last_item_is_never_applied(spark: Any) -> None:
    base = {"operator": "forward", "WA": 1, "WS": 1, "params": {"keys": 1}, "parallelism": 2}
    empty = dict(base, inputs=[[], []], reconfigurations=[])
    assert run_batch(spark, [empty], items_per_round=1).rows == [[]]
    late = dict(base, parallelism=1, inputs=[[{"ts": t, "value": t} for t in range(4)], []],
                reconfigurations=[{"watermark": 100, "parallelism": 3}])
    result = run_batch(spark, [late], items_per_round=1)  # 4 rounds, the last one (r = 3) odd
    assert result.applied == [0] and result.handovers == []
    expected = [to_row(o) for o in execute(parse_scenario(late), "sequential", 0).outputs]
    assert _rows(result.rows[0]) == _rows(expected) and len(expected) == 4


def test_the_operator_config_has_the_seeded_fault_off_unless_asked() -> None:
    scenario = parse_scenario({"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 1,
                               "inputs": [[{"ts": 0, "key": "a", "value": 1}]], "reconfigurations": [], "params": {}})
    config = OperatorConfig.of(scenario)
    assert not config.off_by_one and OperatorConfig.of(scenario, True).off_by_one
    assert not in_window(config, 0, 4) and in_window(OperatorConfig.of(scenario, True), 0, 4)  # ts = L + WS
