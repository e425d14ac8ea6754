"""A pure-Python stand-in for the part of Spark the DGS batch driver uses (issue 12, session 7).

:func:`spark_impl.dgs.run_dgs_many` touches Spark only through ``spark.sparkContext``:
``parallelize(items, P)``, RDDs built with ``flatMap``, ``partitionBy(P, f)``, ``mapPartitions``,
``mapPartitionsWithIndex`` and ``zip``, the actions ``count`` and ``collect``, and
``persist``/``localCheckpoint``/``unpersist`` with ``rdd.context.getCheckpointDir()``
(:func:`spark_impl.lineage.cut_lineage`). :class:`LocalSpark` offers exactly these, in the calling
thread, with Spark's semantics where the driver could depend on them:

* ``parallelize`` slices contiguously (PySpark's rule), ``partitionBy`` sends a pair ``(k, v)``
  to partition ``f(k) mod P`` keeping the upstream order (one order a shuffle may deliver);
* data crosses a stage boundary (a shuffle, ``parallelize``, a read of a persisted RDD) as a
  *pickled copy*, as between Python workers: a task that changes an object it was given in
  place, or keeps it between stages, behaves as on Spark;
* an RDD is recomputed by every action unless persisted (then computed once, by the next
  action); ``zip`` refuses partitions of unequal sizes, as Spark does.

The stage functions, the sink files and the driver's bookkeeping are the executor's own, so a
run on it is a real run of the driver's logic without a JVM: what the DGS suite's Spark-free
check (:mod:`conformance.dgs_local_check`) needs for shapes too costly on Spark. The Fries
executor's stand-in (:mod:`conformance.fries_local_spark`) offers another part of the API
(no ``zip``, no caching, round-robin slices) for another driver.
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

    def count(self) -> int:
        return sum(len(part) for part in self._parts())

    def collect(self) -> list[Any]:
        return [item for part in self._parts() for item in part]


class StandInContext:
    """The SparkContext part (module docstring)."""

    def getCheckpointDir(self) -> None:  # noqa: N802 - Spark's name
        return None

    def parallelize(self, items: Iterable[Any], partitions: int) -> StandInRDD:
        listed = list(items)
        n = len(listed)
        return StandInRDD(self, lambda: _copied([listed[i * n // partitions:(i + 1) * n // partitions]
                                                 for i in range(partitions)]))


class LocalSpark:
    """The SparkSession part: ``sparkContext``."""

    def __init__(self) -> None:
        self.sparkContext = StandInContext()  # noqa: N815 - Spark's name
