"""Hypothesis strategies that turn a valid JSON input into a hostile one.

:func:`mutated` draws one of: byte flips, truncation, deletion or duplication of a key (the
duplicate written as a repeated key in the text), a type swap at a random node, a huge or
non-finite number, deep nesting, lone surrogates and very long strings, or no change. The
mutation is applied to the parsed value where possible and serialized with
:func:`json.dumps`; fragments ``json.dumps`` cannot write (a 5,000-digit integer, a repeated
key, ``NaN``) are spliced in as raw text through placeholders.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from hypothesis import strategies as st

Path_ = tuple[Any, ...]

SWAPS: list[Any] = [None, True, False, 0, -1, 1.5, "", "x", [], {}, [[]], {"": None}]
NUMBERS = ["9" * 19, "-" + "9" * 19, "1" + "0" * 400, "9" * 1000, "9" * 1001, "7" * 5000,
           "1e308", "1e999", "-1e999", "NaN", "Infinity", "-0", "0.0", "1E400", str(2**63),
           str(-2**63 - 1), "4" * 4300, "1" * 4301]
STRINGS = ["\ud800", "\udfff", "a\ud800b", "\x00", "line\nbreak", "\u2028", " pad ", "a,b",
           "x" * 100_000, "\U0001f600", "é"]


def _paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    found = [prefix]
    if isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, prefix + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, prefix + (key,))
    return found


def _replace(value: Any, path: Path_, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, list):
        copy = list(value)
        copy[head] = _replace(value[head], rest, new)
        return copy
    copy_d = dict(value)
    copy_d[head] = _replace(value[head], rest, new)
    return copy_d


class _Raw:
    """Placeholders for raw JSON fragments."""

    def __init__(self) -> None:
        self.fragments: dict[str, str] = {}

    def put(self, text: str) -> str:
        token = f"@@raw{len(self.fragments)}@@"
        self.fragments[token] = text
        return token

    def render(self, value: Any) -> str:
        text = json.dumps(value)
        for token, fragment in self.fragments.items():
            text = text.replace(json.dumps(token), fragment)
        return text


@st.composite
def mutated(draw: Callable[..., Any], text: str) -> str:
    """``text`` (valid JSON) after one hostile mutation (module docstring)."""
    value = json.loads(text)
    kind = draw(st.sampled_from(["flip", "truncate", "delete", "duplicate", "swap", "number",
                                 "nest", "string", "none"]))
    if kind == "flip":
        data = bytearray(text.encode("utf-8"))
        for _ in range(draw(st.integers(1, 3))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data).decode("utf-8", "surrogateescape")
    if kind == "truncate":
        return text[:draw(st.integers(0, max(0, len(text) - 1)))]
    if kind == "none":
        return text
    paths = _paths(value)
    path = draw(st.sampled_from(paths))
    node = _at(value, path)
    raw = _Raw()
    if kind in ("delete", "duplicate"):
        objects = [p for p in paths if isinstance(_at(value, p), dict) and _at(value, p)]
        if not objects:
            return text
        path = draw(st.sampled_from(objects))
        node = _at(value, path)
        key = draw(st.sampled_from(sorted(node)))
        if kind == "delete":
            return json.dumps(_replace(value, path, {k: v for k, v in node.items() if k != key}))
        pairs = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in node.items()]
        pairs.append(f"{json.dumps(key)}: {json.dumps(draw(st.sampled_from(SWAPS)))}")
        return raw.render(_replace(value, path, raw.put("{" + ", ".join(pairs) + "}")))
    if kind == "swap":
        return json.dumps(_replace(value, path, draw(st.sampled_from(SWAPS))))
    if kind == "number":
        return raw.render(_replace(value, path, raw.put(draw(st.sampled_from(NUMBERS)))))
    if kind == "nest":
        depth = draw(st.sampled_from([2, 50, 99, 100, 101, 3000]))
        return raw.render(_replace(value, path, raw.put("[" * depth + json.dumps(node) + "]" * depth)))
    return json.dumps(_replace(value, path, draw(st.sampled_from(STRINGS))))


def _at(value: Any, path: Path_) -> Any:
    for step in path:
        value = value[step]
    return value
