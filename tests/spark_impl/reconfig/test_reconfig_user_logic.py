"""User-written operators route as their kind says (``spark_impl.reconfig.model.UserLogic``,
docs/conformance.md "Your own job"): a replicate operator sends every output to every child,
any other kind routes each output by its key. The default suite's scenarios use the
catalogue's logic only, so a user's job is the only run that reaches this code."""

from __future__ import annotations

from typing import Any

from spec.fries.dataflow import OperatorKind
from spark_impl.keys import route
from spark_impl.reconfig.model import UserLogic


def test_user_operators_route_replicate_to_every_child_and_others_by_key() -> None:
    def double(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        return state + value, [(key, 2 * value), (key + 1, value)]

    children = ("A", "B", "C")
    replicate = UserLogic(double, OperatorKind.REPLICATE, children)
    assert replicate.process(1, 4, 5) == (6, [(c, k, v) for k, v in ((4, 10), (5, 5)) for c in children])
    for kind in (OperatorKind.ONE_TO_ONE, OperatorKind.ONE_TO_MANY):
        keyed = UserLogic(double, kind, children)
        assert keyed.process(1, 4, 5) == (6, [(children[route(4, 3)], 4, 10), (children[route(5, 3)], 5, 5)])
    assert route(4, 3) != route(5, 3)  # the two outputs go to different children
