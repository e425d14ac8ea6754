"""The pure-Python Spark stand-in (:mod:`conformance.standin.spark`) behaves as PySpark does for
what the executors use: its module docstring's promises ("``parallelize`` slices contiguously
(PySpark's rule)", ``map`` keeps the partitions, ``partitionBy`` routes by the partitioner)."""

from __future__ import annotations

from conformance.standin.spark import LocalSpark


def test_parallelize_slices_contiguously_and_map_keeps_the_partitions() -> None:
    rdd = LocalSpark(3).sparkContext.parallelize(range(5), 2).map(lambda x: x * 10)
    assert rdd.mapPartitionsWithIndex(lambda i, it: [(i, list(it))]).collect() == [(0, [0, 10]), (1, [20, 30, 40])]


def test_the_local_spark_shuffles_like_pyspark() -> None:
    """``partitionBy(P, f)`` sends ``(k, v)`` to partition ``f(k) mod P``; ``collect`` reads
    the partitions in order."""
    sc = LocalSpark(3).sparkContext
    rdd = sc.parallelize([], 3).mapPartitionsWithIndex(lambda i, _: [(i + 4, i), (7, -i)])
    shuffled = rdd.partitionBy(3, lambda k: k).mapPartitionsWithIndex(lambda i, it: [(i, v) for _, v in it])
    assert shuffled.collect() == [(0, 2), (1, 0), (1, 0), (1, -1), (1, -2), (2, 1)]
    assert shuffled.values().filter(lambda v: v < 0).collect() == [-1, -2]
