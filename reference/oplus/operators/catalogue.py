"""Build the O+ operator and the TB sources of a :class:`~spec.oplus.scenario.Scenario`, and
turn outputs into the ``{"ts", "key", "value"}`` rows of the scenario format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spec.oplus.model import OPlus, OutputTuple, StreamTuple, WindowType
from spec.oplus.scenario import PAIR_DISTANCE, Scenario, ScenarioMark, ScenarioTuple
from spec.oplus.watermarks import Mark, SourceItem
from reference.oplus.operators.joins import forward, scalejoin
from reference.oplus.operators.sliding_sum import sliding_sum
from reference.oplus.operators.text import longest_tweet, paircount, wordcount


@dataclass(frozen=True)
class Built:
    """An operator ready to run: the O+ and its sources (one per input list)."""

    op: OPlus
    sources: tuple[tuple[SourceItem, ...], ...]


def build(scenario: Scenario) -> Built:
    """The operator and sources a scenario describes (its catalogue entry)."""
    name, windows = scenario.operator, scenario.windows
    wt = WindowType(scenario.window_type)
    if name == "sliding-sum":
        op = sliding_sum(windows, wt)
    elif name == "wordcount":
        op = wordcount(windows, wt)
    elif name == "paircount":
        op = paircount(windows, wt, PAIR_DISTANCE[scenario.params["duplication"]])
    elif name == "longest-tweet":
        op = longest_tweet(windows, wt)
    elif name == "scalejoin":
        op = scalejoin(windows.WS, scenario.params["keys"], scenario.params["band"])
    elif name == "forward":
        op = forward(scenario.params["keys"])
    else:  # pragma: no cover - the scenario parser rejects unknown operators
        raise AssertionError(f"no reference operator {name!r}")
    sources = tuple(
        tuple(_item(item, index, position, name, op.inputs)
              for position, item in enumerate(items))
        for index, items in enumerate(scenario.inputs)
    )
    return Built(op, sources)


def _item(item: ScenarioTuple | ScenarioMark, index: int, position: int, name: str,
          inputs: int) -> SourceItem:
    if isinstance(item, ScenarioMark):
        return Mark(item.value)
    f = item.fields
    payload: Any
    if name == "sliding-sum":
        payload = (f["key"], f["value"])
    elif name in ("wordcount", "paircount", "longest-tweet"):
        payload = f["text"]
    elif name == "scalejoin":
        payload = (f["x"], f["y"]) if index == 0 else (f["a"], f["b"])
    else:
        payload = f["value"]
    return StreamTuple(item.ts, index, position, payload, input=index if inputs > 1 else 0)


def to_row(output: OutputTuple) -> dict[str, Any]:
    """An output as ``{"ts", "key", "value"}`` (payloads are ``(key, value)``)."""
    key, value = output.payload
    if key == "match":
        (lts, x, y), (rts, a, b) = value
        value = {"left": {"ts": lts, "x": x, "y": y}, "right": {"ts": rts, "a": a, "b": b}}
    return {"ts": output.ts, "key": key, "value": value}
