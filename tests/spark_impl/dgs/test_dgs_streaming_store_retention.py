"""The live DGS checkpoint's retention (``spark_impl/dgs/streaming_store.py``, module
docstring: "the two newest kept" commit records; "Retention: after a delivery every states
prefix but the committed one is deleted, and the records of delivered batches unless
``keep_records``"): ``read`` gives the newest commit, mailboxes included; ``records(b)`` the
records of the batches up to ``b`` in batch order; ``fresh`` empties a location."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.streaming_store import Commit, Store
from spark_impl.sink import write_part


@pytest.fixture()
def store(tmp_path: Path) -> Store:
    """A checkpoint after four batches, each committed with its states and records."""
    store = Store(str(tmp_path / "dgs"))
    assert store.read() is None  # an empty checkpoint has no commit
    for batch in range(4):
        store.write(Commit([("p.py:P", {"root": batch}, 0)], batch, f"b{batch}", [Mailbox({"s0": (batch, "s0")})],
                           batch - 1))
        for name in (f"b{batch}", "other"):
            os.makedirs(store.fresh(store.states_dir(name)), exist_ok=True)
            with open(os.path.join(store.states_dir(name), "p00000.pkl"), "wb") as handle:
                handle.write(b"x")
        write_part(store.fresh(store.records_dir(batch)), "part-0", [(0, "out", batch)])
    return store


def test_the_two_newest_commit_records_are_kept(store: Store) -> None:
    assert len(store.location.list("commits")) == 2


def test_read_gives_the_newest_commit_with_its_mailboxes(store: Store) -> None:
    newest = store.read()
    assert newest is not None
    assert (newest.batch, newest.states, newest.delivered, newest.mailboxes[0].timers) == (3, "b3", 2, {"s0": (3, "s0")})


def test_records_up_to_a_batch_come_in_batch_order(store: Store) -> None:
    assert list(store.records(2)) == [(b, [(0, "out", b)]) for b in range(3)]


def test_prune_keeps_the_committed_states_and_with_keep_records_every_record(store: Store) -> None:
    store.prune(Commit([], 3, "b3", [], 1), keep_records=True)
    assert store.location.list("states") == ["b3"]
    assert store.location.list("records") == [f"b{b:012d}" for b in range(4)]


def test_prune_deletes_the_records_of_delivered_batches(store: Store) -> None:
    store.prune(Commit([], 3, "b3", [], 1), keep_records=False)
    assert store.location.list("records") == [f"b{b:012d}" for b in (2, 3)]


def test_fresh_empties_a_location(store: Store) -> None:
    assert os.listdir(store.fresh(store.records_dir(3))) == []
