"""The stream reader (reference/fries/schedule_stream.py) reads exactly what the whole-file
path (spec.jsonio + compact_from_json, itself checked against the spec parser) reads, in any
JSON formatting and across chunk boundaries, and rejects bad input with one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference.fries.schedule_stream as stream
from reference.fries.compact import CompactSchedule, compact_from_json
from reference.fries.schedule_stream import read_schedule
from spec.errors import InputError
from spec.jsonio import load_json

_ids = st.sampled_from(["t1", "t2", "R", "S", "é", 'q"}', "a\\b", "{\"txn\":\"x\"}"])
_ops = st.one_of(
    st.fixed_dictionaries({"txn": _ids}),
    st.fixed_dictionaries({"txn": _ids, "update": st.booleans()}),
    st.fixed_dictionaries({"update": st.booleans(), "txn": _ids}),
    st.just({"txn": ""}), st.just({"txn": 3}), st.just({"update": True}), st.just({}),
    st.just({"txn": "t1", "extra": [1, {"a": None}]}), st.just({"txn": "R", "update": 1}),
    st.just([]), st.just("t1"), st.none(),
)
_schedules = st.one_of(
    st.fixed_dictionaries({"logs": st.dictionaries(
        st.sampled_from(["A", "B", "", "C\u00e9"]),
        st.one_of(st.lists(_ops, max_size=12), st.just({}), st.just("x")), max_size=3)}),
    st.just({}), st.just([]), st.just({"logs": []}), st.just({"logs": {}, "x": 1}),
    st.just({"x": 1, "logs": {}}),
)
_formats = st.sampled_from([
    {}, {"indent": 2}, {"separators": (",", ":")}, {"ensure_ascii": False},
    {"indent": "\t", "separators": (" ,", " : ")}])


def _whole(path: Path) -> CompactSchedule | str:
    try:
        return compact_from_json(load_json(path), str(path))
    except InputError as error:
        return str(error)


def _streamed(path: Path) -> CompactSchedule | str:
    try:
        return read_schedule(path, small=0)  # never fall back to the whole-file path
    except InputError as error:
        message = str(error)
        assert "\n" not in message and message.startswith(str(path))
        return message


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_schedules, _formats, st.sampled_from([(1 << 20, 8 << 20), (200, 3), (250, 17)]))
def test_stream_reads_what_the_whole_file_path_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: Any, fmt: dict[str, Any],
        sizes: tuple[int, int]) -> None:
    monkeypatch.setattr(stream, "MAX_ITEM", sizes[0])
    monkeypatch.setattr(stream, "CHUNK", sizes[1])
    path = tmp_path / "s.json"
    path.write_text(json.dumps(value, **fmt), encoding="utf-8")
    whole, streamed = _whole(path), _streamed(path)
    if isinstance(whole, str):
        assert isinstance(streamed, str)
        if "][" in whole:
            assert streamed == whole  # an operation's error: the spec's own message
    else:
        assert streamed == whole


@pytest.mark.parametrize("text, fragment", [
    ('{"logs": {"A": [{"txn": "t1"},]}}', "malformed JSON"),
    ('{"logs": {"A": [{"txn": "t1"}], "A": []}}', "key 'A' appears twice"),
    ('{"logs": {"A": [{"txn": "t1", "txn": "t2"}]}}', "key 'txn' appears twice"),
    ('{"logs": {}, "logs": {}}', "key 'logs' appears twice"),
    ('{"logs": {"A": [{"txn": "t1"}]}} x', "Extra data"),
    ('{"logs": {"A": [{"txn": "t1"', "malformed JSON"),
    ('{"logs": {"A": [{"txn": "t1", "update": ' + "9" * 5000 + "}]}}", "malformed JSON"),
    ('{"logs": {"A": [{"txn": "' + "x" * 300 + '", "update": 1}]}}', "longer than"),
    ('{"logs": {"A": [{"txn": "R", "update": true}], "B": [{"txn": "R"}]}}',
     "function update elsewhere"),
])
def test_bad_input_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                               fragment: str) -> None:
    monkeypatch.setattr(stream, "MAX_ITEM", 200)
    path = tmp_path / "s.json"
    path.write_text(text)
    message = _streamed(path)
    assert isinstance(message, str) and fragment in message


def test_deep_nesting_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"logs": {"A": [' + "[" * 100000 + "]" * 100000 + "]}}")
    assert "nested too deeply" in str(_streamed(path))


def test_not_utf8_and_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"logs": {"A": [{"txn": "\xff"}]}}')
    assert "not UTF-8" in str(_streamed(path))
    with pytest.raises(InputError, match="no such file"):
        read_schedule(tmp_path / "missing.json")


def test_small_rejected_files_get_the_whole_file_message(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"logs": {"A": [{"txn": "t1"},]}}')
    with pytest.raises(InputError) as caught:
        read_schedule(path)
    assert str(caught.value) == _whole(path)


def test_long_logs_across_chunk_boundaries(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "MAX_ITEM", 100)
    monkeypatch.setattr(stream, "CHUNK", 7)
    logs = {f"O{k}": [{"txn": f"t{i}"} if (i + k) % 50 else {"txn": f"R{k}", "update": True}
                      for i in range(400)] for k in range(3)}
    logs["O1"][7] = {"update": False, "txn": "t\u00e9"}
    path = tmp_path / "s.json"
    for fmt in ({}, {"indent": 1}):
        path.write_text(json.dumps({"logs": logs}, **fmt))  # type: ignore[arg-type]
        assert _streamed(path) == _whole(path)
