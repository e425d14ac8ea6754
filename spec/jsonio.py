"""Reading and writing the JSON files that are streamproof's formats.

Reading: :func:`load_json` (a file) and :func:`parse_json` (text already in memory) are the one
guarded JSON entry point of every command. Every failure (missing or unreadable file,
malformed JSON, not UTF-8) is one :class:`~spec.errors.InputError` naming the file and, for
syntax errors, the line and column. Hostile input is refused before it can exhaust anything:

* **size**: at most ``max_bytes`` bytes (default :data:`DEFAULT_MAX_BYTES`, 256 MiB; a
  ~100 MB schedule is normal). A larger regular file is refused from its size alone; any
  other file (``/dev/zero``, a pipe, a FIFO) is read up to ``max_bytes + 1`` bytes only. A
  FIFO nobody writes to is waited for :data:`FIFO_WAIT` seconds, then reads as empty; a FIFO
  whose writer is connected but sends nothing for :data:`FIFO_IDLE` seconds (neither data nor
  end of file) is bad input;
* **nesting**: at most :data:`MAX_DEPTH` nested arrays / objects (no ``RecursionError``,
  here or in any later recursive walk of the value);
* **integers**: at most :data:`MAX_INT_DIGITS` digits (Python refuses to convert more than
  4,300; the margin keeps sums of inputs printable); floats must be finite, and the
  non-JSON constants ``NaN`` / ``Infinity`` are refused;
* **repeated keys**: an object that repeats a key is bad input (the JSON standard leaves
  its meaning open, Python would silently keep the last one).

Callers that need more than the default size (a streaming reader, a benchmark) pass
``max_bytes``. Writing: :func:`write_json_atomic` / :func:`write_text_atomic` write to a
temporary file in the same directory and rename it into place, so a crash never leaves a
half-written file where the user expects a result.
"""

from __future__ import annotations

import json
import math
import os
import select
import stat
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from spec.errors import InputError, cut

DEFAULT_MAX_BYTES = 256 << 20
"""Default size limit of one JSON input, in bytes (256 MiB)."""

MAX_DEPTH = 100
"""Deepest nesting of arrays and objects accepted (no streamproof format nests beyond ~10)."""

MAX_INT_DIGITS = 1000
"""Longest integer accepted, in decimal digits."""

FIFO_WAIT = 5.0
"""Seconds a FIFO given as input waits for a writer before it reads as empty."""
FIFO_IDLE = 10.0
"""Seconds a FIFO's connected writer may stay silent (no data, not closed) before the input
is refused."""


class _Idle(Exception):
    """A FIFO's writer stayed silent for :data:`FIFO_IDLE` seconds."""


def load_json(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Parse the JSON file at ``path`` (at most ``max_bytes`` bytes); raise
    :class:`InputError` naming the file on any failure (module docstring)."""
    where = str(path)
    raw = read_bytes(path, max_bytes=max_bytes)
    return parse_json(raw, where)


def read_bytes(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The content of the file at ``path``, refusing more than ``max_bytes`` bytes without
    reading them (module docstring); every failure is an :class:`InputError`."""
    where = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise InputError("no such file", where) from None
    except ValueError:  # an embedded NUL character
        raise InputError("a file name cannot contain a NUL character", where) from None
    except OSError as error:
        raise InputError(f"cannot read file ({error.strerror})", where) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("is a directory, expected a JSON file", where)
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            raise InputError(_too_large(max_bytes), where)
        fifo = stat.S_ISFIFO(info.st_mode)
        if not fifo:
            os.set_blocking(fd, True)
        raw = _read_at_most(fd, max_bytes + 1, fifo)
    except OSError as error:
        raise InputError(f"cannot read file ({error.strerror})", where) from None
    except _Idle:
        raise InputError(f"no data for {FIFO_IDLE:g} s: the pipe's writer is connected but neither writes "
                         "nor closes it", where) from None
    finally:
        os.close(fd)
    if len(raw) > max_bytes:
        raise InputError(_too_large(max_bytes), where)
    return raw


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a regular file (not a directory, FIFO or device; a missing
    or unnameable path is not one either)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _too_large(max_bytes: int) -> str:
    return (f"larger than {max_bytes:,} bytes, the limit of a JSON input "
            "(see docs/cli.md)")


def _read_at_most(fd: int, limit: int, fifo: bool) -> bytes:
    """Read until end of file or ``limit`` bytes, in chunks (no ``limit``-sized buffer is
    allocated for a small pipe). A FIFO is opened without blocking, so that a FIFO nobody
    writes to cannot hang the command: a writer has :data:`FIFO_WAIT` seconds to connect, and
    then may not stay silent for :data:`FIFO_IDLE` seconds (:class:`_Idle`)."""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + FIFO_WAIT
    while size < limit:
        try:
            chunk = os.read(fd, min(limit - size, 1 << 24))
        except BlockingIOError:  # a writer is connected, no data yet
            ready, _, _ = select.select([fd], [], [], FIFO_IDLE)
            if not ready:
                raise _Idle() from None
            continue
        if not chunk:
            if fifo and not chunks and time.monotonic() < deadline:
                time.sleep(0.02)  # no writer yet
                continue
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


class _DuplicateKey(Exception):
    """Raised inside the decoder when an object repeats a key."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _BadNumber(Exception):
    """Raised inside the decoder for a number this reader refuses."""


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` that refuses repeated keys (module docstring). The dict is built
    by C code and only its length compared; the repeated key is looked for only when the
    lengths differ."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _bounded_int(text: str) -> int:
    digits = len(text) - (text[0] == "-")
    if digits > MAX_INT_DIGITS:
        raise _BadNumber(f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS:,} "
                         "are accepted)")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _BadNumber(f"the number {cut(text, 30)} is too large for a float")
    return value


def _no_constant(text: str) -> Any:
    raise _BadNumber(f"{text} is not JSON (only finite numbers are)")


_DIGIT_MAP = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_RUN = b"0" * (MAX_INT_DIGITS + 1)
_BRACKETS = bytes(91 if b in b"[{" else 93 if b in b"]}" else b for b in range(256))
_NOT_BRACKET = bytes(b for b in range(256) if b not in b'[]{}"')


def _has_long_digit_run(raw: bytes) -> bool:
    """Whether ``raw`` holds more than MAX_INT_DIGITS consecutive digits (in a number or a
    string: then the exact, slower per-integer check is used)."""
    return len(raw) > MAX_INT_DIGITS and _LONG_RUN in raw.translate(_DIGIT_MAP)


def deeper_than(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether the *valid* UTF-8 JSON text ``raw`` nests arrays / objects more than
    ``limit`` deep. Linear passes of C string operations: escaped backslashes and quotes are
    dropped, brackets inside strings removed (a character is inside a string iff an odd
    number of quotes precede it, and dropping two adjacent quotes keeps that), then every
    innermost ``[]`` (objects count as arrays) is removed once per level."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = raw.translate(_BRACKETS, _NOT_BRACKET).replace(b'""', b"")
    if b'"' in skeleton:
        skeleton = b"".join(skeleton.split(b'"')[::2])
    for _ in range(limit):
        if not skeleton:
            return False
        skeleton = skeleton.replace(b"[]", b"")
    return bool(skeleton)


def parse_json(raw: bytes | str, where: str, *, max_bytes: int | None = None) -> Any:
    """Parse JSON text; ``where`` names its origin in the error message. Guards of the
    module docstring (``max_bytes`` bounds ``raw``'s length when given)."""
    if max_bytes is not None and len(raw) > max_bytes:
        raise InputError(_too_large(max_bytes), where)
    if not raw or raw.isspace():
        raise InputError("empty, expected a JSON value", where)
    utf8 = _as_utf8(raw, where)
    exact_ints = _has_long_digit_run(utf8)
    try:
        value = json.loads(
            raw, object_pairs_hook=_object_without_duplicates,
            parse_int=_bounded_int if exact_ints else None,
            parse_float=_finite_float, parse_constant=_no_constant)
    except _DuplicateKey as error:
        raise InputError(
            f"malformed JSON: key {cut(repr(error.key), 80)} appears twice in one object", where
        ) from None
    except _BadNumber as error:
        raise InputError(f"malformed JSON: {error}", where) from None
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", where) from None
    except json.JSONDecodeError as error:
        at = "" if error.msg.endswith(" at") else " at"  # "Unterminated string starting at"
        raise InputError(
            f"malformed JSON: {error.msg}{at} line {error.lineno} column {error.colno}", where
        ) from None
    except RecursionError:
        raise InputError(_too_deep(), where) from None
    except ValueError as error:  # Python's own integer limit (4,300 digits)
        raise InputError(f"malformed JSON: {str(error).splitlines()[0]}", where) from None
    if deeper_than(utf8):
        raise InputError(_too_deep(), where)
    return value


def _too_deep() -> str:
    return f"malformed JSON: nested more than {MAX_DEPTH} levels deep"


def _as_utf8(raw: bytes | str, where: str) -> bytes:
    """``raw`` as UTF-8 bytes for the byte-level guards (ASCII structure characters never
    occur inside a UTF-8 multi-byte sequence)."""
    if isinstance(raw, str):
        return raw.encode("utf-8", "surrogatepass")
    encoding = json.detect_encoding(raw)
    if encoding in ("utf-8", "utf-8-sig"):
        return raw
    try:
        return raw.decode(encoding, "surrogatepass").encode("utf-8", "surrogatepass")
    except UnicodeDecodeError as error:
        raise InputError(f"not UTF-8 text ({error.reason} at byte {error.start})", where) from None


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
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


def expect_str(value: Any, where: str, *, empty: bool = False) -> str:
    """``value`` as a non-empty JSON string (``empty=True``: possibly empty), or an
    InputError at ``where``."""
    if not isinstance(value, str) or not (value or empty):
        wanted = "a string" if empty else "a non-empty string"
        raise InputError(f"expected {wanted}, got {json_type(value)}", where)
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
            raise InputError(f"unknown field {cut(repr(key), 80)} (expected one of "
                             f"{sorted(allowed)})", where)


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {cut(repr(value), 40)}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
