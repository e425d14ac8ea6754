"""The ``dgs-plan`` input file (docs/dgs.md "dgs-plan"): input streams plus, optionally, a plan,
event rates and stream locations.

::

    {"streams": {"s0": [{"ts": 1, "event": ["i", 0]}, {"ts": 4, "heartbeat": true}], ...},
     "plan":  {"root": {...}},                                  (optional: the plan to run)
     "rates": [{"tag": ["i", 0], "stream": "s0", "rate": 2.5}],  (optional: events per time unit)
     "nodes": {"s0": "n0", "s1": "n1"}}                         (optional: where streams arrive)

``streams`` is :func:`spec.dgs.streams.streams_from_json`'s form and must be a valid input
instance (Def. 3.3); ``plan`` is :func:`spec.dgs.plan.plan_from_json`'s form, and every stream
its workers name must be one of ``streams`` (a worker waiting for a stream that never comes
would wait forever). Without ``rates`` the rate of an implementation tag is measured on the
streams (its events divided by the time span of the input); a ``rates`` entry overrides one
implementation tag of a stream of ``streams``, with a rate from 0 to :data:`MAX_RATE`
(10^12 events per time unit: the optimizer's and the cost model's sums of rates stay finite). ``nodes``
places each worker (the optimizer's ``locations``). Parsing needs no user code, so the CLI
validates the whole file before starting the sandbox; every error names the file and the JSON
path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from spec.dgs.plan import Plan, plan_from_json, tag_from_json
from spec.dgs.streams import Item, check_valid_input, streams_from_json
from spec.errors import InputError
from spec.jsonio import expect_list, expect_object, expect_str, reject_unknown_keys

FIELDS = {"streams", "plan", "rates", "nodes"}
MAX_RATE = 10**12
"""Largest rate accepted in ``rates`` (module docstring)."""


@dataclass(frozen=True)
class PlanInput:
    """The parsed file: ``rates`` maps ``(tag, stream)`` to the given rate."""

    streams: dict[str, list[Item]]
    plan: Plan | None
    rates: dict[tuple[Any, str], float]
    nodes: dict[str, str]


def parse_plan_input(document: Any, where: str) -> PlanInput:
    """Parse and validate ``document`` (module docstring); InputError at ``where`` + JSON path."""
    obj = expect_object(document, where)
    reject_unknown_keys(obj, FIELDS, where)
    if "streams" not in obj:
        raise InputError("missing field 'streams'", where)
    streams = streams_from_json({"streams": obj["streams"]}, where)
    if not any(streams.values()):
        raise InputError("the input has no events and no heartbeats", f"{where}.streams")
    check_valid_input(streams, f"{where}.streams")
    plan = plan_from_json(obj["plan"], f"{where}.plan") if "plan" in obj else None
    if plan is not None:
        for worker in plan.workers():
            for _, stream in sorted(worker.impl_tags, key=repr):
                if stream not in streams:
                    raise InputError(f"worker {worker.id!r} is responsible for stream {stream!r}, which is not "
                                     f"in \"streams\" ({_names(streams)})", f"{where}.plan")
    return PlanInput(streams, plan, _rates(obj.get("rates", []), f"{where}.rates", streams),
                     _nodes(obj.get("nodes", {}), f"{where}.nodes", streams))


def _names(streams: Mapping[str, Any]) -> str:
    """The stream names, at most five of them, for an error message."""
    names = sorted(streams)
    return ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _rates(value: Any, where: str, streams: Mapping[str, Any]) -> dict[tuple[Any, str], float]:
    rates: dict[tuple[Any, str], float] = {}
    for index, raw in enumerate(expect_list(value, where)):
        at = f"{where}[{index}]"
        entry = expect_object(raw, at)
        reject_unknown_keys(entry, {"tag", "stream", "rate"}, at)
        for key in ("tag", "stream", "rate"):
            if key not in entry:
                raise InputError(f"missing field {key!r}", at)
        try:
            tag = tag_from_json(entry["tag"])
        except InputError as error:
            raise error.located(f"{at}.tag") from None
        rate = entry["rate"]
        # compared before any conversion to float (a 400-digit integer does not fit one); nan
        # fails the range test (every comparison with nan is false)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= MAX_RATE:
            raise InputError("expected a finite number >= 0 and at most 10^12 (events per time unit)", f"{at}.rate")
        impl = (tag, expect_str(entry["stream"], f"{at}.stream"))
        if impl[1] not in streams:
            raise InputError(f"unknown stream {impl[1]!r} (streams: {_names(streams)})", f"{at}.stream")
        if impl in rates:
            raise InputError(f"a second rate for tag {entry['tag']!r} on stream {impl[1]!r}", at)
        rates[impl] = float(rate)
    return rates


def _nodes(value: Any, where: str, streams: Mapping[str, Any]) -> dict[str, str]:
    nodes = {}
    for stream, node in expect_object(value, where).items():
        if stream not in streams:
            raise InputError(f"unknown stream {stream!r} (streams: {_names(streams)})", where)
        nodes[stream] = expect_str(node, f"{where}.{stream}")
    return nodes
