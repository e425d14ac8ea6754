"""Reading and writing the JSON files that are streamproof's formats.

Reading: :func:`load_json` turns every failure (missing file, unreadable file, malformed JSON)
into one :class:`~spec.errors.InputError` naming the file and, for syntax errors, the line and
column. Writing: :func:`write_json_atomic` / :func:`write_text_atomic` write to a temporary file
in the same directory and rename it into place, so a crash never leaves a half-written file
where the user expects a result.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from spec.errors import InputError


def load_json(path: str | os.PathLike[str]) -> Any:
    """Parse the JSON file at ``path``; raise :class:`InputError` naming the file on failure."""
    where = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raise InputError("no such file", where) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a JSON file", where) from None
    except OSError as error:
        raise InputError(f"cannot read file ({error.strerror})", where) from None
    return parse_json(raw, where)


class _DuplicateKey(Exception):
    """Raised inside the decoder when an object repeats a key."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses repeated keys: the JSON standard leaves their
    meaning open and Python silently keeps the last one, which could turn a user's
    non-serializable schedule into a serializable one."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def parse_json(raw: bytes | str, where: str) -> Any:
    """Parse JSON text; ``where`` names its origin in the error message. An object that
    repeats a key is an error (see :func:`_object_without_duplicates`)."""
    try:
        return json.loads(raw, object_pairs_hook=_object_without_duplicates)
    except _DuplicateKey as error:
        raise InputError(
            f"malformed JSON: key {error.key!r} appears twice in one object", where
        ) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", where) from None
    except json.JSONDecodeError as error:
        raise InputError(
            f"malformed JSON: {error.msg} at line {error.lineno} column {error.colno}", where
        ) from None


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json_atomic(path: str | os.PathLike[str], value: Any, *, indent: int | None = 2) -> None:
    """Write ``value`` as JSON to ``path`` atomically."""
    write_text_atomic(path, json.dumps(value, indent=indent, sort_keys=False) + "\n")


# --- small typed accessors for validating parsed JSON --------------------------------------


def expect_object(value: Any, where: str) -> Mapping[str, Any]:
    """``value`` as a JSON object, or an InputError at ``where``."""
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {json_type(value)}", where)
    return value


def expect_list(value: Any, where: str) -> Sequence[Any]:
    """``value`` as a JSON array, or an InputError at ``where``."""
    if not isinstance(value, list):
        raise InputError(f"expected a JSON array, got {json_type(value)}", where)
    return value


def expect_str(value: Any, where: str) -> str:
    """``value`` as a non-empty JSON string, or an InputError at ``where``."""
    if not isinstance(value, str) or not value:
        raise InputError(f"expected a non-empty string, got {json_type(value)}", where)
    return value


def expect_int(value: Any, where: str) -> int:
    """``value`` as a JSON integer (not a boolean, not a float), or an InputError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer, got {json_type(value)}", where)
    return value


def expect_bool(value: Any, where: str) -> bool:
    """``value`` as a JSON boolean, or an InputError at ``where``."""
    if not isinstance(value, bool):
        raise InputError(f"expected true or false, got {json_type(value)}", where)
    return value


def reject_unknown_keys(obj: Mapping[str, Any], allowed: set[str], where: str) -> None:
    """Raise an InputError naming the first key of ``obj`` not in ``allowed`` (typos in
    optional fields would otherwise be silently ignored)."""
    for key in obj:
        if key not in allowed:
            raise InputError(f"unknown field {key!r} (expected one of {sorted(allowed)})", where)


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
