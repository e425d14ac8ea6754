"""The live O+ query's ``foreachBatch`` handler (``spark_impl.oplus.streaming``, steps 2-3 of its
module docstring: summary pass, watermarks, the round, the commit record) run for real on the
pure-Python Spark stand-in (``support.oplus_live_standin``), batch by batch, with what the
differential live cases never send: late tuples, a stale heartbeat, integer keys, bad rows.

* "A source's *bound* is the largest timestamp or explicit watermark it has delivered ... a
  job's watermark is the minimum bound over its sources" (``spark_impl.oplus.streaming_jobs``):
  a late tuple or a stale heartbeat never moves the watermark back, so a window is emitted once;
* "A tuple below its job's previous watermark is *late* ...: dropped and counted
  (``status().late``)", a running count carried by every commit record;
* ``commit_batch``'s ``batch``: "the late tuples and outputs of this batch alone" - the record's
  ``outputs`` is the number of rows the batch emitted, the rows delivered under its id;
* "A row with an unknown job or source, a tuple missing one of its operator's fields, or a row
  with neither ``ts``, ``watermark`` nor ``end`` fails the batch with a message naming it"
  (docs/spark.md, "Stream rows"): nothing of such a batch is committed or delivered;
* "Key -> instance: ... keys of other types go through ``spark_impl.keys.route`` (``k mod p``
  for integers)" (docs/spark.md; ``route_key``): the instances route *and own* integer keys so;
* ``RoundPlan.moved``: "jobs rescaled at the previous watermark: re-read by the new mapping" -
  and only they (the mapping "changes there and only there", docs/spark.md), judged on the plan
  the instances receive.

The job: sliding-sum (WA 5, WS 10), integer keys, parallelism :data:`P0`; the batches
(:data:`BATCHES`): tuples at ts 1..12; a late tuple at 5; a late tuple at 7; a stale heartbeat
(watermark 3); a rescale to :data:`P1` requested at watermark 15, then ts 13..16 (reaching it);
ts 17..20 (run rescaled); the end; then a batch of three bad rows. Each promise is compared with
a model of the definition computed from the rows alone (:class:`Model`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

import pytest

import spark_impl.oplus.streaming_round as streaming_round
from spec.errors import InputError
from spec.oplus.scenario import parse_scenario

from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit

from conformance.oplus.oracles import sequential

from support.oplus_live_standin import Item, start_local

WA, WS = 5, 10
P0, P1, RESCALE_AT, REQUEST = 7, 3, 15, 4
"""The initial parallelism, the one rescaled to at event time ``RESCALE_AT``, requested before
batch ``REQUEST``."""
KEYS = (4, 7, 605)
"""Integer keys (instances ``k mod 7``: 4, 0, 3; ``k mod 3``: 1, 1, 2)."""


def _tuples(first: int, last: int) -> list[Item]:
    return [{"ts": ts, "key": KEYS[(ts - 1) % len(KEYS)], "value": ts} for ts in range(first, last + 1)]


BATCHES: list[tuple[str, list[Item]]] = [
    ("tuples at ts 1..12", _tuples(1, 12)),
    ("a late tuple at ts 5", [{"ts": 5, "key": KEYS[0], "value": 100}]),
    ("a late tuple at ts 7", [{"ts": 7, "key": KEYS[1], "value": 100}]),
    ("a stale heartbeat (watermark 3)", [{"watermark": 3}]),
    (f"tuples at ts 13..16 (a rescale to {P1} at watermark {RESCALE_AT} requested before)", _tuples(13, 16)),
    ("tuples at ts 17..20", _tuples(17, 20)),
    ("the end of the stream", [{"end": True}]),
]
BAD: list[Item] = [{"job": 3, "ts": 30, "key": 4, "value": 1}, {"ts": 31, "key": 4}, {"key": 7, "value": 1}]
"""A row of an unknown job, a tuple without its ``value``, a row with no ts, watermark or end."""


class Model:
    """The definition's view of every batch (module docstring), computed from the rows alone."""

    def __init__(self) -> None:
        self.watermark: list[float] = []  # after each batch
        self.late: list[int] = []  # the running count after each batch
        self.ran: list[int] = []  # the parallelism each batch runs with
        kept: list[Item] = []  # every tuple not late
        bound, late, size, previous = -math.inf, 0, P0, -math.inf
        for index, (_, items) in enumerate(BATCHES):
            self.ran.append(size)
            for item in items:
                if "ts" in item:
                    if item["ts"] < previous:
                        late += 1
                    else:
                        kept.append(item)
                mark = math.inf if item.get("end") else max(item.get("ts", -math.inf), item.get("watermark", -math.inf))
                bound = max(bound, mark)
            self.watermark.append(bound)
            self.late.append(late)
            if index >= REQUEST and size == P0 and math.isfinite(bound) and bound >= RESCALE_AT:
                size = P1  # applied at this batch's commit: the next batch runs with it
            previous = bound
        case = {"operator": "sliding-sum", "WA": WA, "WS": WS, "parallelism": 1,
                "inputs": [[{"ts": t["ts"], "key": str(t["key"]), "value": t["value"]} for t in kept]]}
        self.reference = sequential(parse_scenario(case))

    def before(self, index: int) -> float:
        return self.watermark[index - 1] if index else -math.inf

    def moved(self, index: int) -> frozenset[int]:
        """The jobs rescaled at the previous batch's watermark."""
        return frozenset({0}) if index and self.ran[index] != self.ran[index - 1] else frozenset()


@dataclass
class Seen:
    """What the query showed after each batch."""

    status: list[Commit | None] = field(default_factory=list)
    moved: dict[int, set[frozenset[int]]] = field(default_factory=dict)  # per batch, the plans' ``moved``
    delivered: dict[int, list[tuple[Any, ...]]] = field(default_factory=dict)
    bad: InputError | None = None
    after_bad: tuple[list[int], Commit | None] = ([], None)


MODEL = Model()


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seen]:
    """Every batch of :data:`BATCHES`, then :data:`BAD`, through the handler (once per module)."""
    found = Seen()
    live = start_local([oplus_job("sliding-sum", WA, WS, parallelism=P0)], str(tmp_path_factory.mktemp("live")),
                      late_policy="drop")
    real = streaming_round.load_state

    def spy(plan: Any, index: int) -> Any:
        found.moved.setdefault(plan.batch, set()).add(plan.moved)
        return real(plan, index)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(streaming_round, "load_state", spy)
        for index, (_, items) in enumerate(BATCHES):
            if index == REQUEST:
                live.run.rescale(P1, watermark=RESCALE_AT)
            live.batch(index, items)
            found.status.append(live.run.status())
    try:
        live.batch(len(BATCHES), BAD)
    except InputError as error:
        found.bad = error
    found.delivered = live.delivered
    found.after_bad = (live.run.log.committed(), live.run.status())
    yield found


def _shown(time: float) -> str:
    return str(int(time)) if math.isfinite(time) else str(time)


@pytest.mark.parametrize("index", range(len(BATCHES)), ids=[what for what, _ in BATCHES])
def test_the_watermark_is_the_largest_bound_delivered_and_never_goes_back(seen: Seen, index: int) -> None:
    status = seen.status[index]
    assert status is not None and status.batch == index
    assert status.watermark == {0: MODEL.watermark[index]}


@pytest.mark.parametrize("index", range(len(BATCHES)), ids=[what for what, _ in BATCHES])
def test_late_tuples_are_dropped_and_counted_in_a_running_count(seen: Seen, index: int) -> None:
    status = seen.status[index]
    assert status is not None and status.late == {0: MODEL.late[index]}


@pytest.mark.parametrize("index", range(len(BATCHES)), ids=[what for what, _ in BATCHES])
def test_a_records_outputs_are_the_rows_of_its_batch_alone(seen: Seen, index: int) -> None:
    before, after = MODEL.before(index), MODEL.watermark[index]
    due = sum(1 for ts, _, _ in MODEL.reference if before < ts <= after)
    status, rows = seen.status[index], seen.delivered.get(index, [])
    assert status is not None and status.outputs == due and len(rows) == due
    assert all((job, batch) == (0, index) and before < ts <= after for job, batch, _, ts, _, _ in rows), (
        f"rows due when the watermark ({_shown(before)}, {_shown(after)}] reaches them")


@pytest.mark.parametrize("index", range(len(BATCHES)), ids=[what for what, _ in BATCHES])
def test_integer_keys_are_owned_by_k_mod_p(seen: Seen, index: int) -> None:
    size = MODEL.ran[index]
    assert all(instance == key % size for _, _, instance, _, key, _ in seen.delivered.get(index, []))


def test_every_window_is_emitted_once_and_the_rows_are_the_reference_of_the_tuples_not_late(seen: Seen) -> None:
    got = Counter((int(ts), str(key), json.dumps(value)) for rows in seen.delivered.values()
                  for *_, ts, key, value in rows)
    assert got == Counter(MODEL.reference)


@pytest.mark.parametrize("index", range(len(BATCHES)), ids=[what for what, _ in BATCHES])
def test_only_a_job_rescaled_at_the_previous_watermark_is_re_read_by_the_new_mapping(seen: Seen, index: int) -> None:
    assert seen.moved[index] == {MODEL.moved(index)}
    assert any(MODEL.moved(i) for i in range(len(BATCHES)))  # the rescale happened


def test_a_batch_with_bad_rows_fails_naming_them_and_leaves_nothing(seen: Seen) -> None:
    last = len(BATCHES)
    assert seen.bad is not None and seen.bad.where == "stream" and f"batch {last}" in str(seen.bad)
    committed, status = seen.after_bad
    assert last not in committed and last not in seen.delivered
    assert status is not None and status.batch == last - 1
