"""The O+ proofs (proofs.oplus) are about spec.oplus's functions: the Z3 terms evaluate to what
the spec computes on random integers, and every claim comes out as expected."""

from __future__ import annotations

import z3
from hypothesis import given, settings, strategies as st

from proofs import oplus
from proofs.result import run_item
from spec.oplus.windows import WindowSpec


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
