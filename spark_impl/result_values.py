"""How a sink's ``string`` key and value columns hold user values, losslessly, and how a
reader gets them back (docs/production/types.md, "Results").

Layout version 2 (:data:`VALUES_FORMAT`): a ``string`` column holds, for every non-null value,
the JSON text of its persisted encoding :func:`spark_impl.values.to_json` (strict JSON: no
``NaN`` token; ``Decimal``, dates, datetimes, bytes, non-finite floats as one-tag objects,
tuples as arrays), except that a ``str`` which is not itself JSON text is written as is
(``user-1``, not ``"user-1"``), as layout 1 did. A ``str`` that *is* JSON text (``"3"``,
``'["a"]'``, ``"true"``) is written quoted, so it cannot be read back as a number, a tuple or a
boolean. :func:`from_text` reads both forms: text that parses as JSON is decoded by
:func:`spark_impl.values.from_json`, any other text is the string itself.

Why strings stay bare where they can: layout 1 wrote a string as is, so result tables keyed by
plain strings (the common case) read the same in both layouts, in Spark SQL too
(``WHERE key = 'user-1'``). Ints, finite floats, booleans and tuples of them were already exact
JSON in layout 1 and are unchanged. Only what layout 1 lost or made ambiguous changed: bytes,
``Decimal``, dates, datetimes, times, durations and non-finite floats (layout 1 wrote
``str(value)`` or a bare ``NaN``), and strings that read as other JSON values.

``quote_strings=True`` (the DGS sink, whose layout 1 already quoted every string) writes
strings quoted always; :func:`from_text` reads that as well.

A value without a documented form is written as before where it can be: a list as an array
(read back as a tuple), a dict as a JSON object with sorted keys (read back as a dict unless it
is a one-key object whose key is a tag of the encoding). Anything else is a TypeError.

The version is marked per file, on the column: the sink gives its ``key`` / ``value`` string
columns the field metadata ``{"streamproof.values": 2}`` (:data:`FORMAT_KEY`), which Spark's
Parquet writer keeps in every file it writes; a file whose column has no such mark is layout 1
(written before the mark existed) and its text is returned as is.
"""

from __future__ import annotations

import json
from typing import Any

from spark_impl.values import from_json, to_json

__all__ = ["FORMAT_KEY", "VALUES_FORMAT", "column_format", "from_text", "is_json_text", "to_text"]

FORMAT_KEY = "streamproof.values"
"""The field-metadata key of a string column's layout version."""

VALUES_FORMAT = 2
"""The layout this version writes (1: ``json.dumps(default=str)`` of non-strings, unmarked)."""


def _strict_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def is_json_text(text: str) -> bool:
    """Whether ``text`` parses as strict JSON (``NaN`` and ``Infinity`` do not): the test that
    decides whether a string is written bare or quoted, and whether a text is decoded."""
    try:
        json.loads(text, parse_constant=_strict_constant)
    except ValueError:  # json.JSONDecodeError included
        return False
    return True


def _plain(value: Any) -> Any:
    """``to_json``, extended to lists and dicts (not documented forms; module docstring)."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return to_json(value)


def to_text(value: Any, quote_strings: bool = False) -> str | None:
    """The text of ``value`` in a ``string`` sink column of layout :data:`VALUES_FORMAT`
    (module docstring); None stays None. ``from_text(to_text(v)) == v`` for every documented
    form (a NaN gives a NaN)."""
    if value is None:
        return None
    if isinstance(value, str) and not quote_strings and not is_json_text(value):
        return value
    return json.dumps(_plain(value), sort_keys=True, allow_nan=False)


def from_text(text: str | None) -> Any:
    """The value a layout-2 column's ``text`` holds (module docstring): JSON text decoded by
    :func:`spark_impl.values.from_json` (a JSON object that is no tagged value: the dict), any
    other text the string itself; None stays None."""
    if text is None or not is_json_text(text):
        return text
    raw = json.loads(text)
    try:
        return from_json(raw)
    except (ValueError, ArithmeticError, TypeError, LookupError):  # a dict that only looks tagged
        return raw


def column_format(metadata: dict[str, Any] | None) -> int:
    """The layout version of a string column with field metadata ``metadata`` (1: unmarked)."""
    found = (metadata or {}).get(FORMAT_KEY)
    return int(found) if isinstance(found, (int, str)) and str(found).isdigit() else 1
