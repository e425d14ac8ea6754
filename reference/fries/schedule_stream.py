"""Reading SCHEDULE.json straight from the file, in bounded memory.

``json.loads`` of a 900 MB schedule (10M transactions, 50M operations) needs ~15 GB of
Python objects; :func:`read_schedule` never holds more than one chunk of the text
(:data:`CHUNK` characters plus at most one operation) and builds the
:class:`~reference.fries.compact.CompactSchedule` as it goes: 4 bytes per operation plus one
string per distinct transaction id.

How: a small hand-written tokenizer walks the fixed skeleton ``{"logs": {"NAME": [...],
...}}`` (keys decoded by the C ``scanstring``, so escaped keys work), and inside a log a
regular expression consumes whole runs of operations written ``{"txn": "...", "update":
true|false}`` (any whitespace; the ``update`` member optional) at C speed - a possessive
``(?:item ,)*+`` so only complete, comma-terminated operations are taken from a chunk.
Anything else in a log (keys in the other order or escaped, unknown keys, wrong types,
garbage) is decoded as one JSON value by the C decoder with the duplicate-key hook of
:mod:`spec.jsonio` and judged by the spec's own operation parser, so it is accepted or
rejected exactly as the spec does.

Guards equivalent to the whole-file path's: a repeated key (top level, object names, inside
an operation) is an error; an operation longer than :data:`MAX_ITEM` characters, nesting
too deep or an integer too long to convert is an error; malformed text is an error naming
the line and column; not UTF-8 is an error. Every error is one :class:`InputError` line.
A file of at most :data:`SMALL` bytes that the stream reader rejects is re-read whole by
:func:`spec.jsonio.load_json` + :func:`~reference.fries.compact.compact_from_json`, so
small files get exactly the spec's messages (and an unusual but valid small file, e.g.
UTF-16, is still accepted).
"""

from __future__ import annotations

import codecs
import json
import os
import re
from operator import itemgetter
from typing import Any, BinaryIO, Callable

import numpy as np

from reference.fries.compact import (
    CompactSchedule,
    Ids,
    Interner,
    Positions,
    compact_from_json,
    validate_types,
)
from spec.errors import InputError
from spec.fries.schedule import operation_from_json
from spec.jsonio import load_json, parse_json

#: Characters of text decoded per read.
CHUNK = 8 << 20
#: Longest operation object (and object name) accepted, in characters.
MAX_ITEM = 1 << 20
#: Files up to this size that the stream reader rejects are re-read whole for the spec's
#: exact message.
SMALL = 16 << 20

_WS = r"[ \t\n\r]*"
_STRING = r'[^"\\\x00-\x1f]*(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*)*'
_OP = (r"\{" + _WS + r'"txn"' + _WS + ":" + _WS + '"(' + _STRING + ')"' + _WS
       + r"(?:," + _WS + r'"update"' + _WS + ":" + _WS + r"(true|false)" + _WS + r")?\}")
_OP_PLAIN = _OP.replace("(" + _STRING + ")", "(?:" + _STRING + ")").replace(
    "(true|false)", "(?:true|false)")
_FIELDS = re.compile(_OP)
_TXNS = re.compile(_OP.replace("(true|false)", "(?:true|false)"))
_RUN = re.compile(r"(?:" + _WS + _OP_PLAIN + _WS + r",)*+")
_LAST = re.compile(_WS + _OP + _WS + r"\]")
_SPACE = re.compile(_WS)
_TXN, _FLAG = itemgetter(0), itemgetter(1)
_SCANSTRING: Callable[[str, int, bool], tuple[str, int]] = (
    json.decoder.scanstring)  # type: ignore[attr-defined]


def read_schedule(path: str | os.PathLike[str], *, small: int | None = None) -> CompactSchedule:
    """The compact form of the SCHEDULE.json file at ``path`` (module docstring); bad input
    raises one :class:`InputError` naming the file. Rejected files of at most ``small``
    bytes (default :data:`SMALL`) are re-read whole for the spec's exact message."""
    where = str(path)
    try:
        handle = open(path, "rb")
    except OSError:
        load_json(path)  # raises the whole-file path's message (missing, directory, ...)
        raise  # pragma: no cover - load_json raised
    try:
        with handle:
            return _Reader(handle, where).schedule()
    except InputError:
        if os.path.getsize(path) <= (SMALL if small is None else small):
            return compact_from_json(load_json(path), where)
        raise


class _Reader:
    """One pass over the text: ``buf[pos:]`` is the unread part held in memory."""

    def __init__(self, handle: BinaryIO, where: str) -> None:
        self.handle = handle
        self.where = where
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.read_bytes = 0
        self.lines = 0          # newlines before buf[0]
        self.line_start = 0     # offset (into the whole text) where the current line starts
        self.offset = 0         # offset of buf[0] in the whole text

    # --- the text buffer ------------------------------------------------------------------

    def _ensure(self, wanted: int | None = None) -> None:
        """Hold at least ``wanted`` (default :data:`MAX_ITEM`) unread characters, unless the
        file ends first."""
        wanted = MAX_ITEM if wanted is None else wanted
        while not self.eof and len(self.buf) - self.pos < wanted:
            raw = self.handle.read(CHUNK)
            try:
                text = self.decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as error:
                raise InputError(f"not UTF-8 text ({error.reason} at byte "
                                 f"{self.read_bytes + error.start})", self.where) from None
            self.read_bytes += len(raw)
            self.eof = not raw
            self._discard()
            self.buf += text

    def _discard(self) -> None:
        """Drop the consumed part of the buffer, keeping line accounting."""
        gone = self.buf[:self.pos]
        newlines = gone.count("\n")
        if newlines:
            self.lines += newlines
            self.line_start = self.offset + gone.rfind("\n") + 1
        self.offset += self.pos
        self.buf = self.buf[self.pos:]
        self.pos = 0

    def _location(self, pos: int) -> str:
        newlines = self.buf.count("\n", 0, pos)
        start = self.offset + self.buf.rfind("\n", 0, pos) + 1 if newlines else self.line_start
        return f"line {self.lines + newlines + 1} column {self.offset + pos - start + 1}"

    def _malformed(self, problem: str, pos: int | None = None) -> InputError:
        at = self.pos if pos is None else pos
        return InputError(f"malformed JSON: {problem} at {self._location(at)}", self.where)

    def _skip_space(self) -> str:
        """Skip whitespace; the next character ('' at the end of the text)."""
        while True:
            self.pos = _SPACE.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf) or self.eof:
                return self.buf[self.pos:self.pos + 1]
            self._ensure()

    def _expect(self, char: str, what: str) -> None:
        if self._skip_space() != char:
            raise self._malformed(f"expected {what}")
        self.pos += 1

    def _key(self) -> str:
        """A JSON string at ``pos`` (after whitespace), decoded."""
        self._ensure()
        if self._skip_space() != '"':
            raise self._malformed("expected a string in double quotes")
        try:
            text, end = _SCANSTRING(self.buf, self.pos + 1, True)
        except json.JSONDecodeError as error:
            raise self._malformed(error.msg, error.pos) from None
        self.pos = end
        return text

    # --- the skeleton {"logs": {"NAME": [...], ...}} --------------------------------------

    def schedule(self) -> CompactSchedule:
        self._expect("{", "'{' (a schedule is a JSON object)")
        if self._skip_space() == "}":
            raise InputError("missing field 'logs'", f"{self.where}: top level")
        self._top_key()
        self._expect("{", "'{' (logs is a JSON object of per-object logs)")
        interner = Interner()
        txns: dict[str, Ids] = {}
        updates: dict[str, Positions] = {}
        if self._skip_space() == "}":
            self.pos += 1
        else:
            while True:
                name = self._key()
                if name in txns:
                    raise InputError(f"malformed JSON: key {name!r} appears twice in one "
                                     "object", self.where)
                if not name:
                    raise InputError("an object name must be non-empty",
                                     f"{self.where}: logs['']")
                self._expect(":", "':'")
                self._expect("[", f"'[' (the log of {name!r} is a JSON array)")
                txns[name], updates[name] = self._log(name, interner)
                if self._skip_space() == "}":
                    self.pos += 1
                    break
                self._expect(",", "',' or '}'")
        if self._skip_space() == ",":
            self.pos += 1
            self._top_key(repeated=True)
        self._expect("}", "'}'")
        if self._skip_space():
            raise self._malformed("Extra data")
        schedule = CompactSchedule(tuple(txns), interner.names(), txns, updates)
        del interner
        validate_types(schedule, self.where)
        return schedule

    def _top_key(self, repeated: bool = False) -> None:
        key = self._key()
        if key == "logs" and repeated:
            raise InputError("malformed JSON: key 'logs' appears twice in one object",
                             self.where)
        if key != "logs":
            raise InputError(f"unknown field {key!r} (expected one of ['logs'])",
                             f"{self.where}: top level")
        self._expect(":", "':'")

    # --- one log ---------------------------------------------------------------------------

    def _log(self, name: str, interner: Interner) -> tuple[Ids, Positions]:
        """The operations of one log, up to and including its ']'."""
        pieces: list[Ids] = []
        marks: list[int] = []
        count = 0
        while True:
            self._ensure()
            end = _RUN.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if end > self.pos:
                region = self.buf[self.pos:end]
                if '"update"' in region:
                    found = _FIELDS.findall(region)
                    txns, flags = list(map(_TXN, found)), list(map(_FLAG, found))
                else:  # no update member in this run: one group, no flags
                    txns, flags = _TXNS.findall(region), []
                self.pos = end
                count = self._add(name, txns, flags, count, "\\" in region, interner,
                                  pieces, marks)
                continue
            last = _LAST.match(self.buf, self.pos)
            if last is not None:
                txn, flag = last.groups()
                self.pos = last.end()
                count = self._add(name, [txn], [flag], count, "\\" in txn, interner,
                                  pieces, marks)
                break
            if self._skip_space() == "]" and count == 0:
                self.pos += 1
                break
            count = self._add_other(name, count, interner, pieces, marks)
            if self._skip_space() == "]":
                self.pos += 1
                break
            self._expect(",", "',' or ']'")
        ids = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int32)
        return ids, np.array(marks, dtype=np.int64)

    def _add(self, name: str, txns: list[str], flags: list[str], count: int, escaped: bool,
             interner: Interner, pieces: list[Ids], marks: list[int]) -> int:
        """Append operations read by the regular expression; the new count."""
        if escaped:
            txns = [json.loads(f'"{t}"') if "\\" in t else t for t in txns]
        if "" in txns:
            index = count + txns.index("")
            operation_from_json({"txn": ""}, f"{self.where}: logs[{name!r}][{index}]")
        position = -1
        for _ in range(flags.count("true")):
            position = flags.index("true", position + 1)
            marks.append(count + position)
        pieces.append(interner.ids(txns))
        return count + len(txns)

    def _add_other(self, name: str, count: int, interner: Interner, pieces: list[Ids],
                   marks: list[int]) -> int:
        """One operation the regular expression does not take: the C decoder (with the
        duplicate-key hook) and the spec's operation parser judge it."""
        self._skip_space()
        start = self.pos
        value = self._value()
        where = f"{self.where}: logs[{name!r}][{count}]"
        if self.pos - start > MAX_ITEM:
            raise InputError(f"an operation longer than {MAX_ITEM} characters", where)
        op = operation_from_json(value, where)
        if op.update:
            marks.append(count)
        pieces.append(interner.ids([op.txn]))
        return count + 1

    def _value(self) -> Any:
        """One JSON value at ``pos`` (at most :data:`MAX_ITEM` characters), decoded as
        :func:`spec.jsonio.parse_json` would."""
        self._ensure(MAX_ITEM + 1)
        text = self.buf[self.pos:self.pos + MAX_ITEM + 1]
        try:
            value, end = _first_value(text, self.where)
        except json.JSONDecodeError as error:
            if len(text) > MAX_ITEM:
                raise self._malformed(f"{error.msg} (or a value longer than {MAX_ITEM} "
                                      "characters)", self.pos + error.pos) from None
            raise self._malformed(error.msg, self.pos + error.pos) from None
        except RecursionError:
            raise self._malformed("nested too deeply") from None
        except InputError:
            raise
        except ValueError as error:  # e.g. an integer with too many digits
            raise self._malformed(str(error).split("\n")[0]) from None
        self.pos += end
        return value


_DECODER = json.JSONDecoder()


def _first_value(text: str, where: str) -> tuple[Any, int]:
    """The first JSON value of ``text`` and where it ends; a repeated key in it raises
    :mod:`spec.jsonio`'s InputError (it is decoded again with the duplicate-key hook)."""
    _, end = _DECODER.raw_decode(text)
    return parse_json(text[:end], where), end
