"""The O+ proofs (proofs.oplus) are about spec.oplus's functions: the Z3 terms evaluate to what
the spec computes on random integers, and every claim comes out as expected."""

from __future__ import annotations
import dataclasses

import z3
from hypothesis import given, settings, strategies as st

from proofs import oplus
from proofs.result import run_item
from spec.oplus.windows import WindowSpec
from proofs.catalogue import all_items
from spec.oplus.instances import join_plus
from spec.oplus.model import WindowType, lemma2_applies


def _eval(term: z3.ExprRef, wa: int, ws: int, **ints: int) -> int | bool:
    subs = [(oplus.WA, z3.IntVal(wa)), (oplus.WS, z3.IntVal(ws))]
    subs += [(z3.Int(k), z3.IntVal(v)) for k, v in ints.items()]
    value = z3.simplify(z3.substitute(term, *subs))
    return bool(z3.is_true(value)) if z3.is_bool(value) else int(value.as_long())


windows = st.integers(1, 12).flatmap(lambda wa: st.tuples(st.just(wa), st.integers(wa, 40)))


@settings(max_examples=200)
@given(windows, st.integers(-200, 200), st.integers(-60, 60), st.integers(-200, 200))
def test_terms_agree_with_spec(wsp: tuple[int, int], ts: int, l: int, w: int) -> None:
    wa, ws = wsp
    spec = WindowSpec(wa, ws)
    t = z3.Int("ts")
    assert _eval(oplus.spec_earliest(t), wa, ws, ts=ts) == spec.earliest_left(ts)
    assert _eval(oplus.spec_latest(t), wa, ws, ts=ts) == spec.latest_left(ts)
    left = z3.Int("l") * oplus.WA
    assert _eval(oplus.contains(left, t), wa, ws, ts=ts, l=l) == spec.contains(l * wa, ts)
    assert _eval(oplus.expired(left, z3.Int("W")), wa, ws, l=l, W=w) == spec.expired(l * wa, w)
    # the definitions (not the closed forms) pick the spec's instances
    assert _eval(oplus.is_earliest(z3.IntVal(spec.earliest_left(ts)),
                                   z3.IntVal(spec.earliest_left(ts) // wa), t), wa, ws, ts=ts)
    assert list(spec.lefts_of(ts)) == [x for x in range(-300, 300) if spec.contains(x, ts)]


def test_every_oplus_claim_as_expected() -> None:
    for item in oplus.oplus_items():
        result = run_item(item, 60_000)
        assert result.as_expected, (result.name, result.status, result.detail)


def test_lemma2_counterexample_is_real() -> None:
    """The counterexample Z3 gives for f_U emitting under WT multi is a real inversion: the
    first output's instance boundary is later than the second's."""
    item = next(i for i in oplus.oplus_items() if i.expected == "counterexample")
    found = run_item(item, 60_000)
    values = found.witness
    spec = WindowSpec(values["WA"], values["WS"])
    assert spec.right_boundary(values["left1"]) > spec.right_boundary(values["left2"])
    assert values["left1"] % values["WA"] == 0 and values["left2"] % values["WA"] == 0


def test_lemma2_wt_single_needs_implicit_watermarks() -> None:
    """Dropping the implicit-watermark assumption from the WT single case gives a real
    inversion (an expiry output of an earlier instance after an f_U output of a later one),
    which is why :func:`spec.oplus.model.lemma2_applies` has ``implicit_watermarks``."""
    cons, shown = oplus.lemma2_instance(True, True, implicit=False)
    found = oplus.check_lemma(cons, shown, "Lemma 2")(60_000)
    assert found.status == "counterexample"
    values = found.witness
    spec = WindowSpec(values["WA"], values["WS"])
    assert spec.right_boundary(values["left1"]) > spec.right_boundary(values["left2"])
    assert values["W1"] < values["tau1"] or values["W2"] < values["tau2"]  # a lagging watermark
    cons, shown = oplus.lemma2_instance(True, True)
    assert oplus.check_lemma(cons, shown, "Lemma 2")(60_000).status == "proved"


def test_lemma2_applies_states_the_watermark_precondition() -> None:
    base = join_plus("j", WindowSpec(1, 1), lambda t: frozenset({0}), lambda k, a, b: (a.ts, b.ts))
    single = dataclasses.replace(base, window_type=WindowType.SINGLE, emits_on_update=True)
    multi = dataclasses.replace(base, window_type=WindowType.MULTI, emits_on_update=True)
    silent = dataclasses.replace(base, window_type=WindowType.MULTI, emits_on_update=False)
    assert lemma2_applies(single) and not lemma2_applies(single, implicit_watermarks=False)
    assert not lemma2_applies(multi) and not lemma2_applies(multi, implicit_watermarks=True)
    assert lemma2_applies(silent, implicit_watermarks=False)


def test_every_row_has_a_scope_and_definition_checks_are_labelled() -> None:
    items = all_items(3)
    assert all(len(item.scope) > 40 and "quantified over" in item.scope for item in items)
    labelled = [i for i in items if "[definition check]" in i.name]
    assert {i.reference for i in labelled} == {"STRETCH Observation 1",
                                                "STRETCH §2.3, Def. 2 (expiry rule)"}
    assert all(i.scope.startswith("definition check") for i in labelled)
    assert not any(i.reference == "Fries Theorem 5.8" for i in items)  # folded into Lemma 5.7
    assert any("Theorem 5.8" in i.reference and "modelcheck" in i.scope for i in items)
