"""Pure-Python stand-ins for the Structured Streaming objects the live front ends touch before
and around Spark: a streaming DataFrame (:class:`Stream`) whose ``writeStream``
(:class:`Writer`) records what the front end configures and keeps its ``foreachBatch`` handler
for the caller to invoke, the started query (:class:`Query`), and the micro-batch DataFrames a
handler reads (:class:`MicroBatch` over :class:`~conformance.standin.spark.LocalSpark`'s
``parallelize``, :class:`Frame` of one column's rows).

With them a check calls the front ends' handlers batch by batch in this process, on the
pure-Python Spark of :mod:`conformance.standin.spark`; nothing here runs a query.
"""

from __future__ import annotations

from typing import Any, Sequence


class Query:
    """A stand-in for a ``StreamingQuery``: active until ``stop()``."""

    isActive = True  # noqa: N815 - Spark's name

    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        """Stop the query (``isActive`` False, ``stopped`` True)."""
        self.stopped = True
        self.isActive = False


class Writer:
    """A stand-in for ``DataStreamWriter``: records the options, the trigger and the
    ``foreachBatch`` handler a front end configures; ``start()`` gives :attr:`query`."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.trigger_args: dict[str, Any] | None = None
        self.handler: Any = None
        self.query = Query()

    def foreachBatch(self, handler: Any) -> "Writer":  # noqa: N802 - Spark's name
        """Keep ``handler`` (the caller invokes it with each micro-batch)."""
        self.handler = handler
        return self

    def option(self, name: str, value: Any) -> "Writer":
        """Record one option."""
        self.options[name] = value
        return self

    def trigger(self, **kwargs: Any) -> "Writer":
        """Record the trigger."""
        self.trigger_args = kwargs
        return self

    def start(self) -> Query:
        """The started query (never runs anything)."""
        return self.query


class Stream:
    """A stand-in for a streaming DataFrame: ``isStreaming``, ``columns`` and a recording
    ``writeStream`` (what a front end reads before Spark)."""

    def __init__(self, streaming: bool = True, columns: Sequence[str] = ("ts", "key", "value")) -> None:
        self.isStreaming, self.columns = streaming, list(columns)
        self.writeStream = Writer()

    @property
    def handler(self) -> Any:
        """The ``foreachBatch`` handler the front end registered (None before)."""
        return self.writeStream.handler


class MicroBatch:
    """One micro-batch's DataFrame: ``select(...).rdd`` over its rows (2 partitions of
    ``spark.sparkContext.parallelize``)."""

    def __init__(self, spark: Any, rows: list[Any]) -> None:
        self.rdd = spark.sparkContext.parallelize(rows, 2)

    def select(self, *columns: str) -> "MicroBatch":
        """The same batch (its rows already have the selected columns)."""
        return self


class Frame:
    """A micro-batch DataFrame of rows of one column: ``select(column).collect()``."""

    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def select(self, column: str) -> "Frame":
        """The same frame (it has one column)."""
        return self

    def collect(self) -> list[tuple[Any]]:
        """The rows as one-column tuples."""
        return [(row,) for row in self.rows]
