"""Def. 3.4 (``spec.dgs.streams.is_correct_output``) and one interleaving of a wire diagram's
input (``spec.dgs.semantics.flatten_inputs``).

* An output is correct iff it equals ``spec(sort(u))`` as a multiset: the shipped key-counter
  streams' expected output in any order is correct; with an output missing, duplicated or
  changed it is not.
* ``flatten_inputs`` is the interleaving that takes each fork's left input, then its right one
  (``interleave`` with every choice "left"), and on a consistent program the sequential spec
  over it gives the diagram's outputs (Theorem 2.4).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from reference.dgs.domain import draw_reachable
from spec.dgs.semantics import flatten_inputs, initial_wire, interleave, multiset_equal, run_diagram, spec_output
from spec.dgs.streams import expected_output, is_correct_output, streams_from_json
from support.dgs_helpers import CONSISTENT, EXAMPLES, example


def test_an_output_is_correct_iff_it_is_the_sorted_inputs_spec_as_a_multiset() -> None:
    program = example("key_counter.py:KeyCounter")
    streams = streams_from_json({"streams": json.loads((EXAMPLES / "streams" / "key_counter.json").read_text())["streams"]})
    expected = expected_output(program, streams)
    assert len(expected) >= 2
    shuffled = list(expected)
    random.Random(0).shuffle(shuffled)
    assert is_correct_output(program, streams, shuffled)
    assert not is_correct_output(program, streams, shuffled[1:])
    assert not is_correct_output(program, streams, shuffled + shuffled[:1])
    assert not is_correct_output(program, streams, [("nobody", -1)] + shuffled[1:])


@pytest.mark.parametrize("name", CONSISTENT)
@settings(max_examples=25)
@given(data=st.data())
def test_flatten_inputs_is_the_left_first_interleaving_and_the_spec_over_it_gives_the_diagrams_outputs(
        name: str, data: st.DataObject) -> None:
    program = example(name)
    history: Any
    history, _ = data.draw(st.composite(lambda draw: draw_reachable(draw, program))())
    run = run_diagram(program, initial_wire(program), history)
    flat = flatten_inputs(run.inputs)
    assert flat == interleave(run.inputs, iter(lambda: True, None))
    assert multiset_equal(spec_output(program, flat), run.outputs)
