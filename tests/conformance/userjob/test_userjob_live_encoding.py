"""The user-job oracle feeds a job what a live front end feeds it.

docs/conformance.md ("Your own job") and docs/production/types.md: every key and value a case
reads from the job's source goes through ``spark_impl.values.as_received``, the live front
ends' encoding and decoding (arrays and structs as tuples, maps as sorted ``(key, value)``
pairs), so a job the oracle passes can run live. A source yielding what JSON gives (nested
dicts and lists): a job written for the documented forms (keyed by a nested array, which
arrives as a tuple) passes; a job written for the raw dicts (``value["promotion"]``, which
raises on the pairs a live job receives) fails as the user's code.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from conformance.testing.plugin import Oracle
from spec.fries.dataflow import dataflow
from spark_impl.reconfig import ListSource, Request, UserOperator, user_job, user_update
from spark_impl.values import as_received

Process = Callable[[Any, Any, Any], tuple[Any, list[tuple[Any, Any]]]]


def _click(i: int) -> dict[str, Any]:
    return {"promotion": ["spring", i % 3], "amount": i % 7, "tags": ["web"] if i % 2 else []}


def _by_promotion_as_received(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    fields = dict(value)  # a map arrives as sorted (key, value) pairs; its array as a tuple
    return (state or 0) + 1, [(fields["promotion"], fields["amount"])]


def _by_promotion_as_dict(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    return (state or 0) + 1, [(tuple(value["promotion"]), value["amount"])]


def _total(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    return (state or 0) + value, [(key, (state or 0) + value)]


def _total_twice(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    return (state or 0) + 2 * value, [(key, (state or 0) + 2 * value)]


def _job(attribute: Process) -> Callable[[], tuple[Any, list[Request], dict[str, Any]]]:
    def make() -> tuple[Any, list[Request], dict[str, Any]]:
        flow = dataflow([("S", "source"), ("A", "one-to-one"), ("B", "one-to-one")], [("S", "A"), ("A", "B")])
        source = ListSource(tuple(("S", f"S:{i}", f"u{i % 4}", _click(i)) for i in range(16)))
        job = user_job(flow, {"A": UserOperator(flow.kind("A"), attribute),
                              "B": UserOperator(flow.kind("B"), _total)}, source, parallelism={"A": 2, "B": 2})
        return job, [Request({"B": user_update(flow, "B", _total_twice, lambda s: s)})], {"max_tuples": 8}
    return make


def test_the_live_form_of_json_values_is_tuples_and_sorted_pairs() -> None:
    assert as_received(_click(1)) == (("amount", 1), ("promotion", ("spring", 1)), ("tags", ("web",)))
    assert as_received(["user", 1]) == ("user", 1)


@pytest.mark.spark
def test_a_job_written_for_the_live_form_passes(spark: Any) -> None:
    result = Oracle(spark).check(_job(_by_promotion_as_received), cases=2, seed=1)
    assert result.cases == 2 and result.failed == 0


@pytest.mark.spark
def test_a_job_that_would_crash_live_fails_as_the_users_code(spark: Any) -> None:
    with pytest.raises(AssertionError, match=r"(?s)user-code.*tuple indices must be integers"):
        Oracle(spark).check(_job(_by_promotion_as_dict), cases=2, seed=1)
