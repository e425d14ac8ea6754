"""The live DGS mailbox with bounded out-of-orderness, no front end and no Spark
(spark_impl/dgs/streaming_input.py, "Bounded out-of-orderness"; the commit record layouts of
spark_impl/dgs/streaming_store.py). The front end's promises are checked in
tests/spark_impl/dgs/test_spark_dgs_lateness.py."""

from __future__ import annotations

import base64
import json
import os
import pickle
import random
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.errors import InputError

from spark_impl.dgs.streaming_input import Mailbox, group_rows, take
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.dgs.streaming_replan import remap_mailbox
from spark_impl.dgs.streaming_store import Commit, Store
from spark_impl.dgs.topology import topology
from support.paths import TESTS

COUNTER = os.path.join(str(TESTS), "support", "dgs_live_programs.py:WordCounter")
STREAMS = ("s0", "s1")
PROGRAM = load_program(COUNTER)
PLAN = keyed_plan(PROGRAM, STREAMS, 2)


def _disordered_batches(seed: int, n: int = 30, spread: int = 8, size: int = 5) -> list[list[str]]:
    """``n`` counter events (timestamps 1..n, streams alternating), each handed over up to
    ``spread`` positions late, in micro-batches of ``size`` rows; then a heartbeat of every
    stream far past the end."""
    rng = random.Random(seed)
    events = [(STREAMS[ts % 2], ts, [rng.choice("iir"), rng.choice(("alice", "bob", "carol"))]) for ts in range(1, n + 1)]
    arrival = sorted(events, key=lambda e: e[1] + rng.randint(0, spread))
    rows = [json.dumps({"stream": s, "ts": ts, "event": e}) for s, ts, e in arrival]
    rows += [json.dumps({"stream": s, "ts": 10 * n, "heartbeat": True}) for s in STREAMS]
    return [rows[i: i + size] for i in range(0, len(rows), size)]


# --- the mailbox, no front end ------------------------------------------------------------------

def test_take_with_allowed_lateness_takes_a_stream_in_timestamp_order_and_reports_late_items() -> None:
    """streaming_input: "An item at or before its stream's watermark when its micro-batch starts
    is *late*"; held items are taken in timestamp order once the watermark passes them."""
    topo = topology(PROGRAM, PLAN)
    box = Mailbox()

    def rows(*items: dict[str, Any]) -> Any:
        return group_rows([json.dumps(i) for i in items], 1, 0)[0]

    later = rows({"stream": "s0", "ts": 5, "event": ["r", "bob"]}, {"stream": "s1", "ts": 6, "heartbeat": True})
    assert take(PROGRAM, topo, box, later, 2, "b0") == ([], [])
    assert box.timers == {"s0": (2, "s0"), "s1": (3, "s1")} and len(box.held) == 1
    earlier = rows({"stream": "s0", "ts": 3, "event": ["i", "bob"]}, {"stream": "s0", "ts": 2, "event": ["i", "bob"]},
                   {"stream": "s1", "ts": 9, "heartbeat": True}, {"stream": "s0", "ts": 8, "heartbeat": True})
    released, late = take(PROGRAM, topo, box, earlier, 2, "b1")
    assert [(e.key, e.payload) for e in released] == [((3, "s0"), ("i", "bob")), ((5, "s0"), ("r", "bob"))]
    assert [(item.index, item.watermark) for item in late] == [(1, 2)]  # ts 2 was at watermark 2
    assert box.timers == {"s0": (5, "s0"), "s1": (6, "s1")} and box.late == {"s0": 1} and box.held == []
    released, late = take(PROGRAM, topo, box, rows({"stream": "s0", "ts": 7, "event": ["r", "bob"]}), 2, "b2")
    assert (released, late, [e.key for e in box.held]) == ([], [], [(7, "s0")])  # 7 > watermark 5: held
    before = (dict(box.timers), list(box.held), dict(box.highest), dict(box.late))
    refused = rows({"stream": "s0", "ts": 1, "event": ["i", "bob"]}, {"stream": "s0", "ts": 11, "event": ["i", "bob"]},
                   {"stream": "s1", "ts": 20, "heartbeat": True}, {"stream": "s0", "ts": 7, "event": ["i", "bob"]})
    with pytest.raises(InputError, match="two events at timestamp 7"):  # after a late, a held and a heartbeat
        take(PROGRAM, topo, box, refused, 2, "b3")
    assert (box.timers, box.held, box.highest, box.late) == before  # "on InputError it is unchanged"
    moved = remap_mailbox(box, topology(PROGRAM, keyed_plan(PROGRAM, STREAMS, 3)))
    assert (moved.timers, moved.highest, moved.late, [e.key for e in moved.held]) == (
        box.timers, box.highest, box.late, [(7, "s0")])


def test_within_one_micro_batch_row_order_does_not_matter() -> None:
    """streaming_input: "Within one micro-batch order does not matter": the same rows in any
    order leave the same mailbox, release the same events and report the same late items, in
    ``(ts, stream)`` order."""
    topo = topology(PROGRAM, PLAN)
    files = _disordered_batches(12)
    rng = random.Random(3)
    boxes = [Mailbox(), Mailbox()]
    for number, batch in enumerate(files):
        items = group_rows(batch, 1, number)[0]
        shuffled = list(range(len(items)))
        rng.shuffle(shuffled)
        results = []
        for box, order in zip(boxes, (range(len(items)), shuffled)):
            given = [items[i] for i in order]
            released, late = take(PROGRAM, topo, box, given, 2, f"file {number}")
            results.append((released, [(given[x.index], x.watermark) for x in late]))
        assert results[0] == results[1]
        late_keys = [(item.ts, stream) for (stream, item), _ in results[0][1]]
        assert late_keys == sorted(late_keys)
        assert boxes[0] == boxes[1]
    assert boxes[0].late and not boxes[0].held and not boxes[0].buffered


# --- the commit record layout -------------------------------------------------------------------

def test_a_commit_record_of_layout_1_is_read_and_a_newer_layout_is_refused(tmp_path: Any) -> None:
    """streaming_store: "a record without ``layout`` is of layout 1 and is read as one (nothing
    held, nothing late)"; "a newer layout is refused with one line"."""
    old = Mailbox({"s0": (7, "s0")})
    state = old.__dict__
    for name in ("held", "highest", "late"):
        del state[name]  # a mailbox pickled by the layout-1 front end has none of these
    raw = Commit([(COUNTER, PLAN.to_json(), 0)], 3, "b3", [old], 3).to_json()
    del raw["layout"]
    raw["mailboxes"] = base64.b64encode(pickle.dumps([old])).decode("ascii")
    box = Commit.from_json(raw).mailboxes[0]
    assert (box.timers, box.held, box.highest, box.late) == ({"s0": (7, "s0")}, [], {"s0": 7}, {})
    with pytest.raises(InputError, match="layout 3: this version reads layouts 1 and 2"):
        Commit.from_json({**raw, "layout": 3})
    store = Store(str(tmp_path / "dgs"))
    store.write(Commit([(COUNTER, PLAN.to_json(), 0)], mailboxes=[Mailbox()]))
    assert store.read() is not None and store.read().mailboxes[0].late == {}  # type: ignore[union-attr]
