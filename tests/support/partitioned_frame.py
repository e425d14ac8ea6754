"""A DataFrame stand-in for a sink's delivery without Spark: a real Spark ``schema`` (column
metadata included), its ``columns``, and partitions of rows behind the one RDD call a sink
makes on it (``rdd.mapPartitionsWithIndex(f).collect()``)."""

from __future__ import annotations

from itertools import chain
from typing import Any, Callable, Iterator


class Collected:
    """What ``mapPartitionsWithIndex`` returns: ``collect()`` gives the rows."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def collect(self) -> list[Any]:
        return self.rows


class Partitions:
    """The RDD part: ``f(index, iterator)`` over each partition in order."""

    def __init__(self, parts: list[list[tuple[Any, ...]]]) -> None:
        self.parts = parts

    def mapPartitionsWithIndex(self, f: Callable[[int, Iterator[Any]], Iterator[Any]]) -> Collected:  # noqa: N802
        return Collected(list(chain.from_iterable(f(i, iter(p)) for i, p in enumerate(self.parts))))


class PartitionedFrame:
    """``schema`` (a ``pyspark.sql.types.StructType``), ``columns`` and ``rdd`` over ``parts``."""

    def __init__(self, schema: Any, parts: list[list[tuple[Any, ...]]]) -> None:
        self.schema, self.columns, self.rdd = schema, [f.name for f in schema.fields], Partitions(parts)
