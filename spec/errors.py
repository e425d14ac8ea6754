"""The one exception type for bad input.

Every parser, validator and loader in streamproof raises :class:`InputError` for input the
user gave that is wrong (malformed JSON, cyclic DAG, unknown operator, asymmetric dependence
relation, ...). The CLI prints it as one line and exits with code 2; library users catch it.
The message must name the problem *and where it is* (file, JSON path, operator name, line).
"""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input: ``where`` locates it (e.g. ``"dag.json: edges[3]"``), ``problem`` says
    what is wrong. ``str(error)`` is the single line the CLI prints."""

    def __init__(self, problem: str, where: str | None = None) -> None:
        self.problem = problem
        self.where = where
        super().__init__(f"{where}: {problem}" if where else problem)

    def located(self, where: str) -> "InputError":
        """The same error with ``where`` prefixed (used when a parser of a nested value is
        called by the parser of its container)."""
        inner = f"{where}: {self.where}" if self.where else where
        return InputError(self.problem, inner)


_LINE_BREAKS = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
                for code in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029)}
"""Control characters and everything ``str.splitlines`` breaks on, escaped."""


def one_line(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (``\\n`` ->
    ``\\x0a``), so a message naming a hostile file name or key stays one line."""
    return text.translate(_LINE_BREAKS)


def cut(text: str, length: int = 80) -> str:
    """``text``, cut to ``length`` characters with ``...`` when longer (a hostile name or
    key cannot make a message megabytes long)."""
    return text if len(text) <= length else text[:length] + "..."
