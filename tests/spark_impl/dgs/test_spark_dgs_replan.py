"""Re-planning a live DGS query (spark_impl.dgs.streaming_replan, ``DgsStreamingRun.replan``):
the job's leaf states joined by the old plan and forked by the new one keep the job's state;
waiting events move to the new plan's workers; on a live query, a re-plan while it runs and a
restart with another plan give the sequential program's outputs exactly once."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json
from spec.errors import InputError

from spark_impl.dgs.release import Released
from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.dgs.streaming_replan import remap_mailbox, replan_states
from spark_impl.dgs.tasks import Layout, fork_down, join_up
from spark_impl.dgs.topology import topology
from spark_impl.keys import route
from support.paths import TESTS
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.reconfig.sinks import ParquetSink

COUNTER = os.path.join(str(TESTS), "support", "dgs_live_programs.py:WordCounter")
STREAMS = ("s0", "s1")
KEYS = ("alice", "bob", "carol", "dave", "eve")


def test_replan_states_keeps_the_job_state_and_puts_each_key_on_its_new_leaf() -> None:
    program = load_program(COUNTER)
    old = Layout((COUNTER, COUNTER), (topology(program, keyed_plan(program, STREAMS, 2)),
                                      topology(program, keyed_plan(program, STREAMS, 3))))
    new = Layout(old.targets, (topology(program, keyed_plan(program, STREAMS, 4)), old.topos[1]))
    state = {key: n + 1 for n, key in enumerate(KEYS)}
    leaves = {(job, leaf): s for job, topo in enumerate(old.topos)
              for leaf, s in fork_down(program, topo, topo.plan.root.id, state).items()}
    leaves[(1, 0)] = {"marker": 99}  # job 1 is not re-planned: its leaves stay exactly as they are
    parts = replan_states(leaves, old, new, [program, program], frozenset({0}))
    assert len(parts) == 4
    assert all(job == 1 or slot_part == leaf for slot_part, part in enumerate(parts) for job, leaf in part)
    after = {slot: s for part in parts for slot, s in part.items()}
    assert {leaf for job, leaf in after if job == 0} == {0, 1, 2, 3}
    assert {slot: s for slot, s in after.items() if slot[0] == 1} == {s: v for s, v in leaves.items() if s[0] == 1}
    topo = new.topos[0]
    joined = join_up(program, topo, topo.plan.root.id, {leaf: s for (job, leaf), s in after.items() if job == 0})
    assert program.states_equal(program.initial, joined, state)
    for key, count in state.items():  # each count on the leaf that serves the key's read-resets
        assert after[(0, route(key, 4))].get(key) == count


def test_remap_mailbox_moves_waiting_events_to_the_new_plans_workers() -> None:
    program = load_program(COUNTER)
    two, four = (topology(program, keyed_plan(program, STREAMS, n)) for n in (2, 4))
    waiting = [Released((3, "s0"), ("r", key), "s0", ("r", key), two.worker_of(("r", key), "s0")) for key in KEYS]
    box = remap_mailbox(Mailbox({"s0": (3, "s0")}, waiting), four)
    assert box.timers == {"s0": (3, "s0")}
    assert [e.worker for e in box.buffered] == [four.leaves[route(key, 4)] for key in KEYS]
    assert [e.key for e in box.buffered] == [e.key for e in waiting]


def _streams(seed: int, n: int) -> dict[str, list[Any]]:
    rng = random.Random(seed)
    streams: dict[str, list[Any]] = {s: [] for s in STREAMS}
    for ts in range(1, n + 1):
        streams[STREAMS[ts % 2]].append(StreamEvent(ts, (rng.choice("iir"), rng.choice(KEYS))))
    for stream in STREAMS:
        streams[stream].append(Heartbeat(n + 1))
    return streams


def _land(directory: str, number: int, items: list[tuple[int, str, Any]]) -> None:
    rows = [json.dumps({"stream": s, "ts": ts, **({"event": value_to_json(i.payload)}
                                                  if isinstance(i, StreamEvent) else {"heartbeat": True})})
            for ts, s, i in items]
    tmp = os.path.join(directory, f".f{number}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write("".join(r + "\n" for r in rows))
    os.utime(tmp, (1_700_000_000 + number, 1_700_000_000 + number))
    os.replace(tmp, os.path.join(directory, f"f{number:04d}.json"))


def test_live_replan_and_restart_with_another_plan_exactly_once(spark: Any, tmp_path: Any) -> None:
    """A 2-leaf plan, re-planned to 3 leaves while the query runs (events waiting in the
    mailbox), then a driver stop and a restart with a 1-leaf plan (re-planned at start): the
    Parquet table holds spec(sort(u)) exactly once and the final state is the sequential one."""
    program = load_program(COUNTER)
    source, ckpt, table = (str(tmp_path / n) for n in ("in", "ckpt", "out"))
    os.makedirs(source)

    def start(leaves: int) -> Any:
        stream = spark.readStream.option("maxFilesPerTrigger", 1).text(source)
        return start_dgs_query(spark, [LiveJob(COUNTER, keyed_plan(program, STREAMS, leaves))], stream,
                               checkpoint_dir=ckpt, sink=ParquetSink(table))

    streams = _streams(3, 36)
    items = sorted(((i.ts, s, i) for s, found in streams.items() for i in found), key=lambda x: x[:2])
    chunks = [items[k: k + 8] for k in range(0, len(items), 8)]
    run = start(2)
    with pytest.raises(InputError):
        run.replan({"root": "nonsense"})
    for number in range(3):
        _land(source, number, chunks[number])
        run.process_all()
        if number == 0:
            assert run.committed().mailboxes[0].buffered, "the test needs events waiting at the re-plan"
            run.replan(keyed_plan(program, STREAMS, 3))
    assert run.replanned == [(1, 0)]
    assert len(run.layout.topos[0].leaves) == 3
    run.stop()
    run = start(1)  # another plan on the same checkpoint: re-planned at start
    assert len(run.layout.topos[0].leaves) == 1
    for number in range(3, len(chunks)):
        _land(source, number, chunks[number])
        run.process_all()
    final = run.final_states()
    run.stop()
    got = Counter(json.dumps(json.loads(r["value"])) for r in spark.read.parquet(table).collect())
    expected_state, expected = spec_run(program, sort_streams(streams))
    assert got == Counter(json.dumps(value_to_json(x)) for x in expected)
    assert program.states_equal(program.initial, final[0], expected_state)
    assert len(os.listdir(os.path.join(ckpt, "dgs", "states"))) == 1
