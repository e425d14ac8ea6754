"""``spark_impl.sink`` (the O+ and DGS executors' part files) against its docstring, on a
local directory and on a ``file://`` URI: a part reads back as written, empty outputs write
nothing, a re-executed task's write replaces its part, an absent part reads as None, parts are
listed in name order and only ``.pkl`` entries count."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_impl.sink import read_part, read_parts, write_part


@pytest.mark.parametrize("uri", [False, True])
def test_parts_read_back_as_written_in_name_order(tmp_path: Path, uri: bool) -> None:
    sink = f"file://{tmp_path}" if uri else str(tmp_path)
    write_part(sink, "b1-p0", [("x", 1), ("y", (2, None))])
    write_part(sink, "b0-p1", [3])
    write_part(sink, "b2-p0", [])
    write_part(sink, "b0-p1", [4, 5])  # the task ran again: its part is replaced
    if not uri:
        (tmp_path / "notes.txt").write_text("not a part", encoding="utf-8")
    assert list(read_parts(sink)) == [("b0-p1", [4, 5]), ("b1-p0", [("x", 1), ("y", (2, None))])]
    assert read_part(sink, "b9-p9.pkl") is None
