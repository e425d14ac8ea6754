"""The live Fries front end's input index stays readable across layouts
(``spark_impl.reconfig.streaming``): an index written before retention existed holds no
``base`` and no ``last``; it starts at batch 0 and every indexed row counts."""

from __future__ import annotations

import json
from pathlib import Path

from spark_impl.reconfig.streaming import BatchLogSource


def test_an_input_index_without_base_counts_every_row(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text(json.dumps({"batches": [[0, [["b0-p0.jsonl", 3]]], [1, [["b1-p0.jsonl", 2]]]]}))
    assert BatchLogSource("S", str(tmp_path)).count() == 5
