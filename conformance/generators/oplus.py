"""Hypothesis strategies for O+ scenarios in the JSON form of :mod:`spec.oplus.scenario`
(issue 8, 1: "O+ scenarios with reconfigurations").

Drawn: the operator (``sliding-sum`` or ``wordcount``), WA and WS (sliding or tumbling), WT
(single or multi), the initial parallelism, 1-2 timestamp-sorted input lists with small key /
word sets (so keys collide across instances), optional explicit watermarks, and 0-2 elastic
reconfigurations at strictly increasing watermarks. JSON (not parsed objects) is what is drawn,
so a case can be shrunk and saved as is.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_WORDS = ("a", "b", "c", "d")


@st.composite
def _stream(draw: st.DrawFn, operator: str, horizon: int) -> list[dict[str, Any]]:
    stamps = sorted(draw(st.lists(st.integers(0, horizon), max_size=8)))
    items: list[dict[str, Any]] = []
    for ts in stamps:
        if draw(st.integers(0, 5)) == 0:
            items.append({"watermark": ts})
        if operator == "sliding-sum":
            items.append({"ts": ts, "key": draw(st.sampled_from(_WORDS)), "value": draw(st.integers(-5, 9))})
        else:
            words = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3))
            items.append({"ts": ts, "text": " ".join(words)})
    return items


@st.composite
def oplus_scenarios(draw: st.DrawFn, horizon: int = 30) -> dict[str, Any]:
    """One O+ scenario as JSON (module docstring)."""
    operator = draw(st.sampled_from(["sliding-sum", "wordcount"]))
    wa = draw(st.integers(1, 5))
    ws = wa * draw(st.integers(1, 3))
    inputs = [draw(_stream(operator, horizon)) for _ in range(draw(st.integers(1, 2)))]
    marks = sorted(draw(st.lists(st.integers(1, horizon), max_size=2, unique=True)))
    return {
        "operator": operator, "WA": wa, "WS": ws, "WT": draw(st.sampled_from(["single", "multi"])),
        "parallelism": draw(st.integers(1, 3)), "inputs": inputs,
        "reconfigurations": [{"watermark": w, "parallelism": draw(st.integers(1, 4))} for w in marks],
    }
