"""Checks added for mutants that survived the default conformance suite (issue 12, item 6;
docs/conformance.md, "Mutation testing"). Each test names the mutant it kills
(``module:operator:occurrence`` in benchmarks/mutation.py's ids) and why the suite could not."""

from __future__ import annotations

import json
from pathlib import Path

from spark_impl.reconfig.streaming import BatchLogSource, _read_index


def test_input_index_without_base_counts_every_row(tmp_path: Path) -> None:
    """Kills streaming.py:core/NumberReplacer:23 (``raw.get("base", 0)`` -> ``-1``): the suite's
    queries only read indexes their own version wrote, which always hold ``base``; an index
    written before retention existed (no ``base``, no ``last``) must still count every row."""
    (tmp_path / "index.json").write_text(json.dumps({"batches": [[0, [["b0-p0.jsonl", 3]]], [1, [["b1-p0.jsonl", 2]]]]}))
    index = _read_index(str(tmp_path))
    assert (index.base, index.last, index.count()) == (0, 1, 5)
    assert BatchLogSource("S", str(tmp_path)).count() == 5
