"""One O+ instance o_j: processSN (STRETCH Alg. 2) and the processing core of processVSN
(Alg. 4), over a private or shared :class:`~reference.oplus.state.WindowStore`.

The instance owns the keys ``k`` with ``mapping(k) == ident`` (f_mu). Per delivered item:

1. updateW: ``W = max(W, item)`` - a watermark item's value, or a tuple's timestamp (the
   implicit watermark of Def. 3: TB delivers tuples in timestamp order);
2. the expiry loop (Alg. 2 L28-30): while ``rho + WS <= W`` (THE expiry rule of
   :mod:`spec.oplus.windows`), forwardAndShift every owned key whose first set starts at rho;
3. handleInputTuple (Alg. 2 L14-24) for a tuple with at least one owned key.

rho (the paper's "earliest w.l of any w in sigma") is kept *conservative*: it never passes a
window set in the store. Where Alg. 2 advances ``rho += WA`` we jump to the next left boundary
present in the store (equivalent: no sets lie in between), so long gaps cost nothing; when the
mapping changes (a VSN reconfiguration) rho is reset to the store's smallest left boundary,
because the instance may now own keys whose windows start before its old rho (Alg. 4 keeps
rho unchanged, which can skip such windows forever).
"""

from __future__ import annotations

from typing import Callable

from spec.oplus.model import Key, OPlus, OutputTuple, StreamTuple, WindowType
from spec.oplus.semantics import NonTerminatingSlide
from spec.oplus.watermarks import Delivered
from spec.oplus.windows import END_OF_STREAM, NO_WATERMARK, Watermark
from reference.oplus.state import WindowStore

Mapping = Callable[[Key], int]
Emit = Callable[[int, OutputTuple], None]


class Instance:
    """o_j: ``ident`` j, the operator, the store (sigma_j or shared sigma), the mapping f_mu,
    and ``emit(j, output)`` (the instance's forward to D)."""

    def __init__(self, ident: int, op: OPlus, store: WindowStore, mapping: Mapping,
                 emit: Emit, epoch: int = 0) -> None:
        self.ident = ident
        self.op = op
        self.store = store
        self.mapping = mapping
        self.emit = emit
        self.epoch = epoch
        self.W: Watermark = NO_WATERMARK
        self.rho: float | None = None
        self.processed = 0  # tuples for which handleInputTuple found an owned key

    def owns(self, key: Key) -> bool:
        """f_mu(k) = j."""
        return self.mapping(key) == self.ident

    def set_mapping(self, mapping: Mapping, epoch: int) -> None:
        """Switch to a new f_mu (a reconfiguration) and reset rho (module docstring)."""
        self.mapping = mapping
        self.epoch = epoch
        self.rho = self.store.min_left()

    def update_watermark(self, item: Delivered) -> None:
        """updateW(t)."""
        value = item.tuple.ts if item.tuple is not None else item.watermark
        self.W = max(self.W, value)

    def process(self, item: Delivered) -> None:
        """processSN (Alg. 2): updateW, the expiry loop, handleInputTuple."""
        self.update_watermark(item)
        self.expire()
        if item.tuple is not None:
            self.handle_input_tuple(item.tuple)

    def expire(self) -> None:
        """Alg. 2 L28-30 / Alg. 4 L16-18: output, shift or remove every owned expired set."""
        spec = self.op.windows
        if self.rho is None:
            self.rho = self.store.min_left()
        while self.rho is not None and spec.expired(int(self.rho), self.W):
            left = int(self.rho)
            for key in self.store.keys_at(left):
                if self.owns(key):
                    self.forward_and_shift(key)
            self.rho = self.store.next_left_after(left)

    def forward_and_shift(self, key: Key) -> None:
        """forwardAndShift(k) (Alg. 2 L5-12)."""
        ws = self.store.first(key)
        assert ws is not None
        spec = self.op.windows
        for payload in self.op.output(ws):
            self.emit(self.ident, OutputTuple(spec.right_boundary(ws.left), payload))
        if self.op.window_type is WindowType.SINGLE:
            last = self.store.last_ts(key)
            if self.W == END_OF_STREAM and last is not None and ws.left > last:
                raise NonTerminatingSlide(
                    f"operator {self.op.name!r}: key {key!r} still has state at {ws.left} "
                    f"after its last tuple ({last}) became stale")
            states = self.op.slide(ws, ws.left + spec.WA)
            if not self.op.all_empty(states):
                self.store.shift_first(key, states, spec.WA, self.ident, self.epoch)
                return
        self.store.remove_first(key, self.ident, self.epoch)

    def handle_input_tuple(self, t: StreamTuple) -> None:
        """handleInputTuple(t) (Alg. 2 L14-24)."""
        mine = sorted((k for k in self.op.keys(t) if self.owns(k)), key=repr)
        if not mine:
            return
        self.processed += 1
        spec = self.op.windows
        first = spec.earliest_left(t.ts)
        last = first if self.op.window_type is WindowType.SINGLE else spec.latest_left(t.ts)
        if self.rho is None or first < self.rho:
            self.rho = first
        for left in range(first, last + 1, spec.WA):
            for key in mine:
                ws = self.store.check_and_create(key, left, self.op.empty_states())
                if self.op.window_type is WindowType.SINGLE:
                    head = self.store.first(key)
                    assert head is not None and head.left == left, (
                        "a single-type key's set is at the earliest open instance")
                states, payloads = self.op.update(ws, t)
                for payload in payloads:
                    self.emit(self.ident, OutputTuple(spec.right_boundary(left), payload))
                self.store.set(key, type(ws)(left, key, states), t.ts, self.ident, self.epoch)
