"""Input streams, valid input instances, sort and correctness (DGS §3.1, Def. 3.3, 3.4).

Input is a mapping ``{stream id: [item, ...]}``; an item is a :class:`StreamEvent`
``(ts, payload)`` or a :class:`Heartbeat` ``(ts)``. The stream id is the event's stream
identifier (§3.1); ``(tag(payload), stream id)`` is its *implementation tag*.

**The order relation** (§3.1 assumes "some ordering relation on pairs of input events"): we
order items by the key ``(ts, stream id)``. Within a stream timestamps must strictly increase
(Def. 3.3 (1)), so keys are unique across all streams and the order is total; equal
timestamps on different streams are ordered by stream id.

JSON form (``docs/dgs.md``)::

    {"streams": {"s0": [{"ts": 1, "event": ["i", 0]}, {"ts": 4, "heartbeat": true}, ...], ...}}

Events are JSON values; arrays stand for Python tuples (``["i", 0]`` is ``("i", 0)``), objects
for dicts.

Def. 3.3 (valid input instance): (1) monotonicity - each stream strictly increasing; (2)
progress - for every event (not heartbeat) ``x`` of stream ``i`` and every other stream ``j``,
some event or heartbeat ``y`` of ``j`` has ``y > x``.

``sort`` (§3.5) merges the streams by the order and drops heartbeats. Def. 3.4: an
implementation is correct if, for every valid input instance, its output equals
``spec(sort(u1, ..., uk))`` - as a multiset (Thm. 2.4 gives determinism up to reordering).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Iterator, Mapping, Sequence, Union

from spec.dgs.program import Event, Program
from spec.dgs.semantics import multiset_equal, spec_output
from spec.errors import InputError
from spec.jsonio import expect_bool, expect_int, expect_list, expect_object, reject_unknown_keys

ImplTag = tuple[Hashable, str]
OrderKey = tuple[int, str]


@dataclass(frozen=True)
class StreamEvent:
    """An input event with timestamp ``ts`` carrying the program's event ``payload``."""

    ts: int
    payload: Event


@dataclass(frozen=True)
class Heartbeat:
    """A heartbeat: no more events on this stream with a timestamp ``<= ts`` (§3.4)."""

    ts: int


Item = Union[StreamEvent, Heartbeat]
Streams = Mapping[str, Sequence[Item]]


def order_key(stream: str, item: Item) -> OrderKey:
    """The total order on items of all streams: ``(ts, stream id)``."""
    return (item.ts, stream)


def valid_input_problem(streams: Streams) -> str | None:
    """Why ``streams`` is not a valid input instance (Def. 3.3), or None if it is."""
    for stream, items in streams.items():
        for before, after in zip(items, items[1:]):
            if not after.ts > before.ts:
                return (
                    f"stream {stream!r} is not strictly increasing (monotonicity, Def. 3.3): "
                    f"ts {after.ts} follows ts {before.ts}"
                )
    last = {s: max((order_key(s, it) for it in items), default=None) for s, items in streams.items()}
    for stream, items in streams.items():
        for item in items:
            if not isinstance(item, StreamEvent):
                continue
            key = order_key(stream, item)
            for other, other_last in last.items():
                if other != stream and (other_last is None or not other_last > key):
                    return (
                        f"no item of stream {other!r} comes after the event at ts {item.ts} of "
                        f"stream {stream!r} (progress, Def. 3.3)"
                    )
    return None


def check_valid_input(streams: Streams, where: str = "input streams") -> None:
    """Raise an InputError unless ``streams`` is a valid input instance (Def. 3.3)."""
    problem = valid_input_problem(streams)
    if problem is not None:
        raise InputError(problem, where)


def merged(streams: Streams) -> Iterator[tuple[OrderKey, str, Item]]:
    """Every item of every stream with its order key and stream, in the total order."""
    keyed = [(order_key(s, item), s, item) for s, items in streams.items() for item in items]
    yield from sorted(keyed, key=lambda entry: entry[0])


def sort_streams(streams: Streams) -> list[Event]:
    """``sort(u1, ..., uk)`` (§3.5): the events merged by the order, heartbeats dropped."""
    return [item.payload for _, _, item in merged(streams) if isinstance(item, StreamEvent)]


def expected_output(program: Program, streams: Streams) -> list[Any]:
    """``spec(sort(u1, ..., uk))``: what a correct implementation outputs (Def. 3.4)."""
    return spec_output(program, sort_streams(streams))


def is_correct_output(program: Program, streams: Streams, outputs: Sequence[Any]) -> bool:
    """Def. 3.4 on one valid input instance: ``outputs`` equals ``spec(sort(u))`` as a
    multiset."""
    return multiset_equal(list(outputs), expected_output(program, streams))


def value_from_json(value: Any) -> Any:
    """A JSON value as a Python event: arrays become tuples (recursively)."""
    if isinstance(value, list):
        return tuple(value_from_json(v) for v in value)
    if isinstance(value, dict):
        return {k: value_from_json(v) for k, v in value.items()}
    return value


def value_to_json(value: Any) -> Any:
    """The inverse of :func:`value_from_json` for events made of JSON scalars, tuples, lists
    and string-keyed dicts; an InputError otherwise."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [value_to_json(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: value_to_json(v) for k, v in value.items()}
    raise InputError(f"event value {value!r} cannot be written as JSON")


def streams_from_json(value: Any, where: str = "input") -> dict[str, list[Item]]:
    """Parse the JSON form (module docstring); InputError with the JSON path when malformed.
    Validity (Def. 3.3) is checked separately by :func:`check_valid_input`."""
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"streams"}, where)
    if "streams" not in obj:
        raise InputError("missing field 'streams'", where)
    result: dict[str, list[Item]] = {}
    for stream, raw_items in expect_object(obj["streams"], f"{where}.streams").items():
        items: list[Item] = []
        for index, raw in enumerate(expect_list(raw_items, f"{where}.streams.{stream}")):
            at = f"{where}.streams.{stream}[{index}]"
            entry = expect_object(raw, at)
            reject_unknown_keys(entry, {"ts", "event", "heartbeat"}, at)
            if "ts" not in entry:
                raise InputError("missing field 'ts'", at)
            ts = expect_int(entry["ts"], f"{at}.ts")
            if "event" in entry and "heartbeat" not in entry:
                items.append(StreamEvent(ts, value_from_json(entry["event"])))
            elif "heartbeat" in entry and "event" not in entry and expect_bool(entry["heartbeat"], f"{at}.heartbeat"):
                items.append(Heartbeat(ts))
            else:
                raise InputError("expected exactly one of \"event\": ... or \"heartbeat\": true", at)
        result[stream] = items
    return result


def streams_to_json(streams: Streams) -> dict[str, Any]:
    """The JSON form of ``streams``."""
    return {
        "streams": {
            stream: [
                {"ts": item.ts, "event": value_to_json(item.payload)}
                if isinstance(item, StreamEvent)
                else {"ts": item.ts, "heartbeat": True}
                for item in items
            ]
            for stream, items in streams.items()
        }
    }
