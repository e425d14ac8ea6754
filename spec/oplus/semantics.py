"""The meaning of O+ and correctness (STRETCH §4.2, Alg. 2 read per key, Def. 1).

Def. 1: an execution is correct if every subset of input tuples that could jointly
contribute to an output is processed together and results in that output. For O+ the
tuples that jointly contribute are those of one key, and (WT = multi) of one window
instance, or (WT = single) of one chain of shifted instances. So O+'s meaning is defined
*per key*, independently of instances, mappings f_mu and watermarks:

* take the tuples whose key set f_MK(t) contains k, in the TB order (timestamp, source,
  position: :mod:`spec.oplus.watermarks`);
* WT = multi: for each instance L a tuple falls in, fold f_U over the tuples falling in
  ``[L, L + WS)`` starting from the empty states; f_O on the final states;
* WT = single: one instance; before each tuple t, every instance expired at ``t.ts`` is
  output (f_O) and shifted (f_S), removed when its states become empty (Alg. 2 L5-12);
  then t updates the earliest instance it falls in (created if needed); at the end
  (watermark +inf) the chain is drained.

Each payload is timestamped with the right boundary of its instance. Def. 1 then reads: an
execution is correct iff its output multiset equals :func:`expected_outputs`.

Watermarks decide *when* outputs appear, never *which*: a watermark is a promise about
future timestamps (Def. 2), and processing in timestamp order makes each expiry happen
between the same two tuples of the key, whatever the watermark value.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from spec.oplus.model import (
    Key,
    OPlus,
    OutputTuple,
    Payload,
    State,
    StreamTuple,
    WindowSet,
    WindowType,
)
from spec.oplus.windows import END_OF_STREAM, Watermark


class NonTerminatingSlide(ValueError):
    """f_S kept a single-type instance non-empty after every tuple became stale: the
    operator would never release its state (a bug in the operator's f_S / is_empty)."""


def by_key(op: OPlus, tuples: Iterable[StreamTuple]) -> dict[Key, list[StreamTuple]]:
    """The tuples of each key (Def. 4: t belongs to every key of f_MK(t)), in TB order."""
    groups: dict[Key, list[StreamTuple]] = {}
    for t in sorted(tuples, key=StreamTuple.order_key):
        for k in op.keys(t):
            groups.setdefault(k, []).append(t)
    return groups


def key_outputs_multi(op: OPlus, key: Key, tuples: list[StreamTuple]) -> list[OutputTuple]:
    """WT = multi: one fold of f_U per window instance, then f_O."""
    spec = op.windows
    states: dict[int, tuple[State, ...]] = {}
    out: list[OutputTuple] = []
    for t in tuples:
        for left in spec.lefts_of(t.ts):
            current = states.get(left, op.empty_states())
            new, payloads = op.update(WindowSet(left, key, current), t)
            states[left] = new
            out.extend(OutputTuple(spec.right_boundary(left), p) for p in payloads)
    for left in sorted(states):
        payloads = op.output(WindowSet(left, key, states[left]))
        out.extend(OutputTuple(spec.right_boundary(left), p) for p in payloads)
    return out


def key_outputs_single(op: OPlus, key: Key, tuples: list[StreamTuple]) -> list[OutputTuple]:
    """WT = single: one chain of instances, shifted by f_S (Alg. 2 forwardAndShift)."""
    spec = op.windows
    out: list[OutputTuple] = []
    current: WindowSet | None = None
    last_ts: int | None = None

    def drain(watermark: Watermark) -> WindowSet | None:
        ws = current
        while ws is not None and spec.expired(ws.left, watermark):
            if last_ts is not None and ws.left > last_ts and watermark == END_OF_STREAM:
                raise NonTerminatingSlide(
                    f"operator {op.name!r}: key {key!r} still has state at {ws.left} after "
                    f"its last tuple ({last_ts}) became stale"
                )
            out.extend(OutputTuple(spec.right_boundary(ws.left), p) for p in op.output(ws))
            shifted = ws.left + spec.WA
            new_states = op.slide(ws, shifted)
            ws = None if op.all_empty(new_states) else WindowSet(shifted, key, new_states)
        return ws

    for t in tuples:
        current = drain(t.ts)
        left = spec.earliest_left(t.ts)
        if current is None:
            current = WindowSet(left, key, op.empty_states())
        assert current.left == left, "a single-type chain is always at the earliest open instance"
        new, payloads = op.update(current, t)
        current = WindowSet(left, key, new)
        out.extend(OutputTuple(spec.right_boundary(left), p) for p in payloads)
        last_ts = t.ts
    drain(END_OF_STREAM)
    return out


def expected_outputs(op: OPlus, tuples: Iterable[StreamTuple]) -> Counter[OutputTuple]:
    """O+'s output multiset for the given input tuples (module docstring)."""
    result: Counter[OutputTuple] = Counter()
    for key, group in by_key(op, tuples).items():
        if op.window_type is WindowType.MULTI:
            result.update(key_outputs_multi(op, key, group))
        else:
            result.update(key_outputs_single(op, key, group))
    return result


def is_correct(op: OPlus, tuples: Iterable[StreamTuple], observed: Iterable[OutputTuple]) -> bool:
    """Def. 1: the execution that produced ``observed`` from ``tuples`` is correct."""
    return Counter(observed) == expected_outputs(op, tuples)


def multiset_difference(
    expected: Counter[OutputTuple], observed: Iterable[OutputTuple]
) -> tuple[list[OutputTuple], list[OutputTuple]]:
    """(missing, extra): outputs Def. 1 requires but the execution lacks, and outputs it
    produced that Def. 1 does not allow; both sorted by timestamp. For counterexamples."""
    got = Counter(observed)
    missing = sorted((expected - got).elements(), key=lambda o: (o.ts, repr(o.payload)))
    extra = sorted((got - expected).elements(), key=lambda o: (o.ts, repr(o.payload)))
    return missing, extra


def payloads_at(outputs: Iterable[OutputTuple], ts: int) -> list[Payload]:
    """The payloads output with timestamp ``ts`` (a helper for readable tests)."""
    return [o.payload for o in outputs if o.ts == ts]
