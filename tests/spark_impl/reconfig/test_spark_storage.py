"""Task state files are framed (length + BLAKE2b digest): a truncated, extended or bit-flipped
file is refused with a message naming the file, never used (nemesis finding: before
the framing a flipped byte inside a pickled number unpickled silently into a different state)."""

from __future__ import annotations

import os
import pickle

import pytest

from spark_impl.reconfig.storage import (
    HEADER, CorruptStateError, ObjState, TaskFile, read_task_file, task_path, write_task_file,
)


def _written(tmp_path: os.PathLike[str]) -> tuple[str, TaskFile]:
    content = TaskFile(objects={(0, "A#0"): ObjState(states={7: 123456789}, fn_req=1, switched=1)},
                       outputs=[(0, "S", "src:1", 7, 123456789)], logs={(0, "A#0"): [("src:1", False, "src")]})
    path = task_path(str(tmp_path), 3, 1, 0)
    write_task_file(path, content)
    return path, content


def test_round_trip_and_missing(tmp_path: os.PathLike[str]) -> None:
    path, content = _written(tmp_path)
    assert read_task_file(path) == content
    assert read_task_file(task_path(str(tmp_path), 4, 1, 0)) is None  # that task never ran
    assert [n for n in os.listdir(os.path.dirname(path)) if n.endswith(".tmp")] == []


def _damage(path: str, how: str) -> None:
    with open(path, "rb") as handle:
        data = bytearray(handle.read())
    if how == "truncate-payload":
        data = data[:HEADER + (len(data) - HEADER) // 2]
    elif how == "truncate-header":
        data = data[:10]
    elif how == "empty":
        data = bytearray()
    elif how == "extend":
        data += b"\0"
    elif how == "flip-number":  # the state 123456789 inside the pickle: still unpickles without the digest
        at = bytes(data).find((123456789).to_bytes(4, "little"))
        assert at > HEADER
        data[at] ^= 0x01
    elif how == "flip-header":
        data[3] ^= 0x20
    with open(path, "wb") as handle:
        handle.write(bytes(data))


@pytest.mark.parametrize("how", ["truncate-payload", "truncate-header", "empty", "extend", "flip-number",
                                 "flip-header"])
def test_damaged_file_is_refused_with_its_name(tmp_path: os.PathLike[str], how: str) -> None:
    path, _ = _written(tmp_path)
    _damage(path, how)
    with pytest.raises(CorruptStateError) as caught:
        read_task_file(path)
    assert path in str(caught.value) and "refusing to use it" in str(caught.value)


def test_the_flip_would_have_been_used_silently_without_the_digest(tmp_path: os.PathLike[str]) -> None:
    """Why the digest is needed: the flipped pickle alone loads fine, with another state."""
    path, _ = _written(tmp_path)
    _damage(path, "flip-number")
    with open(path, "rb") as handle:
        silently = pickle.loads(handle.read()[HEADER:])
    assert silently.objects[(0, "A#0")].states[7] != 123456789


def test_unframed_old_file_is_refused(tmp_path: os.PathLike[str]) -> None:
    path = task_path(str(tmp_path), 1, 1, 0)
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as handle:
        pickle.dump(TaskFile(), handle)
    with pytest.raises(CorruptStateError, match="no streamproof task-file header"):
        read_task_file(path)
