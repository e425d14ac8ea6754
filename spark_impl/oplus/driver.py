"""The O+ executor on Spark: rounds of key-partitioned instances, a file sink, and elastic
rescale by state handover at a round boundary (docs/spark-dgs-oplus.md).

**Layout.** The state is an RDD with one element per partition: partition ``j`` is instance
``j`` of every scenario of the batch (``spark_impl.oplus.instance``). Spark fixes the number
of state partitions while a job runs, so the stream runs as a sequence of rounds
(micro-batches), one Spark job each:

1. the round's tuples (``spark_impl.oplus.feed``) are routed SN style: one copy per
   responsible instance, ``crc32(key) % parallelism`` for each key of f_MK(t), and shuffled
   to their instance's partition (``partitionBy`` + ``glom``: one list per partition);
2. ``states.zip(tuples)`` pairs each instance's state with its tuples *without moving the
   state* (a narrow dependency); each task runs :func:`~spark_impl.oplus.instance.process`,
   writes its outputs to the sink and returns the new state;
3. the new states are materialized and their lineage cut (``spark_impl.lineage``), the old ones
   released.

The driver never sees tuples after the source nor any output until the end: outputs go to a
sink directory, one file per (round, partition) written atomically, so a re-executed task
rewrites the same file (idempotent by batch id); :func:`run_batch` reads the sink once, at
the end, for the caller (a bounded final result).

**Elastic rescale at a watermark.** After the round whose watermark reaches a scenario's
reconfiguration watermark, the stream pauses at that batch boundary: one handover job sends
every key state to its instance under the new mapping (``partitionBy`` with the new number of
partitions; keys that keep their instance stay in the same partition index), then the next
round runs with the new parallelism. No tuple is in flight at a boundary and every state moves
whole, so nothing is lost, duplicated or changed; the pause is measured
(:class:`Handover`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Sequence

from spec.errors import InputError
from spec.oplus.scenario import Scenario, instance_of, parse_scenario

from spark_impl.faults import check_faults
from spark_impl.lineage import cut_lineage
from spark_impl.oplus.feed import Feed
from spark_impl.sink import read_parts, write_part
from spark_impl.oplus.instance import PartitionState, ScenarioRound, owners, process
from spark_impl.oplus.operators import Item, OperatorConfig



@dataclass(frozen=True)
class Handover:
    """One elastic rescale: the pause between two rounds while key states moved."""

    after_round: int
    scenarios: tuple[int, ...]
    partitions_before: int
    partitions_after: int
    keys_moved: int
    pause_s: float


@dataclass
class BatchResult:
    """Outputs per scenario (scenario format rows) and what the run cost."""

    rows: list[list[dict[str, Any]]]
    round_seconds: list[float] = field(default_factory=list)
    handovers: list[Handover] = field(default_factory=list)
    applied: list[int] = field(default_factory=list)  # reconfigurations applied per scenario
    emitted: list[list[tuple[int, int]]] = field(default_factory=list)
    """Per scenario, parallel to ``rows``: ``(round, instance)`` that emitted each row (the
    conformance suite's emission-round and instance oracles)."""


def as_scenarios(scenarios: Sequence[Any]) -> list[Scenario]:
    """Parsed scenarios (JSON objects are parsed; InputError names the bad one)."""
    if isinstance(scenarios, (str, bytes)) or not isinstance(scenarios, Sequence):
        raise InputError("expected a list of O+ scenarios", "scenarios")
    return [s if isinstance(s, Scenario) else parse_scenario(s, f"scenarios[{i}]")
            for i, s in enumerate(scenarios)]


def run_batch(spark: Any, scenarios: Sequence[Any], *, faults: Iterable[str] = (),
              items_per_round: int | Sequence[int] = 2, sink_dir: str | None = None) -> BatchResult:
    """Run every scenario of the batch in the same Spark jobs (scenario index in every key).

    ``items_per_round`` is one number for every scenario or one per scenario (each scenario's
    lists are cut into its own rounds; round ``r`` of every scenario is the same Spark job).

    ``faults`` switches on seeded bugs (``window-off-by-one``, ``drop-near-watermark``; other
    names of ``spark_impl.faults.FAULTS`` belong to other executors and do nothing here).
    ``sink_dir`` must be shared storage on a cluster (default: a fresh local temp dir)."""
    parsed = as_scenarios(scenarios)
    wanted = frozenset(faults)
    check_faults(wanted)
    per_round = list(items_per_round) if isinstance(items_per_round, Sequence) else [items_per_round] * len(parsed)
    if len(per_round) != len(parsed):
        raise InputError(f"expected one number per scenario ({len(parsed)}), got {len(per_round)}",
                         "items_per_round")
    feeds = [Feed(s, k) for s, k in zip(parsed, per_round)]
    configs = [OperatorConfig.of(s, "window-off-by-one" in wanted) for s in parsed]
    drop = "drop-near-watermark" in wanted
    sink = sink_dir or tempfile.mkdtemp(prefix="streamproof-oplus-sink-")
    try:
        return _run_rounds(spark.sparkContext, parsed, feeds, configs, drop, sink)
    finally:
        if sink_dir is None:
            shutil.rmtree(sink, ignore_errors=True)


def _run_rounds(sc: Any, parsed: list[Scenario], feeds: list[Feed], configs: list[OperatorConfig], drop: bool,
                sink: str) -> BatchResult:
    """The rounds of :func:`run_batch`, their outputs written under ``sink``."""
    os.makedirs(sink, exist_ok=True)
    parallelism = [s.parallelism for s in parsed]
    result = BatchResult(rows=[[] for _ in parsed], applied=[0] * len(parsed), emitted=[[] for _ in parsed])
    partitions = max(parallelism, default=1)
    states = _materialize(sc.parallelize([{} for _ in range(partitions)], partitions))
    try:
        for r in range(max((f.rounds for f in feeds), default=0)):
            active = [i for i, f in enumerate(feeds) if r < f.rounds]
            plans = round_plans(feeds, configs, parallelism, r, drop)
            items = [(i, item) for i in active for item in feeds[i].items(r)]
            start = time.perf_counter()
            states = _round(sc, states, partitions, items, plans, sink, r)
            result.round_seconds.append(time.perf_counter() - start)
            changed: dict[int, int] = {}
            for i in active:
                if r + 1 < feeds[i].rounds:
                    size, applied = feeds[i].parallelism_after(r)
                    result.applied[i] = applied
                    if size != parallelism[i]:
                        changed[i] = parallelism[i] = size
            if changed:
                live = [parallelism[i] for i, f in enumerate(feeds) if r + 1 < f.rounds]
                states, handover = _handover(sc, states, partitions, max(live), changed, r)
                result.handovers.append(handover)
                partitions = handover.partitions_after
        _read_sink(sink, result.rows, result.emitted)
    finally:
        states.unpersist()
    return result


def round_plans(feeds: Sequence[Feed], configs: Sequence[OperatorConfig], parallelism: Sequence[int], r: int,
                drop: bool) -> dict[int, ScenarioRound]:
    """What round ``r`` tells the instances of every scenario still running (``r < rounds``):
    its operator, the parallelism in force, the watermark after round ``r - 1`` (``previous``:
    -inf before round 0; what the seeded fault ``drop-near-watermark`` compares with) and the
    watermark after round ``r``."""
    return {i: ScenarioRound(configs[i], parallelism[i], f.watermark(r - 1), f.watermark(r), drop)
            for i, f in enumerate(feeds) if r < f.rounds}


def _materialize(rdd: Any) -> Any:
    """Compute ``rdd`` once and cut its lineage (:func:`spark_impl.lineage.cut_lineage`:
    reliably checkpointed when the context has a checkpoint directory, so the state survives
    the loss of an executor)."""
    cut_lineage(rdd)
    rdd.count()
    return rdd


def _round(sc: Any, states: Any, partitions: int, items: list[tuple[int, Item]],
           plans: dict[int, ScenarioRound], sink: str, round_index: int) -> Any:
    routing = {i: (p.op, p.parallelism) for i, p in plans.items()}

    def route(entry: tuple[int, Item]) -> Iterator[tuple[int, tuple[int, Item]]]:
        op, size = routing[entry[0]]
        for instance in sorted(owners(entry[1][3], op, size)):
            yield instance, entry

    tuples = (sc.parallelize(items, max(1, min(partitions, len(items))))
              .flatMap(route).partitionBy(partitions, _identity).glom())

    def run(index: int, pairs: Iterator[tuple[PartitionState, list[Any]]]) -> Iterator[PartitionState]:
        for state, routed in pairs:
            new_state, outputs = process(index, state, [entry for _, entry in routed], plans)
            write_part(sink, f"r{round_index:06d}-p{index:05d}", outputs)
            yield new_state

    new_states = _materialize(states.zip(tuples).mapPartitionsWithIndex(run))
    states.unpersist()
    return new_states


def _handover(sc: Any, states: Any, before: int, after: int, changed: dict[int, int],
              round_index: int) -> tuple[Any, Handover]:
    """Move every key state of the rescaled scenarios to its instance under the new mapping."""
    moved = sc.accumulator(0)

    def split(index: int, parts: Iterator[PartitionState]) -> Iterator[tuple[int, Any]]:
        for state in parts:
            for scenario, keys in state.items():
                size = changed.get(scenario)
                for key, key_state in keys.items():
                    target = index if size is None else instance_of(key, size)
                    if target != index:
                        moved.add(1)
                    yield target, (scenario, key, key_state)

    start = time.perf_counter()
    new_states = _materialize(states.mapPartitionsWithIndex(split)
                              .partitionBy(after, _identity).glom().map(_assemble))
    pause = time.perf_counter() - start
    states.unpersist()
    return new_states, Handover(round_index, tuple(sorted(changed)), before, after,
                                int(moved.value), pause)


def _assemble(entries: list[tuple[int, tuple[int, str, Any]]]) -> PartitionState:
    state: PartitionState = {}
    for _, (scenario, key, key_state) in entries:
        state.setdefault(scenario, {})[key] = key_state
    return state


def _identity(instance: int) -> int:
    return instance


def _read_sink(sink: str, rows: list[list[dict[str, Any]]], emitted: list[list[tuple[int, int]]]) -> None:
    for name, outputs in read_parts(sink):  # name: r<round>-p<instance> (as _round writes it)
        round_part, instance_part = name.split("-")
        where = (int(round_part[1:]), int(instance_part[1:]))
        for scenario, ts, key, value in outputs:
            rows[scenario].append({"ts": ts, "key": key, "value": value})
            emitted[scenario].append(where)
