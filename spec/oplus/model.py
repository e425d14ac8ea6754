"""Tuples, window sets and the operator O+ (STRETCH §2.1, §4.2, Table I, Def. 4-5).

``O+(WA, WS, I, f_MK, WT, S, f_mu, f_U, f_O, f_S)``:

* WA, WS - the windows (:class:`~spec.oplus.windows.WindowSpec`);
* I - the number of logical inputs; tuple ``t`` of input ``i`` updates ``w_i`` of a set of
  I window instances sharing left boundary and key (§2.1, Fig. 1);
* f_MK - the multi key-by function (Def. 4): a *set* of keys, possibly empty;
* WT - ``single`` (one set of instances per key, shifted by f_S, updated for the earliest
  instance a tuple falls in) or ``multi`` (one set per overlapping instance, all updated);
* S - the output schema: here a name, documentation only (payloads are JSON-like values);
* f_mu - key -> responsible instance. It belongs to a *deployment* rather than to the logical
  operator (the paper lists it among O+'s parameters because SN routing needs it); here it is
  passed to executors, so one operator runs under any mapping;
* f_U(ws, t) -> (states, payloads), f_O(ws) -> payloads, f_S(ws) -> states (Table I).

Choices written down (see also docs/oplus.md):

* States are immutable values and the functions are pure: f_U returns *new* states. This is
  what lets spec/ define the meaning of O+ as a fold, and executors share states safely.
* Table I's "empty" state is operator-provided (:attr:`OPlus.empty` and
  :attr:`OPlus.is_empty`): Alg. 2 L9-10 removes a single-type instance whose states are all
  empty after f_S, and check&Create creates instances with empty states.
* Defaults (Table I): f_U stores t in ``w_i`` of t's input and returns no payload; f_O returns
  no payload; f_S purges tuples older than the shifted left boundary ("stale").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Hashable

from spec.oplus.windows import WindowSpec

Key = Hashable
State = Any
Payload = Any


class WindowType(str, Enum):
    """Parameter WT (§2.1)."""

    SINGLE = "single"
    MULTI = "multi"


@dataclass(frozen=True)
class StreamTuple:
    """A tuple ``<tau, [phi]>`` (§2.1) with its place in the input: ``source`` is the
    physical input stream (one upstream instance u_{i,j}, a TB source), ``input`` the logical
    input index i in ``0..I-1`` (which of the I window instances it updates), ``seq`` its
    position in its source stream. ``(source, seq)`` identifies a tuple."""

    ts: int
    source: int
    seq: int
    payload: Payload
    input: int = 0

    def order_key(self) -> tuple[int, int, int]:
        """The total delivery order of the tuple buffer: timestamp, then source, then
        position (see :mod:`spec.oplus.watermarks`)."""
        return (self.ts, self.source, self.seq)


@dataclass(frozen=True)
class WindowSet:
    """``sigma[k][l]``: the I window instances of key ``key`` with left boundary ``left``
    (the paper's ``{w_1..w_I}``, each ``<zeta, l, k>``), ``states[i]`` being ``w_i.zeta``."""

    left: int
    key: Key
    states: tuple[State, ...]


@dataclass(frozen=True)
class OutputTuple:
    """An output ``<tau, [phi]>``: ``ts`` is the right boundary of the window instance whose
    f_U / f_O call produced ``payload`` (§2.1, "prepareOutTuples")."""

    ts: int
    payload: Payload


UpdateFn = Callable[[WindowSet, StreamTuple], tuple[tuple[State, ...], tuple[Payload, ...]]]
OutputFn = Callable[[WindowSet], tuple[Payload, ...]]
SlideFn = Callable[[WindowSet, int], tuple[State, ...]]
KeysFn = Callable[[StreamTuple], frozenset[Key]]


def default_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[State, ...], tuple[Payload, ...]]:
    """Table I default f_U: store t in ``w_i.zeta`` of t's input; return no payload.
    States of the default are tuples of stored StreamTuples."""
    states = list(ws.states)
    states[t.input] = tuple(states[t.input]) + (t,)
    return tuple(states), ()


def default_output(ws: WindowSet) -> tuple[Payload, ...]:
    """Table I default f_O: no payload."""
    return ()


def default_slide(ws: WindowSet, new_left: int) -> tuple[State, ...]:
    """Table I default f_S: purge stale tuples, i.e. those before the new left boundary.
    (f_S also receives the new left boundary: the paper's f_S knows ``w.l`` and WA.)"""
    return tuple(tuple(t for t in state if t.ts >= new_left) for state in ws.states)


def _default_empty() -> State:
    return ()


def _default_is_empty(state: State) -> bool:
    return len(state) == 0


@dataclass(frozen=True)
class OPlus:
    """The operator ``O+(WA, WS, I, f_MK, WT, S, f_mu, f_U, f_O, f_S)`` (§4.2), without
    f_mu (a deployment parameter, see the module docstring).

    ``emits_on_update`` declares whether f_U may return payloads. It is needed to state
    Lemma 2 precisely: see :func:`lemma2_applies`."""

    name: str
    windows: WindowSpec
    inputs: int
    keys: KeysFn
    window_type: WindowType
    schema: str = "payload"
    update: UpdateFn = default_update
    output: OutputFn = default_output
    slide: SlideFn = default_slide
    empty: Callable[[], State] = field(default=_default_empty)
    is_empty: Callable[[State], bool] = field(default=_default_is_empty)
    emits_on_update: bool = False

    def empty_states(self) -> tuple[State, ...]:
        """The states of a freshly created window set (check&Create)."""
        return tuple(self.empty() for _ in range(self.inputs))

    def all_empty(self, states: tuple[State, ...]) -> bool:
        """Alg. 2 L9: a single-type set is removed (not shifted) when no state is non-empty."""
        return all(self.is_empty(s) for s in states)


def lemma2_applies(op: OPlus, implicit_watermarks: bool = True) -> bool:
    """Whether Lemma 2 (each instance emits in timestamp order) holds for ``op``.

    The paper's proof covers outputs at expiry. With ``WT = multi`` and an f_U that emits,
    f_U emits at the right boundary of *every* instance the tuple falls in (up to
    ``tau + WS``), and a later expiry emits an earlier boundary: e.g. WA = 5, WS = 10, a tuple
    at 5 makes f_U emit at 10 and 15, then a tuple at 11 expires [0, 10) and f_O emits at 10.
    With ``WT = single`` f_U emits only at the earliest open boundary, so order holds - under
    *implicit watermarks* (``implicit_watermarks``: the watermark is the processed tuple's
    timestamp, as :mod:`spec.oplus.semantics` defines O+). With explicit watermarks lagging
    behind the tuples, an expiry can come after an f_U output of a later instance of another
    key: WA = WS = 1, key a's tuple at 0 opens [0, 1); with the watermark still at 0, key b's
    tuple at 1 makes f_U emit at 2; then watermark 1 expires a's [0, 1) and f_O emits at
    1 < 2. (With implicit watermarks b's tuple moves the watermark to 1 first, so the expiry
    comes first.) Z3 finds this counterexample when the assumption is dropped
    (tests/proofs/test_proofs_oplus.py). This precondition is ours; tests/reference/oplus/test_oplus_lemmas.py
    checks both directions for implicit watermarks."""
    if not op.emits_on_update:
        return True
    return op.window_type is WindowType.SINGLE and implicit_watermarks
