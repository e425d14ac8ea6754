"""One case of the user-job suite: which tuples, which requests when, how the run is paced.

A case is JSON (saved in replay files, shrunk by :func:`candidates`)::

    {"tuples": [12, 13, ...],            # indices into the user's source, ingestion order
     "requests": [[0, 7], [1, 20]],      # [index into the user's requests, at]: made after
                                         # `at` ingested tuples, in this order
     "batch_size": 4,                    # source tuples per micro-batch
     "timing": {...}}                    # spec.fries.scenario Timing JSON: seed, fcm_delay,
                                         # stragglers, operator_cost, restarts, reorder_bound

:func:`case_strategy` draws cases with the Fries suite's generators: a window of the user's
source, a subsequence of the requests at sorted random moments, a batch size, and a Timing from
:func:`conformance.fries.cases.timing.draw_timing` (the same delay / straggler / control /
restart / reorder profiles, on a stand-in scenario with the job's dataflow, workers and tuple
count). ``race=True`` draws the ``race`` profile (control messages spread over seconds, a cost
per tuple) on long windows with requests early enough that data keeps flowing through every
head after the first switched, half of them with the alignment probes' pacing
(:func:`probe_timing`): where an unaligned switch shows (cf. the Fries suite's race section). :func:`case_job` turns a case into the executor's :class:`~spark_impl.reconfig.Job`
with every user call guarded (:mod:`conformance.userjob.guard`); source reordering within
``reorder_bound`` is :func:`spec.fries.reorder.reordered_ingestion`'s permutation. Every key
and value read from the user's source goes through :func:`spark_impl.values.as_received`, the
live front ends' encoding and decoding (lists and structs as tuples, dicts as sorted pairs,
through the persisted form and back): the job meets in a case exactly what it meets live, so a
job the oracle passes can run live (and one that would crash live fails here, as ``user-code``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any, Iterator

from hypothesis import strategies as st

from spec.errors import InputError
from spec.fries.reorder import reordered_ingestion
from spec.fries.scenario import Scenario, SourceTuple, Timing, timing_from_json
from spec.jsonio import expect_int, expect_list, expect_object, reject_unknown_keys

from conformance.fries.cases.moves import delete_at, set_at, timing_moves
from conformance.fries.cases.codec import timing_to_json
from conformance.fries.cases.alignment import PROBE_FCM_DELAY, PROBE_HEAD_COST
from conformance.fries.cases.timing import draw_timing
from conformance.userjob.guard import GuardedLogic, GuardedTransform, UserCodeError
from conformance.userjob.load import JobUnderTest
from spark_impl.reconfig.model import Job, ListSource, OperatorLogic, PlannedRequest, Request, Update
from spark_impl.reconfig.model import Timing as SparkTiming
from spark_impl.values import as_received

Json = dict[str, Any]
BATCH_SIZES = (2, 3, 4, 6, 8)
USUAL_TUPLES = 12


@dataclass(frozen=True)
class Case:
    """A parsed case (module docstring)."""

    tuples: tuple[int, ...]
    requests: tuple[tuple[int, int], ...]
    batch_size: int
    timing: Timing


def stand_in(under: JobUnderTest, n: int, timing: Timing = Timing()) -> Scenario:
    """A scenario with the job's dataflow, workers and ``n`` tuples of one stand-in source:
    what the Fries generators and the reorder permutation read (no function is ever run)."""
    tuples = tuple(SourceTuple(str(i), 0, 0) for i in range(n))
    return Scenario(under.job.dataflow, {}, {"case": tuples}, (), dict(under.job.parallelism), timing)


def case_from_json(under: JobUnderTest, value: Any, where: str = "case") -> Case:
    """Parse and validate a case against the loaded job (InputError naming the field)."""
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"tuples", "requests", "batch_size", "timing", "job"}, where)
    count = under.job.source.count()
    tuples = tuple(expect_int(i, f"{where}.tuples[{n}]") for n, i in enumerate(expect_list(obj.get("tuples"),
                                                                                         f"{where}.tuples")))
    if not tuples or len(set(tuples)) != len(tuples) or not all(0 <= i < count for i in tuples):
        raise InputError(f"tuples must be distinct indices in [0, {count})", f"{where}.tuples")
    requests: list[tuple[int, int]] = []
    for n, raw in enumerate(expect_list(obj.get("requests", []), f"{where}.requests")):
        pair = expect_list(raw, f"{where}.requests[{n}]")
        if len(pair) != 2:
            raise InputError("expected [request index, at]", f"{where}.requests[{n}]")
        index, at = expect_int(pair[0], f"{where}.requests[{n}][0]"), expect_int(pair[1], f"{where}.requests[{n}][1]")
        if not 0 <= index < len(under.requests) or not 0 <= at <= len(tuples):
            raise InputError(f"request index must be < {len(under.requests)} and at <= {len(tuples)}",
                             f"{where}.requests[{n}]")
        if requests and at < requests[-1][1]:
            raise InputError("requests must be in increasing order of at", f"{where}.requests[{n}]")
        requests.append((index, at))
    batch = expect_int(obj.get("batch_size", 4), f"{where}.batch_size")
    if batch < 1:
        raise InputError("must be >= 1", f"{where}.batch_size")
    try:
        timing = timing_from_json(obj.get("timing", {}))
    except InputError as error:
        raise error.located(where) from None
    if any(not 0 < r < len(tuples) for r in timing.restarts):
        raise InputError(f"restart points must be in (0, {len(tuples)})", f"{where}.timing.restarts")
    return Case(tuples, tuple(requests), batch, timing)


def case_to_json(case: Case) -> Json:
    """The JSON form of ``case``."""
    value: Json = {"tuples": list(case.tuples), "requests": [list(r) for r in case.requests],
                   "batch_size": case.batch_size}
    timing = timing_to_json(replace(case.timing, channel_delay=(0.0, 0.0), ingest_interval=1.0))
    if timing:
        value["timing"] = timing
    return value


def case_strategy(under: JobUnderTest, race: bool = False) -> st.SearchStrategy[Json]:
    """Random cases of ``under`` (module docstring), as JSON."""

    @st.composite
    def draw(draw: st.DrawFn) -> Json:
        count = under.job.source.count()
        most = min(count, under.max_tuples)
        n = draw(st.integers(min(most, 24), most) if race else st.integers(min(most, 2), min(most, USUAL_TUPLES)))
        start = draw(st.integers(0, count - n))
        chosen = sorted(draw(st.lists(st.integers(0, len(under.requests) - 1), min_size=1,
                                      max_size=len(under.requests), unique=True)))
        latest = max(1, n - 16) if race else n
        ats = sorted(draw(st.lists(st.integers(1 if race else 0, latest), min_size=len(chosen),
                                   max_size=len(chosen))))
        timing = draw_timing(draw, stand_in(under, n), "race" if race else None)
        if race and draw(st.booleans()):
            timing = probe_timing(under, [index for index in chosen], timing)
        batch = draw(st.sampled_from((2, 3, 4) if race else BATCH_SIZES))
        return case_to_json(Case(tuple(range(start, start + n)), tuple(zip(chosen, ats)), batch, timing))

    return draw()


def probe_timing(under: JobUnderTest, requests: list[int], timing: Timing) -> Timing:
    """The alignment probes' pacing (:mod:`conformance.fries.cases.alignment`) on the user's
    job: control messages spread over seconds and a slow *head* - every reconfigured operator
    with no reconfigured ancestor in its request - so the heads switch micro-batches apart
    while their members keep receiving old-version input."""
    flow = under.job.dataflow
    heads = {op for j in requests for op in under.requests[j].updates
             if not flow.ancestors(op) & set(under.requests[j].updates)}
    cost = {**timing.operator_cost, **{op: PROBE_HEAD_COST for op in heads}}
    return replace(timing, operator_cost=cost, fcm_delay=PROBE_FCM_DELAY)


def _guard_request(request: Request, txn: str) -> Request:
    return Request({op: Update(GuardedLogic(op, u.logic), GuardedTransform(op, txn, u.transform))
                    for op, u in request.updates.items()})


def case_job(under: JobUnderTest, case: Case) -> Job:
    """The executor's job for ``case`` (module docstring); reading the user's source is
    user code (a :class:`UserCodeError` when it raises)."""
    job = under.job
    read = []
    for i in case.tuples:
        try:
            source, txn, key, value = job.source.get(i)
        except Exception as error:  # noqa: BLE001 - the user's source
            raise UserCodeError(f"the job's source .get({i}) raised {type(error).__name__}: {error}") from None
        read.append((source, txn, received(key, i, "key"), received(value, i, "value")))
    order = reordered_ingestion(stand_in(under, len(read), case.timing))
    tuples = tuple(read[int(t.txn)] for t in order)
    logic: dict[str, OperatorLogic] = {op: GuardedLogic(op, lg) for op, lg in job.logic.items()}
    planned = tuple(PlannedRequest(at, _guard_request(under.requests[index], f"R{j + 1}"))
                    for j, (index, at) in enumerate(case.requests))
    t = case.timing
    timing = SparkTiming(seed=t.seed, operator_cost=dict(t.operator_cost), stragglers=dict(t.stragglers),
                         fcm_delay=t.fcm_delay, restarts=t.restarts, batch_size=case.batch_size)
    return replace(job, logic=logic, source=ListSource(tuples), planned=planned, timing=timing, trace=True)


def received(value: Any, index: int, what: str) -> Any:
    """``value`` (the ``what`` of source tuple ``index``) as a live front end hands it to the
    job (:func:`spark_impl.values.as_received`); a value with no documented form cannot run
    live: the user's, a :class:`UserCodeError` naming the tuple."""
    try:
        return as_received(value)
    except (TypeError, ValueError) as error:
        raise UserCodeError(f"the {what} of the job's source tuple {index} cannot reach a live job "
                            f"(docs/production/types.md): {error}") from None


def size(value: Json) -> int:
    """A rough size for reports: tuples + requests + timing hooks."""
    return len(value["tuples"]) + len(value.get("requests", [])) + len(value.get("timing", {}))


#: The timing hooks that pace a race (which object switches when, how slow a head is).
PACING = ("fcm_delay", "operator_cost", "stragglers")
#: Tuples a race keeps after its last request: the stream must outlast the control messages'
#: spread (seconds) whatever the machine's speed, or the race needs a machine as loaded as the
#: one that found it.
RACE_TAIL = 16


def _tail(value: Json) -> int:
    return len(value["tuples"]) - max((at for _, at in value.get("requests", [])), default=0)


def candidates(under: JobUnderTest, value: Json, keep_pacing: bool = False) -> Iterator[Json]:
    """Valid simplifications of a case, most aggressive first (for :func:`conformance.core.shrink.shrink`).
    ``keep_pacing`` (a race): never change the :data:`PACING` hooks and keep :data:`RACE_TAIL`
    tuples after the last request - a race shrunk without the pacing and the stream that made it
    likely would only reproduce on a machine as loaded as the one that found it."""
    seen = {repr(value)}
    pacing = {key: value.get("timing", {}).get(key) for key in PACING}
    after = min(RACE_TAIL, _tail(value))
    for candidate in _moves(value):
        if repr(candidate) in seen:
            continue
        if keep_pacing and (any(candidate.get("timing", {}).get(k) != v for k, v in pacing.items())
                            or _tail(candidate) < after):
            continue
        seen.add(repr(candidate))
        try:
            case_from_json(under, candidate)
        except InputError:
            continue
        yield candidate


def _moves(value: Json) -> Iterator[Json]:
    requests = value.get("requests", [])
    for i in range(len(requests)):
        if len(requests) > 1:
            yield set_at(value, ("requests",), [requests[i]])
            yield delete_at(value, ("requests", i))
    tuples = value["tuples"]
    n = len(tuples)
    if n >= 2:
        half = copy.deepcopy(value)
        half["tuples"] = tuples[: (n + 1) // 2]
        half["requests"] = [[r, min(at, len(half["tuples"]))] for r, at in requests]
        yield half
        tail = copy.deepcopy(value)
        tail["tuples"] = tuples[n // 2:]
        tail["requests"] = [[r, max(0, at - n // 2)] for r, at in requests]
        yield tail
    yield from timing_moves(value)
    for i in range(n):
        smaller = delete_at(value, ("tuples", i))
        smaller["requests"] = [[r, at - 1 if at > i else at] for r, at in requests]
        yield smaller
    for size_ in (1, value.get("batch_size", 4) // 2):
        if 1 <= size_ < value.get("batch_size", 4):
            yield set_at(value, ("batch_size",), size_)
    for i, (_, at) in enumerate(requests):
        for smaller_at in dict.fromkeys((0, at // 2, at - 1)):
            if 0 <= smaller_at < at:
                yield set_at(value, ("requests", i, 1), smaller_at)
