"""``spark_impl.dgs.streaming_plan.keyed_plan`` against its docstring, on every shipped
consistent program, 1-5 leaves, the default key and two others: the tags are split into the
connected components of the dependence relation; a component whose keys all route
(``spark_impl.keys.route``) to one leaf goes to that leaf on every given stream, any other to
the root; the plan is ``balanced_plan``'s over those sets (checked with the DGS plans oracle,
:func:`conformance.dgs.plan_oracles.plans.problem`), every implementation tag owned once; fewer than
one leaf is refused."""

from __future__ import annotations

from typing import Any, Callable, Hashable

import pytest

from reference.dgs.examples import CONSISTENT
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.keys import route

from conformance.core.refusals import refused
from conformance.dgs.cases import STREAMS, program_of
from conformance.dgs.plan_oracles.plans import problem as shape_problem

def default_key(tag: Hashable) -> Any:
    """The documented default key: a tuple tag's last item, else the tag itself."""
    return tag[-1] if isinstance(tag, tuple) and tag else tag


KEYS: list[tuple[str, Callable[[Hashable], Any] | None, Callable[[Hashable], Any]]] = [
    ("default", None, default_key), ("one", lambda tag: 0, lambda tag: 0), ("repr", repr, repr)]


def keyed_sets(program: Any, leaves: int, key: Callable[[Hashable], Any]) -> tuple[list[Any], list[list[Any]]]:
    """Root and leaf implementation tags by the definition: dependence components, routed."""
    left = list(program.sorted_tags)
    root: list[Any] = []
    leaf: list[list[Any]] = [[] for _ in range(leaves)]
    while left:
        component, frontier = {left[0]}, [left[0]]
        while frontier:
            tag = frontier.pop()
            for other in left:
                if other not in component and program.depends(tag, other):
                    component.add(other)
                    frontier.append(other)
        left = [t for t in left if t not in component]
        places = {route(key(tag), leaves) for tag in component}
        impls = [(tag, stream) for tag in component for stream in STREAMS]
        (leaf[places.pop()] if len(places) == 1 else root).extend(impls)
    return root, leaf


@pytest.mark.parametrize("leaves", range(1, 6))
@pytest.mark.parametrize("what, given, key", KEYS, ids=[what for what, _, _ in KEYS])
@pytest.mark.parametrize("name", CONSISTENT)
def test_keyed_plan_puts_each_routed_component_on_its_leaf_and_the_rest_at_the_root(
        name: str, what: str, given: Callable[[Hashable], Any] | None, key: Callable[[Hashable], Any],
        leaves: int) -> None:
    program = program_of(name)
    plan = keyed_plan(program, STREAMS, leaves) if given is None else keyed_plan(program, STREAMS, leaves, given)
    root, leaf = keyed_sets(program, leaves, key)
    assert shape_problem((root, leaf, program.initial, None, ("fork", "join"), None), plan) is None


@pytest.mark.parametrize("name", CONSISTENT)
def test_keyed_plan_refuses_fewer_than_one_leaf(name: str) -> None:
    assert refused(lambda: keyed_plan(program_of(name), STREAMS, 0), "leaves", "0 leaves") is None
