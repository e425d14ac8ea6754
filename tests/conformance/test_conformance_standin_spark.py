"""The pure-Python Spark stand-in (:mod:`conformance.standin.spark`): "``parallelize`` slices
contiguously (PySpark's rule)" and ``map`` runs within each partition, keeping it."""

from __future__ import annotations

from conformance.standin.spark import LocalSpark


def test_parallelize_slices_contiguously_and_map_keeps_the_partitions() -> None:
    rdd = LocalSpark(3).sparkContext.parallelize(range(5), 2).map(lambda x: x * 10)
    assert rdd.mapPartitionsWithIndex(lambda i, it: [(i, list(it))]).collect() == [(0, [0, 10]), (1, [20, 30, 40])]
