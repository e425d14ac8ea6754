"""The sequential spec and wire diagrams (DGS Def. 2.2): Theorem 2.4 on the shipped consistent
examples - every wire diagram's output equals, as a multiset, spec(u) for every interleaving
u of its input, and its end state equals the sequential end state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st, Phase, find

from support.dgs_helpers import CONSISTENT, example
from reference.dgs.domain import draw_reachable
from spec.dgs.semantics import interleave, multiset_equal, run_diagram, initial_wire, spec_output, spec_run


def test_key_counter_sequential_spec_fig1() -> None:
    program = example("key_counter.py:KeyCounter")
    events = [("i", 1), ("i", 2), ("i", 1), ("r", 1), ("i", 2), ("r", 2), ("r", 1)]
    assert spec_output(program, events) == [(1, 2), (2, 2), (1, 0)]


@given(st.lists(st.integers(0, 3)), st.randoms())
def test_multiset_equal_is_permutation_invariant(items: list[int], rnd: Any) -> None:
    shuffled = list(items)
    rnd.shuffle(shuffled)
    assert multiset_equal(items, shuffled)
    assert not multiset_equal(items, shuffled + [0])
    assert multiset_equal([[x] for x in items], [[x] for x in shuffled])  # unhashable


@pytest.mark.parametrize("name", CONSISTENT)
@settings(max_examples=40)
@given(data=st.data())
def test_theorem_2_4_on_random_diagrams(name: str, data: st.DataObject) -> None:
    program = example(name)
    history, _ = data.draw(st.composite(lambda draw: draw_reachable(draw, program))())
    run = run_diagram(program, initial_wire(program), history)
    choices = data.draw(st.lists(st.booleans(), max_size=40))
    u = interleave(run.inputs, choices)
    state, outputs = spec_run(program, u)
    assert multiset_equal(run.outputs, outputs)
    assert program.states_equal(program.initial, run.end.state, state)


def test_theorem_2_4_fails_for_an_inconsistent_program() -> None:
    """The property above is not vacuous: for a program violating C2 a diagram differs."""
    program = example("key_counter.py:DuplicatingCounter")

    def differs(history: Any) -> bool:
        run = run_diagram(program, initial_wire(program), history)
        return not multiset_equal(run.outputs, spec_output(program, interleave(run.inputs, [])))

    history = find(
        st.composite(lambda draw: draw_reachable(draw, program)[0])(),
        differs,
        settings=settings(max_examples=500, database=None, phases=[Phase.generate]),
    )
    assert history
