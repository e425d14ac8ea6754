"""One line naming the cause of a dead query's error (the line ``supervised`` prints,
``QueryFailed``'s message; docs/production/operating.md).

A Structured Streaming query's error text is a nest of wrappers around the cause: Spark's
``[FOREACH_BATCH_USER_FUNCTION_ERROR]``, py4j's "An exception was raised by the Python Proxy"
around a Python traceback, which may end in ``py4j.protocol.Py4JJavaError: An error occurred
while calling ...`` around a JVM exception chain (``org...Exception: [ERROR_CLASS] message``,
``Caused by: ...``), often with hundreds of stack-frame lines. The first line of that text names
only the outermost wrapper.

The rule (:func:`describe_error`): every line stating an error - a Python exception line
(``ValueError: bad amount``, ``spec.errors.InputError: ...``), a JVM exception line (with or
without ``Caused by:`` / ``: ``), a bare ``[ERROR_CLASS] message`` line - is a candidate; the
wrappers above are not. The cause is the LAST candidate in the text. Why the last: a JVM chain
prints its root cause last (``Caused by:`` goes inwards), so this is the innermost, most specific
cause (a malformed JSON record: ``[CANNOT_PARSE_JSON_FIELD] Cannot parse the field name 'qty'
and the value three ...``, under ``[MALFORMED_RECORD_IN_PARSING]`` under ``[FAILED_READ_FILE]``);
and a Python traceback prints the exception that propagated last - the user's own exception,
or the one the user's code chose to raise ``from`` another (its message is the one they wrote
for the operator). When the cause is not the outermost error class of the text, that outermost
error class follows in parentheses, because it says where (``[FAILED_READ_FILE.NO_HINT]
Encountered error while reading file file:///.../f00005.json``). No candidate: the first
non-empty line.
"""

from __future__ import annotations

import re

__all__ = ["describe_error"]

_CAUSE_LIMIT = 300
"""Characters of the cause kept (a Spark message can quote a whole record)."""

_WHERE_LIMIT = 200
"""Characters of the ``(in ...)`` part kept."""

_EXCEPTION_LINE = re.compile(
    r"^(?:Caused by:\s*|:\s*)?"
    r"(?:[A-Za-z_$][\w$]*\.)*"
    r"([A-Za-z_$][\w$]*(?:Error|Exception|Throwable|Crash|Killed|Stopped|Exit))"
    r"(?::\s*(.*))?$")
_ERROR_CLASS = re.compile(r"^\[([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)\]\s*(.*)$")
_SQLSTATE = re.compile(r"\s*SQLSTATE:\s*\w+\.?\s*$")
_TERMINATED = "terminated with exception: "

_WRAPPER_CLASSES = frozenset({"FOREACH_BATCH_USER_FUNCTION_ERROR", "STREAM_FAILED"})
_WRAPPER_MESSAGES = ("An exception was raised by the Python Proxy", "An exception was thrown from the Python worker",
                     "An error occurred while calling ")
_WRAPPER_NAMES = frozenset({"Py4JJavaError", "StreamingQueryException", "ForeachBatchUserFuncException"})


class _Cause:
    """One error statement of the text: ``line`` as printed; ``error_class`` when it is one."""

    def __init__(self, line: str, error_class: str | None) -> None:
        self.line = line
        self.error_class = error_class


def describe_error(text: str) -> str:
    """One line naming the cause of a query's error text (the module docstring's rule: the
    last error statement that is not a wrapper, then ``(in <outermost error class>)`` when that
    is another one), else the first non-empty line. The cause is clipped to 300 characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    causes = [cause for line in lines for cause in _causes_of(line)]
    if not causes:
        return _clip(lines[0] if lines else "unknown error", _CAUSE_LIMIT)
    cause = causes[-1]
    outermost = next((c for c in causes if c.error_class is not None), None)
    if outermost is None or outermost.line == cause.line:
        return _clip(cause.line, _CAUSE_LIMIT)
    return f"{_clip(cause.line, _CAUSE_LIMIT)} (in {_clip(outermost.line, _WHERE_LIMIT)})"


def _causes_of(line: str) -> list[_Cause]:
    """The error statements of one line (none, or one; a wrapper's message may hold another,
    e.g. ``... terminated with exception: <cause>``)."""
    if line.startswith(("at ", "File ", "...")):
        return []
    match = _EXCEPTION_LINE.match(line)
    if match is not None:
        name, message = match.group(1), (match.group(2) or "").strip()
        if name in _WRAPPER_NAMES or message.startswith(_WRAPPER_MESSAGES):
            return _inner(message)
        classed = _error_class(message)
        if classed is not None:
            return classed
        return [_Cause(f"{name}: {message}" if message else name, None)]
    return _error_class(line) or []


def _error_class(message: str) -> list[_Cause] | None:
    """``[CLASS] message`` as a cause (none for a wrapper class), or None if not one."""
    match = _ERROR_CLASS.match(message)
    if match is None:
        return None
    name, rest = match.group(1), _SQLSTATE.sub("", match.group(2)).strip()
    if name.split(".")[0] in _WRAPPER_CLASSES:
        return _inner(rest)
    return [_Cause(f"[{name}] {rest}".strip(), name)]


def _inner(message: str) -> list[_Cause]:
    """A wrapper's message may end in the error it wraps (``... terminated with exception: X``)."""
    if _TERMINATED in message:
        return _causes_of(message.split(_TERMINATED, 1)[1].strip())
    return []


def _clip(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:limit - 3] + "..."
