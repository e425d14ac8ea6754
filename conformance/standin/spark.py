"""A pure-Python stand-in for the part of Spark the executors' drivers use.

The Fries executor (:class:`spark_impl.reconfig.Executor`) and the DGS batch driver
(:func:`spark_impl.dgs.run_dgs_many`) touch Spark only through ``spark.sparkContext``: its
configuration and ``defaultParallelism``, ``parallelize(items, P)``, RDDs built with
``flatMap``, ``partitionBy(P, f)``, ``mapPartitions``, ``mapPartitionsWithIndex``, ``zip``,
``values`` and ``filter`` (and ``map``, ``glom`` and ``accumulator`` for the O+ drivers), the actions ``count``
and ``collect``, and ``persist``/``localCheckpoint``/``unpersist`` with
``rdd.context.getCheckpointDir()`` (:func:`spark_impl.lineage.cut_lineage`).
:class:`LocalSpark` offers exactly these, in the calling thread, with Spark's semantics where a
driver could depend on them:

* ``parallelize`` slices contiguously (PySpark's rule), ``partitionBy`` sends a pair ``(k, v)``
  to partition ``f(k) mod P`` keeping the upstream order (one order a shuffle may deliver);
* data crosses a stage boundary (a shuffle, ``parallelize``, a read of a persisted RDD) as a
  *pickled copy*, as between Python workers: a task that changes an object it was given in
  place, or keeps it between stages, behaves as on Spark;
* an RDD is recomputed by every action unless persisted (then computed once, by the next
  action); ``zip`` refuses partitions of unequal sizes, as Spark does.

The stage functions, the task and sink files and the drivers' bookkeeping are the executors' own,
so a run on it is a real run of the driver's logic without a JVM: what the Spark-free tests of the
Fries executor (``tests/spark_impl/reconfig/test_fries_standin_runs.py``) and of the DGS driver
(``tests/spark_impl/dgs/``) need for shapes too
costly on Spark (a job 32 levels deep, every DGS case again) or bookkeeping no output shows
(restarts). For sinks, ``createDataFrame(rdd, schema)`` gives a :class:`StandInDataFrame` whose
only action is ``collect`` (the rows as tuples): what a ``CallbackSink`` function that keeps its
deliveries needs (the Fries sink-crash tests). The live O+ front end's
``foreachBatch`` handler (:mod:`spark_impl.oplus.streaming`) needs the same, plus ``map`` on a
micro-batch's ``df.rdd`` (a stand-in micro-batch DataFrame over ``parallelize``,
:class:`conformance.standin.streaming.MicroBatch`). Nothing else of Spark is offered.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable, Iterable, Iterator

Parts = list[list[Any]]


def _unpickled(data: bytes) -> Parts:
    parts: Parts = pickle.loads(data)  # noqa: S301 - our own bytes
    return parts


def _copied(parts: Parts) -> Parts:
    return _unpickled(pickle.dumps(parts))


class StandInRDD:
    """Partitions computed on demand (module docstring)."""

    def __init__(self, context: "StandInContext", compute: Callable[[], Parts]) -> None:
        self.context = context
        self._compute = compute
        self._keep = False
        self._kept: bytes | None = None

    def _parts(self) -> Parts:
        if self._keep and self._kept is None:
            self._kept = pickle.dumps(self._compute())
        return _unpickled(self._kept) if self._kept is not None else self._compute()

    def _then(self, compute: Callable[[Parts], Parts]) -> "StandInRDD":
        return StandInRDD(self.context, lambda: compute(self._parts()))

    def map(self, fn: Callable[[Any], Any]) -> "StandInRDD":
        """``fn`` of every item, partitions kept."""
        return self._then(lambda parts: [[fn(x) for x in part] for part in parts])

    def glom(self) -> "StandInRDD":
        """Each partition as one list (the O+ batch driver)."""
        return self._then(lambda parts: [[list(part)] for part in parts])

    def flatMap(self, fn: Callable[[Any], Iterable[Any]]) -> "StandInRDD":  # noqa: N802 - Spark's name
        return self._then(lambda parts: [[y for x in part for y in fn(x)] for part in parts])

    def mapPartitions(self, fn: Callable[[Iterator[Any]], Iterable[Any]]) -> "StandInRDD":  # noqa: N802
        return self._then(lambda parts: [list(fn(iter(part))) for part in parts])

    def mapPartitionsWithIndex(self, fn: Callable[[int, Iterator[Any]], Iterable[Any]]) -> "StandInRDD":  # noqa: N802
        return self._then(lambda parts: [list(fn(i, iter(part))) for i, part in enumerate(parts)])

    def partitionBy(self, partitions: int, fn: Callable[[Any], int]) -> "StandInRDD":  # noqa: N802
        def shuffle(parts: Parts) -> Parts:
            out: Parts = [[] for _ in range(partitions)]
            for part in parts:
                for pair in part:
                    out[fn(pair[0]) % partitions].append(pair)
            return _copied(out)

        return self._then(shuffle)

    def zip(self, other: "StandInRDD") -> "StandInRDD":
        def pairs(parts: Parts) -> Parts:
            theirs = other._parts()
            if [len(p) for p in parts] != [len(p) for p in theirs]:
                raise ValueError("Can only zip RDDs with same number of elements in each partition")
            return [list(zip(a, b)) for a, b in zip(parts, theirs)]

        return self._then(pairs)

    def persist(self) -> "StandInRDD":
        self._keep = True
        return self

    def localCheckpoint(self) -> "StandInRDD":  # noqa: N802 - Spark's name
        return self

    def unpersist(self) -> "StandInRDD":
        self._keep, self._kept = False, None
        return self

    def values(self) -> "StandInRDD":
        """The second item of every pair."""
        return self._then(lambda parts: [[pair[1] for pair in part] for part in parts])

    def filter(self, keep: Callable[[Any], bool]) -> "StandInRDD":
        """The items ``keep`` accepts."""
        return self._then(lambda parts: [[item for item in part if keep(item)] for part in parts])

    def count(self) -> int:
        return sum(len(part) for part in self._parts())

    def collect(self) -> list[Any]:
        return [item for part in self._parts() for item in part]


class StandInAccumulator:
    """``sc.accumulator(0)``: tasks run in the calling thread, so ``add`` adds."""

    def __init__(self, value: int) -> None:
        self.value = value

    def add(self, amount: int) -> None:
        self.value += amount


class StandInContext:
    """The SparkContext part (module docstring): ``spark.speculation`` is false."""

    def __init__(self, parallelism: int) -> None:
        self.defaultParallelism = parallelism  # noqa: N815 - Spark's name
        self._conf = {"spark.speculation": "false"}

    def getConf(self) -> dict[str, str]:  # noqa: N802 - Spark's name
        """The configuration (a dict has the ``get(key, default)`` the executor calls)."""
        return self._conf

    def getCheckpointDir(self) -> None:  # noqa: N802 - Spark's name
        return None

    def accumulator(self, value: int) -> "StandInAccumulator":
        """``sc.accumulator(value)`` (the O+ batch driver's counters)."""
        return StandInAccumulator(value)

    def parallelize(self, items: Iterable[Any], partitions: int) -> StandInRDD:
        listed = list(items)
        n = len(listed)
        return StandInRDD(self, lambda: _copied([listed[i * n // partitions:(i + 1) * n // partitions]
                                                 for i in range(partitions)]))


class StandInDataFrame:
    """``createDataFrame(rdd, schema)``: the rows of ``rdd`` (tuples, in the schema's column
    order) and the schema's DDL text; ``collect`` recomputes the RDD, as Spark would."""

    def __init__(self, rdd: StandInRDD, schema: str) -> None:
        self.rdd = rdd
        self.schema = schema

    def collect(self) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self.rdd.collect()]


class LocalSpark:
    """The SparkSession part: ``sparkContext`` and ``createDataFrame`` (module docstring)."""

    def __init__(self, parallelism: int = 2) -> None:
        self.sparkContext = StandInContext(parallelism)  # noqa: N815 - Spark's name

    def createDataFrame(self, rdd: StandInRDD, schema: str) -> StandInDataFrame:  # noqa: N802 - Spark's name
        return StandInDataFrame(rdd, schema)
