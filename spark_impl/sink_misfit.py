"""An output a sink's column cannot hold, reported in one line (the sinks of every live front
end: :mod:`spark_impl.reconfig.sinks`, :mod:`spark_impl.oplus.streaming_sink`,
:mod:`spark_impl.dgs.streaming_sink`).

A sink's ``key_type`` / ``value_type`` of ``long``, ``double`` or ``boolean`` converts each
output (``int``, ``float``, ``bool``: :func:`spark_impl.reconfig.sinks.column_converter`) in
the Spark tasks that read the committed outputs for the delivery. An output that conversion
cannot take (a string or a tuple in a ``long`` column, a number beyond a ``long``'s range)
raises there :func:`misfit`'s :class:`~spec.errors.InputError`: one line naming the column and
its type, the output (its ``repr``, which shows its type: quotes for a string, parentheses for
a tuple), where it came from (job, batch, key, ...) and the fix - a ``string`` column holds
every output. Spark hands the driver that task's error wrapped in a multi-line exception (a
``PythonException`` with the worker's traceback, inside the JVM's stack); :func:`delivering`
finds the line in it again and raises it alone, as an ``InputError`` located at ``sink``: what
the front end's batch raises, so the query fails with it and ``supervised`` prints it as its
one line.

Why it leaves nothing half-written: the error fails the sink's write as a whole (Spark's
Parquet writer aborts the job and removes its staged files, an ``ObjectStoreSink`` writes no
manifest, a ``CallbackSink``'s function gets the error from its first action), and it leaves
the front end's delivery before the delivery is recorded, so the batch is not marked
delivered: a restart with a sink whose columns hold the outputs delivers it, once.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from spec.errors import InputError, one_line

LONG_RANGE = (-(1 << 63), (1 << 63) - 1)
"""The values a ``long`` column holds (Spark's ``LongType``, Arrow's ``int64``)."""

_LINE = re.compile(r"the sink's (?:key|value)_type '\w+' cannot hold .*")


def shown(value: Any, length: int = 80) -> str:
    """``repr(value)`` on one line, at most ``length`` characters (``...`` when cut)."""
    text = one_line(repr(value))
    return text if len(text) <= length else text[:length - 3] + "..."


def misfit(column: str, kind: str, value: Any, where: str) -> InputError:
    """The one-line error of output ``value`` that the sink's ``<column>_type`` ``kind``
    cannot hold; ``where`` says where the output came from (e.g. ``job 0, batch 3, key 'ann'``)."""
    return InputError(f"the sink's {column}_type {kind!r} cannot hold the {column} {shown(value)} "
                      f"({one_line(where)}): give the sink {column}_type='string', which holds every value", "sink")


def fitted(convert: Callable[[Any], Any], column: str, kind: str, value: Any, where: Callable[[], str]) -> Any:
    """``convert(value)`` (the conversion into the sink's ``<column>_type`` ``kind``), or
    :func:`misfit`'s error when it cannot take ``value`` (``where()`` is called only then)."""
    try:
        return convert(value)
    except (TypeError, ValueError, OverflowError):
        raise misfit(column, kind, value, where()) from None


def found_in(error: BaseException) -> InputError | None:
    """The :func:`misfit` line inside ``error`` (raised in a Spark task, so wrapped in Spark's
    multi-line exception) as an ``InputError`` of its own; None for any other error."""
    found = _LINE.search(str(error))
    return None if found is None else InputError(found.group(0), "sink")


@contextmanager
def delivering() -> Iterator[None]:
    """Around a sink's write: an error holding a :func:`misfit` line leaves as that line alone
    (:func:`found_in`, without the wrapper's traceback); any other error unchanged."""
    try:
        yield
    except Exception as error:
        line = found_in(error)
        if line is None:
            raise
        raise line from None
