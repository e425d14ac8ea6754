"""The shared JSON loader: every guard of spec.jsonio, each a regression
test of a finding (exit 3 or an unbounded read before), through the commands that use it."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from spec.errors import InputError
from spec.jsonio import MAX_DEPTH, MAX_INT_DIGITS, deeper_than, load_json, parse_json
from support.hostile_cli import assert_contract, run
import spec.jsonio

SCHEDULE = '{"logs": {"A": [{"txn": "t1"}, {"txn": "R", "update": true}]}}'
DAG = ('{"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "one-to-one"}],'
       ' "edges": [["S", "A"]]}')
SCENARIO = ('{"operator": "sliding-sum", "WA": 1, "WS": 2, "parallelism": 2,'
            ' "inputs": [[{"ts": 1, "key": "a", "value": 3}]]}')


def _commands(path: str) -> list[list[str]]:
    return [["check-schedule", path], ["check-schedule", path, "--json"],
            ["mcs", path, "--reconfigure", "A"], ["oplus", path, "--json"]]


@pytest.mark.parametrize("text, problem", [
    ("1" * 5000, "an integer of 5,000 digits"),                 # was exit 3 (ValueError)
    ("[" * 100000 + "]" * 100000, "nested more than"),         # was exit 3 (RecursionError)
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "nested more than"),
    ("[1e999]", "too large for a float"),
    ('{"a": NaN}', "NaN is not JSON"),
    ("", "empty, expected a JSON value"),
])
def test_hostile_json_is_one_line_exit_2_in_every_command(
        tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "in.json"
    path.write_text(text)
    for argv in _commands(str(path)):
        outcome = run(argv)
        assert_contract(outcome)
        assert outcome.code == 2 and problem in outcome.err, outcome.describe()


def test_limits_are_inclusive() -> None:
    deep = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(deep, "x") is not None
    assert parse_json("9" * MAX_INT_DIGITS, "x") == int("9" * MAX_INT_DIGITS)
    assert parse_json("-" + "9" * MAX_INT_DIGITS, "x") < 0
    with pytest.raises(InputError, match="1,001 digits"):
        parse_json("-" + "9" * (MAX_INT_DIGITS + 1), "x")


def test_long_digit_strings_are_fine() -> None:
    # the fast pre-check sees digits in strings too; the exact check then accepts them
    text = '["' + "7" * 5000 + '", 12]'
    assert parse_json(text, "x") == ["7" * 5000, 12]


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab:,'),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(alphabet='[]{}"\\a', max_size=3), inner, max_size=3),
                    max_leaves=30))
def test_depth_check_matches_the_real_depth(value: object) -> None:
    def depth(v: object) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    real = depth(value)
    for limit in (0, 1, 2, 3, 5):
        assert deeper_than(raw, limit) == (real > limit), (raw, limit)


def test_dev_zero_is_refused_after_a_bounded_read() -> None:
    # was: read without limit until MemoryError (exit 3)
    with pytest.raises(InputError, match="larger than 1,000 bytes"):
        load_json("/dev/zero", max_bytes=1000)
    outcome = run(["mcs", "/dev/zero", "--reconfigure", "A"], seconds=30)
    assert outcome.code == 2 and "larger than" in outcome.err, outcome.describe()


def test_big_regular_file_is_refused_from_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text("[" + "1," * 600 + "1]")
    with pytest.raises(InputError, match="larger than 1,000 bytes"):
        load_json(path, max_bytes=1000)
    assert load_json(path) == [1] * 601


def test_fifo_without_writer_does_not_hang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spec.jsonio, "FIFO_WAIT", 0.3)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome = run(["mcs", str(fifo), "--reconfigure", "A"], seconds=10)
    assert outcome.code == 2 and "empty" in outcome.err, outcome.describe()


@pytest.mark.parametrize("sent", [b"", b'{"operators": ['], ids=["nothing", "half a document"])
def test_fifo_with_a_silent_writer_is_bad_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                sent: bytes) -> None:
    """spec.jsonio: a FIFO whose writer is connected but sends nothing for FIFO_IDLE seconds is
    bad input (it blocked the loader for as long as the writer stayed, 30 s and more)."""
    monkeypatch.setattr(spec.jsonio, "FIFO_IDLE", 0.3)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    release = threading.Event()

    def writer() -> None:
        with open(fifo, "wb") as handle:
            handle.write(sent)
            handle.flush()
            release.wait(20)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        outcome = run(["mcs", str(fifo), "--reconfigure", "A"], seconds=3)
    finally:
        release.set()
        thread.join(timeout=5)
    assert outcome.code == 2 and "no data for 0.3 s" in outcome.err, outcome.describe()


def test_fifo_with_an_endless_writer_is_read_up_to_the_cap(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stop = threading.Event()

    def writer() -> None:
        try:
            with open(fifo, "wb") as handle:
                while not stop.is_set():
                    handle.write(b"[" * 4096)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        with pytest.raises(InputError, match="larger than 100,000 bytes"):
            load_json(fifo, max_bytes=100_000)
    finally:
        stop.set()
        thread.join(timeout=5)


def test_file_name_with_a_newline_gives_one_line(tmp_path: Path) -> None:
    # was: the error message was two lines
    path = tmp_path / "evil\nname\u2028.json"
    path.write_text("{")
    for argv in _commands(str(path)) + [["mcs", str(tmp_path / "no\nsuch"), "--reconfigure", "A"]]:
        outcome = run(argv)
        assert_contract(outcome)
        assert outcome.code == 2 and "\\x0a" in outcome.err, outcome.describe()


def test_nul_in_a_file_name_is_bad_input() -> None:
    outcome = run(["check-schedule", "a\x00b"])
    assert outcome.code == 2 and "NUL" in outcome.err, outcome.describe()


def test_directory_and_missing_file(tmp_path: Path) -> None:
    assert "is a directory" in run(["check-schedule", str(tmp_path)]).err
    assert "no such file" in run(["check-schedule", str(tmp_path / "x.json")]).err


def test_repeated_key_still_refused_with_the_key_named() -> None:
    with pytest.raises(InputError, match="key 'txn' appears twice"):
        parse_json('{"logs": {"A": [{"txn": "a", "txn": "b"}]}}', "x")
    with pytest.raises(InputError, match="appears twice"):
        parse_json('{"k' + "x" * 5000 + '": 1, "k' + "x" * 5000 + '": 2}', "x")


def test_utf16_input_still_accepted() -> None:
    assert parse_json(json.dumps({"a": [1]}).encode("utf-16"), "x") == {"a": [1]}


@pytest.mark.parametrize("text", [SCHEDULE, DAG, SCENARIO])
def test_valid_inputs_still_pass(tmp_path: Path, text: str) -> None:
    path = tmp_path / "ok.json"
    path.write_text(text)
    assert load_json(path) == json.loads(text)
