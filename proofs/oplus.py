"""STRETCH O+ window arithmetic and Lemma 2, over all integers (STRETCH §2.1, §2.3, Alg. 2,
Observation 1, Lemma 2).

Every claim is quantified over *all* integers: event times, watermarks, window advance WA and
size WS with ``WS >= WA > 0`` (the domain of :class:`spec.oplus.windows.WindowSpec`). Instance
``l`` covers ``[l*WA, l*WA + WS)``; the terms below restate the definitions (not the spec's
closed forms) so that proving them equal to the spec's closed forms ties
:mod:`spec.oplus.windows` to the paper:

* ``earliest(t)`` - the smallest ``l*WA`` with ``l*WA + WS > t`` (earliestWinL);
* ``latest(t)`` - the largest ``l*WA <= t`` (latestWinL);
* expiry (spec's one rule): instance L is expired at watermark W iff ``L + WS <= W``;
* outputs of instance L carry timestamp ``L + WS``.

Lemma 2 is checked on a model of Alg. 2's output order that covers executions of *any*
length: two outputs emitted at steps ``i1 <= i2`` are related only through the facts that hold
between any two steps (watermarks never decrease, tuples arrive in timestamp order, a watermark
never exceeds a later tuple's timestamp). Within a step, expiry outputs (ascending L) come
before f_U's outputs (ascending L). The precondition of :func:`spec.oplus.model.lemma2_applies`
is part of the claim: without it Z3 finds the counterexample.
"""

from __future__ import annotations

from typing import Callable

from proofs import z3util as z
from proofs.result import Finding, ProofItem, finding_of
from proofs.z3util import BoolTerm, IntTerm, Model

WA, WS = z.integer("WA"), z.integer("WS")
DOMAIN = [WA > 0, WS >= WA]


def on_grid(left: IntTerm, l: IntTerm) -> BoolTerm:
    """``left`` is the left boundary ``l * WA`` of instance ``l``."""
    return left == l * WA


def is_earliest(left: IntTerm, l: IntTerm, ts: IntTerm) -> BoolTerm:
    """Definition of earliestWinL: ``left = l*WA`` is the smallest with ``left + WS > ts``."""
    return z.all_of([on_grid(left, l), left + WS > ts, left - WA + WS <= ts])


def is_latest(left: IntTerm, l: IntTerm, ts: IntTerm) -> BoolTerm:
    """Definition of latestWinL: ``left = l*WA`` is the largest with ``left <= ts``."""
    return z.all_of([on_grid(left, l), left <= ts, left + WA > ts])


def spec_earliest(ts: IntTerm) -> IntTerm:
    """:meth:`spec.oplus.windows.WindowSpec.earliest_left` as a term (Z3's integer division
    rounds down for a positive divisor, like Python's ``//``)."""
    return ((ts - WS) / WA + 1) * WA


def spec_latest(ts: IntTerm) -> IntTerm:
    """:meth:`spec.oplus.windows.WindowSpec.latest_left` as a term."""
    return (ts / WA) * WA


def contains(left: IntTerm, ts: IntTerm) -> BoolTerm:
    """``ts`` falls in ``[left, left + WS)``."""
    return z.all_of([left <= ts, ts < left + WS])


def expired(left: IntTerm, watermark: IntTerm) -> BoolTerm:
    """The spec's expiry rule."""
    return left + WS <= watermark


def _ints(*names: str) -> list[IntTerm]:
    return [z.integer(n) for n in names]


def _values(model: Model, **terms: IntTerm) -> dict[str, int]:
    return {k: z.int_value(model, v) for k, v in terms.items()}


def check_lemma(negated: list[BoolTerm], shown: dict[str, IntTerm], what: str) -> Callable[[int], Finding]:
    def run(timeout_ms: int) -> Finding:
        def describe(model: Model) -> Finding:
            values = _values(model, WA=WA, WS=WS, **shown)
            words = ", ".join(f"{k}={v}" for k, v in values.items())
            return Finding("counterexample", f"{what} fails for {words}", values)

        outcome = z.solve(DOMAIN + negated, timeout_ms=timeout_ms)
        if outcome.answer is z.Answer.SAT:  # show the smallest values Z3 finds
            smaller = z.solve(DOMAIN + negated, timeout_ms=timeout_ms,
                              small=[WA, WS, *shown.values()])
            outcome = smaller if smaller.answer is z.Answer.SAT else outcome
        return finding_of(outcome, describe)

    return run


def _claims() -> list[tuple[str, str, list[BoolTerm], dict[str, IntTerm], str]]:
    ts, e, le, lt, lat, l, w = _ints("ts", "E", "lE", "lL", "Lt", "l", "W")
    left = l * WA
    claims = [
        ("earliestWinL / latestWinL exist and equal the spec's closed forms",
         "STRETCH Alg. 2 (earliestWinL, latestWinL)",
         [z.negate(z.all_of([is_earliest(spec_earliest(ts), (ts - WS) / WA + 1, ts),
                             is_latest(spec_latest(ts), ts / WA, ts)]))],
         {"ts": ts}, "the closed forms"),
        ("a tuple falls in exactly the instances between earliest and latest (WT multi)",
         "STRETCH §2.1, Alg. 2 L13-19",
         [is_earliest(e, le, ts), is_latest(lat, lt, ts),
          z.negate(contains(left, ts) == z.all_of([e <= left, left <= lat]))],
         {"ts": ts, "l": l}, "instance membership"),
        ("every tuple falls in at least one instance (WS >= WA)", "STRETCH §2.1",
         [is_earliest(e, le, ts), is_latest(lat, lt, ts), e > lat], {"ts": ts},
         "non-emptiness"),
        ("outputs are later than every input of their instance", "STRETCH Observation 1",
         [contains(left, ts), z.negate(left + WS > ts)], {"ts": ts, "l": l}, "Observation 1"),
        ("an expired instance receives no future tuple", "STRETCH §2.3, Def. 2 (expiry rule)",
         [expired(left, w), ts >= w, contains(left, ts)], {"ts": ts, "l": l, "W": w},
         "expiry soundness"),
        ("a non-expired instance can still receive a tuple (the rule is the earliest safe one)",
         "STRETCH §2.3 (expiry rule)",
         [z.negate(expired(left, w)),
          z.negate(contains(left, z.ite(w > left, w, left)))], {"l": l, "W": w},
         "expiry tightness"),
    ]
    return claims


def lemma2_instance(update_emits: bool, single: bool,
            implicit: bool = True) -> tuple[list[BoolTerm], dict[str, IntTerm]]:
    """Negation of "output o1 emitted before o2 implies ts(o1) <= ts(o2)" on Alg. 2's order.

    ``single``: WT single, whose f_U emits at the instance it updates (the earliest one the
    tuple falls in); this case assumes implicit watermarks (STRETCH §2.3: sorted inputs, the
    watermark is the processed tuple's timestamp), as :mod:`spec.oplus.semantics` does. With
    explicit watermarks lagging behind, an expiry can follow an update output of a later
    instance."""
    i1, i2, l1, l2 = _ints("i1", "i2", "l1", "l2")
    prev1, w1, t1, prev2, w2, t2 = _ints("Wprev1", "W1", "tau1", "Wprev2", "W2", "tau2")
    first1, first2 = z.boolean("first1"), z.boolean("first2")
    upd1, upd2 = z.boolean("update1"), z.boolean("update2")
    cons = [i1 >= 1, i1 <= i2, prev1 <= w1, prev2 <= w2, w1 <= t1, w2 <= t2]
    if single and implicit:
        cons += [w1 == t1, w2 == t2]
    same = i1 == i2
    cons.append(z.implies(same, z.all_of([prev1 == prev2, w1 == w2, t1 == t2, first1 == first2])))
    cons.append(z.implies(i1 < i2, z.all_of([w1 <= prev2, t1 <= t2, w1 <= t2, z.negate(first2)])))

    def emitted(upd: BoolTerm, l: IntTerm, prev: IntTerm, w: IntTerm, t: IntTerm,
                first: BoolTerm) -> BoolTerm:
        left = l * WA
        at_expiry = z.all_of([expired(left, w), z.any_of([first, z.negate(expired(left, prev))])])
        if single:
            l_e = (t - WS) / WA + 1
            by_update = z.all_of([l == l_e])
        else:
            by_update = contains(left, t)
        by_update = by_update if update_emits else z.false()
        return z.ite(upd, by_update, at_expiry)

    cons.append(emitted(upd1, l1, prev1, w1, t1, first1))
    cons.append(emitted(upd2, l2, prev2, w2, t2, first2))
    order_in_step = z.any_of([z.all_of([z.negate(upd1), upd2]),
                              z.all_of([upd1 == upd2, l1 < l2])])
    cons.append(z.any_of([i1 < i2, z.all_of([same, order_in_step])]))
    cons.append(l1 * WA + WS > l2 * WA + WS)
    return cons, {"step1": i1, "step2": i2, "W1": w1, "W2": w2, "tau1": t1, "tau2": t2,
                  "left1": l1 * WA, "left2": l2 * WA}


#: The rows that follow in one step from their own definitions: kept as checks that the
#: encoding's definitions fit together, labelled so, not counted as paper results.
DEFINITION_CHECKS = frozenset({"Observation 1", "expiry soundness"})
_ARITHMETIC = ("quantified over all integers WA, WS, tau, l, W with WS >= WA > 0; model: the "
               "definitions of instance membership, earliestWinL/latestWinL and the expiry rule "
               "as Z3 integer terms, tied to spec.oplus.windows by tests/proofs/test_proofs_oplus.py; "
               "assumed: nothing else")
_LEMMA2 = ("quantified over two outputs at any steps i1 <= i2 of an execution of any length, "
           "all integers (WS >= WA > 0); model: Alg. 2's output order abstracted by the facts "
           "that hold between any two steps (watermarks never decrease, tuples arrive in "
           "timestamp order, a watermark never exceeds a later tuple's timestamp; within a step "
           "expiry outputs then f_U outputs, each by ascending instance)")


def oplus_items() -> list[ProofItem]:
    """The O+ rows of ``streamproof prove``."""
    items = []
    for name, ref, neg, shown, what in _claims():
        scope = _ARITHMETIC
        if what in DEFINITION_CHECKS:
            name = f"{name} [definition check]"
            scope = (f"definition check, not a paper result: {what} follows in one step from the "
                     f"definitions it is stated with; " + _ARITHMETIC)
        items.append(ProofItem(name, ref, "all integers (WS >= WA > 0)", "proved",
                               check_lemma(neg, shown, what), scope))
    for name, emits, single, expected, assumed in [
        ("each instance emits outputs in timestamp order (f_U silent, WT multi)", False, False,
         "proved", "assumed: f_U emits nothing (outputs only at expiry); watermarks explicit or "
         "implicit"),
        ("each instance emits outputs in timestamp order (f_U emits, WT single, implicit W)",
         True, True, "proved",
         "assumed: implicit watermarks (W = the processed tuple's timestamp, as "
         "spec.oplus.semantics); with explicit watermarks Z3 finds a counterexample "
         "(tests/proofs/test_proofs_oplus.py), see spec.oplus.model.lemma2_applies"),
        ("f_U emitting with WT multi breaks timestamp order (lemma2_applies is needed)", True,
         False, "counterexample", "expected counterexample: f_U emits at every instance the "
         "tuple falls in"),
    ]:
        cons, shown = lemma2_instance(emits, single)
        items.append(ProofItem(name, "STRETCH Lemma 2, Alg. 2",
                               "executions of any length, all integers", expected,  # type: ignore[arg-type]
                               check_lemma(cons, shown, "Lemma 2"), f"{_LEMMA2}; {assumed}"))
    return items
