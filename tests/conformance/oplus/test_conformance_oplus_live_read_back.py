"""The O+ live engine reads the result table as docs/production/types.md ("Results") says a
reader must: a string key that is itself JSON text (``"0"``) is written quoted, and read back
as the string, so the suite compares keys, not their encoding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.oplus.engines.live import read_back
from spark_impl.result_values import to_text


@pytest.mark.spark
def test_string_keys_that_look_like_json_come_back_as_the_strings(spark: Any, tmp_path: Path) -> None:
    keys = ["0", "ann", "[1]"]
    table = pa.table({"job": [0, 0, 0], "batch": [1, 1, 1], "instance": [0, 0, 0], "ts": [10, 10, 10],
                      "key": [to_text(k) for k in keys], "value": ["1", "2", "3"]})
    pq.write_table(table, str(tmp_path / "part-0.parquet"))
    rows, _, _ = read_back(spark, str(tmp_path), [None])[0]
    assert sorted(rows) == sorted((10, k, v) for k, v in zip(keys, ["1", "2", "3"]))
