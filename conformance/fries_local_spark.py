"""A pure-Python stand-in for the part of Spark the Fries executor uses (issue 12, session 7).

:class:`spark_impl.reconfig.Executor` touches Spark only through a SparkContext: its
configuration and parallelism, ``parallelize([], P)``, and RDDs built with
``mapPartitionsWithIndex``, ``partitionBy(P, lambda k: k)``, ``values``, ``filter`` and
``collect`` (``driver.Executor._job``). :class:`LocalSpark` implements exactly these, lazily,
in the calling thread: ``collect`` runs every stage's partitions in order, and ``partitionBy``
sends a pair ``(k, v)`` to partition ``f(k) mod P`` (PySpark's rule), keeping the upstream
partitions' order (one of the orders a real shuffle may deliver). The stage functions, the
task files, the control log and the driver's bookkeeping are the executor's own, so a run on
it is a real run of the executor's logic, in one process and without a JVM - what the
Spark-free checks need for shapes too costly on Spark (a job 32 levels deep) or bookkeeping
no output shows (restarts). Nothing else of Spark is offered (no DataFrames: no sinks).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

Parts = list[list[Any]]


class LocalRDD:
    """A lazily computed list of partitions (recomputed by every ``collect``, like an
    uncached RDD)."""

    def __init__(self, compute: Callable[[], Parts]) -> None:
        self._compute = compute

    def mapPartitionsWithIndex(self, fn: Callable[[int, Iterator[Any]], Iterable[Any]]) -> "LocalRDD":  # noqa: N802
        """Spark's ``mapPartitionsWithIndex``."""
        return LocalRDD(lambda: [list(fn(i, iter(part))) for i, part in enumerate(self._compute())])

    def partitionBy(self, partitions: int, fn: Callable[[Any], int]) -> "LocalRDD":  # noqa: N802
        """Spark's ``partitionBy``: pair ``(k, v)`` to partition ``fn(k) % partitions``."""

        def shuffle() -> Parts:
            out: Parts = [[] for _ in range(partitions)]
            for part in self._compute():
                for pair in part:
                    out[fn(pair[0]) % partitions].append(pair)
            return out

        return LocalRDD(shuffle)

    def values(self) -> "LocalRDD":
        """The second item of every pair."""
        return LocalRDD(lambda: [[pair[1] for pair in part] for part in self._compute()])

    def filter(self, keep: Callable[[Any], bool]) -> "LocalRDD":
        """The items ``keep`` accepts."""
        return LocalRDD(lambda: [[item for item in part if keep(item)] for part in self._compute()])

    def collect(self) -> list[Any]:
        """Every item, partition by partition."""
        return [item for part in self._compute() for item in part]


class LocalContext:
    """The SparkContext part: configuration (``spark.speculation`` false), parallelism and an
    empty ``parallelize``."""

    def __init__(self, parallelism: int) -> None:
        self.defaultParallelism = parallelism  # noqa: N815 - Spark's name
        self._conf = {"spark.speculation": "false"}

    def getConf(self) -> dict[str, str]:  # noqa: N802 - Spark's name
        """The configuration (a dict has the ``get(key, default)`` the executor calls)."""
        return self._conf

    def parallelize(self, items: Iterable[Any], partitions: int) -> LocalRDD:
        """``items`` dealt round-robin over ``partitions`` partitions."""
        listed = list(items)
        return LocalRDD(lambda: [listed[i::partitions] for i in range(partitions)])


class LocalSpark:
    """The SparkSession part: ``sparkContext``."""

    def __init__(self, parallelism: int = 2) -> None:
        self.sparkContext = LocalContext(parallelism)  # noqa: N815 - Spark's name
