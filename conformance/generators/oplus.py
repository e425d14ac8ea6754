"""Random O+ scenarios in the JSON form of :mod:`spec.oplus.scenario` (issue 8, 1: "O+
scenarios with reconfigurations").

Drawn: the operator (``sliding-sum`` or ``wordcount``), WA and WS (sliding or tumbling), WT
(single or multi), the initial parallelism, 1-2 timestamp-sorted input lists with small key /
word sets (so keys collide across instances), optional explicit watermarks, and 0-2 elastic
reconfigurations at strictly increasing watermarks. JSON (not parsed objects) is what is drawn,
so a case can be shrunk and saved as is.

The strategy draws a seeded ``random.Random`` from hypothesis and builds the scenario with it
(:func:`build`): every choice is then independent and uniform. (Drawn field by field,
hypothesis's generation phase reuses sub-structures between examples, and a run of 100 cases
came out with one sliding-sum WT=multi case and a quarter of empty inputs.)
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

_WORDS = ("a", "b", "c", "d")


def _stream(rng: random.Random, operator: str, horizon: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ts in sorted(rng.randint(0, horizon) for _ in range(rng.randint(1, 8))):
        if rng.randint(0, 5) == 0:
            items.append({"watermark": ts})
        if operator == "sliding-sum":
            items.append({"ts": ts, "key": rng.choice(_WORDS), "value": rng.randint(-5, 9)})
        else:
            items.append({"ts": ts, "text": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))})
    return items


def build(rng: random.Random, horizon: int = 30) -> dict[str, Any]:
    """One O+ scenario as JSON, every choice taken from ``rng`` (module docstring)."""
    operator = rng.choice(["sliding-sum", "wordcount"])
    wa = rng.randint(1, 5)
    inputs = [_stream(rng, operator, horizon) for _ in range(rng.randint(1, 2))]
    marks = sorted(rng.sample(range(1, horizon + 1), rng.randint(0, 2)))
    return {
        "operator": operator, "WA": wa, "WS": wa * rng.randint(1, 3), "WT": rng.choice(["single", "multi"]),
        "parallelism": rng.randint(1, 3), "inputs": inputs,
        "reconfigurations": [{"watermark": w, "parallelism": rng.randint(1, 4)} for w in marks],
    }


def oplus_scenarios(horizon: int = 30) -> st.SearchStrategy[dict[str, Any]]:
    """O+ scenarios as JSON (module docstring)."""
    return st.randoms(use_true_random=False).map(lambda rng: build(rng, horizon))
