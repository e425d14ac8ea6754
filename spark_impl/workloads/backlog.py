"""The backlogged benchmark workload: ``events -> Expensive -> Tally`` (Fries §8.3, §8.6).

``Expensive`` spins for ``cost_ms`` of CPU per tuple (a model's inference), so a micro-batch
of a backlog keeps its tasks busy for seconds; ``Tally`` is cheap. The reconfiguration swaps
``Expensive``'s model for a cheaper one (Fries §8.3: "hot-replace the expensive model"): its
MCS is {Expensive}, every worker is its own component head, so under Fries each worker
switches as soon as the FCM reaches its running task, while the epoch scheduler waits for the
batch boundary.

:func:`plain_run` runs the same operators as a plain PySpark micro-batch pipeline (the state
of each stateful operator kept as a cached RDD and updated every batch, DStream
``updateStateByKey`` style, lineage cut with ``localCheckpoint``): the throughput baseline.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Iterator

from spec.fries.dataflow import Dataflow, dataflow
from spark_impl.reconfig.model import GeneratedSource, Job, Request, Timing, UserOperator, user_job, user_update

KEYS = 1000


def event(index: int) -> tuple[int, Any]:
    """Event ``index``: key and value."""
    return (index * 7919) % KEYS, index % 100


class Expensive:
    """Spin ``cost_ms`` per tuple; state = tuples seen per key; emit value * factor."""

    def __init__(self, cost_ms: float, factor: int) -> None:
        self.cost, self.factor = cost_ms / 1000.0, factor

    def __call__(self, state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        if self.cost:
            end = time.perf_counter() + self.cost
            while time.perf_counter() < end:
                pass
        return (state or 0) + 1, [(key, value * self.factor)]


def tally(state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
    """Running sum per key; emits the new sum."""
    total = (state or 0) + value
    return total, [(key, total)]


def backlog_flow() -> Dataflow:
    """The DAG."""
    return dataflow([("events", "source"), ("Expensive", "one-to-one"), ("Tally", "one-to-one")],
                    [("events", "Expensive"), ("Expensive", "Tally")])


def backlog_job(n: int, *, cost_ms: float, workers: int = 2, batch_size: int = 1000, trace: bool = True) -> Job:
    """The workload over ``n`` events."""
    flow = backlog_flow()
    return user_job(flow, {"Expensive": UserOperator(flow.kind("Expensive"), Expensive(cost_ms, 1)),
                           "Tally": UserOperator(flow.kind("Tally"), tally)},
                    GeneratedSource("events", n, event), parallelism={"Expensive": workers, "Tally": workers},
                    timing=Timing(batch_size=batch_size), trace=trace)


def cheaper_model(cost_ms: float) -> Request:
    """The reconfiguration: a model 10x cheaper, with a new output scale."""
    return Request({"Expensive": user_update(backlog_flow(), "Expensive", Expensive(cost_ms / 10, 2), _same)})


def _same(state: Any) -> Any:
    return state


def plain_run(spark: Any, n: int, *, cost_ms: float, workers: int = 2, batch_size: int = 1000) -> int:
    """Run the same operators as a plain PySpark micro-batch pipeline; return the number of
    outputs (the caller times it)."""
    sc = spark.sparkContext
    partitions = max(1, int(sc.defaultParallelism))
    ops: list[Callable[[Any, int, Any], tuple[Any, list[tuple[int, Any]]]]] = [Expensive(cost_ms, 1), tally]
    states = [sc.parallelize([], partitions).partitionBy(partitions) for _ in ops]
    outputs = 0
    for lo in range(0, n, batch_size):
        hi = min(n, lo + batch_size)
        data = sc.parallelize(range(partitions), partitions).flatMap(_source_slice(lo, hi, partitions))
        new_states = []
        for op, state in zip(ops, states):
            tagged = data.map(lambda kv: (kv[0] % workers, ("in", kv[0], kv[1]))).union(
                state.map(lambda kv: (kv[0] % workers, ("state", kv[0], kv[1]))))
            processed = tagged.partitionBy(partitions).mapPartitions(_apply(op)).cache()
            new_state = processed.filter(lambda r: r[0] == "state").map(lambda r: (r[1], r[2])).partitionBy(partitions)
            new_state.localCheckpoint()  # in place: cut the lineage that grows every batch
            new_states.append(new_state)
            data = processed.filter(lambda r: r[0] == "out").map(lambda r: (r[1], r[2]))
        outputs += data.count()
        for s in new_states:
            s.count()
        states = new_states
    return outputs


def _source_slice(lo: int, hi: int, partitions: int) -> Callable[[int], Iterator[tuple[int, Any]]]:
    def gen(part: int) -> Iterator[tuple[int, Any]]:
        for index in range(lo + part, hi, partitions):
            yield event(index)
    return gen


def _apply(op: Callable[[Any, int, Any], tuple[Any, list[tuple[int, Any]]]]) -> Callable[[Iterable[Any]], Iterator[Any]]:
    def run(records: Iterable[Any]) -> Iterator[Any]:
        state: dict[int, Any] = {}
        inputs = []
        for _, (tag, key, value) in records:
            if tag == "state":
                state[key] = value
            else:
                inputs.append((key, value))
        for key, value in inputs:
            state[key], out = op(state.get(key), key, value)
            for k, v in out:
                yield ("out", k, v)
        for key, value in state.items():
            yield ("state", key, value)
    return run


_MEMORY: dict[tuple[int, int], Any] = {}


def plain_memory_run(spark: Any, n: int, *, cost_ms: float, workers: int = 2, batch_size: int = 1000) -> int:
    """A lower bound for the throughput comparison: the same micro-batches and shuffles, the
    operators' state in the Python workers' memory (not durable, not even guaranteed to
    meet the same worker twice - a cost floor, not a correct pipeline)."""
    sc = spark.sparkContext
    partitions = max(1, int(sc.defaultParallelism))
    ops: list[Callable[[Any, int, Any], tuple[Any, list[tuple[int, Any]]]]] = [Expensive(cost_ms, 1), tally]
    outputs = 0
    for lo in range(0, n, batch_size):
        data = sc.parallelize(range(partitions), partitions).flatMap(_source_slice(lo, min(n, lo + batch_size), partitions))
        for index, op in enumerate(ops):
            data = data.map(lambda kv: (kv[0] % workers, kv)).partitionBy(partitions).mapPartitions(_in_memory(index, op))
        outputs += data.count()
    return outputs


def _in_memory(index: int, op: Callable[[Any, int, Any], tuple[Any, list[tuple[int, Any]]]]
               ) -> Callable[[Iterable[Any]], Iterator[tuple[int, Any]]]:
    def run(records: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        for _, (key, value) in records:
            _MEMORY[(index, key)], out = op(_MEMORY.get((index, key)), key, value)
            yield from out
    return run
