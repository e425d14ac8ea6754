"""The DGS suite (issue 8, 2(d)): outputs of every engine equal spec(sort(u)) (DGS Def. 3.4).

Cases: a shipped *consistent* example program (reference/dgs/examples), a random P-valid
synchronization plan (:func:`reference.dgs.strategies.valid_plans`), a random valid input
instance on three streams (:func:`reference.dgs.strategies.input_instances`) and a seed.
Checks:

* ``reference plan executor vs spec(sort(u))`` - :func:`reference.dgs.executor.run_plan`
  (simulated workers, mailboxes, heartbeats; Theorem 3.5);
* ``spark vs spec(sort(u))`` - spark_impl's DGS executor (:func:`spark_impl.dgs.run_dgs`) with
  per-stream arrival delays and jitter, on the first :data:`SPARK_CASES` cases (each case is
  its own sequence of Spark jobs, one per tick); NOT RUN unless the engine is spark.

The expected side is :func:`spec.dgs.streams.expected_output`; outputs compare as multisets
with the matcher (outputs are compared by their ``repr``, since DGS outputs need not be
hashable). A failing case is shrunk by dropping input events (heartbeats and the final
progress heartbeat are kept, so the instance stays valid) and by replacing the plan with the
one-worker sequential plan; it is printed, but not saved for replay: a DGS case holds Python
values of the user's program that JSON cannot carry faithfully (noted in docs/conformance.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from hypothesis import strategies as st

from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program
from spec.dgs.streams import StreamEvent, Streams, expected_output

from conformance.cases import draw_cases
from conformance.matcher import compare
from conformance.shrink import shrink
from conformance.suite import CheckResult, FailureReport, Progress, SuiteResult

EXAMPLES = Path(__file__).resolve().parent.parent / "reference" / "dgs" / "examples"
CONSISTENT = ("key_counter.py:KeyCounter", "windowing.py:EventWindow", "page_view.py:PageViewJoin",
              "fraud_detection.py:FraudDetection", "windowing_typed.py:TypedWindow")
STREAMS = ("s0", "s1", "s2")
SPARK_CASES = 8


@dataclass(frozen=True)
class DgsCase:
    """One case: program (``file.py:NAME`` of a shipped example), plan, streams, seed."""

    name: str
    plan: Plan
    streams: Streams
    seed: int


Engine = Callable[[DgsCase], list[Any]]


def program_of(name: str) -> Program:
    """A shipped example program."""
    return _PROGRAMS.get(name) or _PROGRAMS.setdefault(name, load_program(str(EXAMPLES / name)))


_PROGRAMS: dict[str, Program] = {}


def cases_strategy() -> st.SearchStrategy[DgsCase]:
    """Random DGS cases (module docstring)."""
    from reference.dgs.strategies import input_instances, valid_plans

    def for_program(name: str) -> st.SearchStrategy[DgsCase]:
        program = program_of(name)
        return st.builds(DgsCase, st.just(name), valid_plans(program, STREAMS), input_instances(program, STREAMS),
                         st.integers(0, 10_000))

    return st.sampled_from(CONSISTENT).flatmap(for_program)


def reference_engine(case: DgsCase) -> list[Any]:
    """The reference plan executor's outputs."""
    from reference.dgs.executor import run_plan

    return list(run_plan(program_of(case.name), case.plan, case.streams, case.seed))


def spark_engine(spark: Any) -> Engine:
    """spark_impl's DGS executor with per-stream delays and jitter drawn from the case seed."""
    def run(case: DgsCase) -> list[Any]:
        from spark_impl.dgs import Arrival, run_dgs

        arrival = Arrival(max_delay=10, max_jitter=3, seed=case.seed)
        return list(run_dgs(spark, str(EXAMPLES / case.name), case.plan, case.streams, arrival=arrival,
                            tick=40).outputs)
    return run


def discrepancy(case: DgsCase, engine: Engine) -> str | None:
    """None when the engine's outputs equal spec(sort(u)) as multisets, else the difference."""
    expected = [repr(x) for x in expected_output(program_of(case.name), case.streams)]
    mismatch = compare(expected, [repr(x) for x in engine(case)])
    return None if mismatch is None else f"outputs differ from spec(sort(u)):\n{mismatch.explain(str)}"


def run_dgs_suite(*, cases: int, seed: int, progress: Progress | None = None, save_dir: str | None = None,
                  engine: str = "reference", spark: Any = None) -> SuiteResult:
    """Run the reference check on ``cases`` cases and, with ``engine == "spark"``, the Spark
    check on the first :data:`SPARK_CASES` of them."""
    result = SuiteResult("dgs", engine, seed)
    drawn = draw_cases(cases_strategy(), cases, seed)
    for case in drawn:
        result.features[case.name.split(":")[1]] += 1
    result.checks.append(_run_check("reference plan executor vs spec(sort(u))", drawn, reference_engine,
                                    result, progress))
    if engine != "spark":
        result.checks.append(CheckResult("spark vs spec(sort(u))", status="unavailable",
                                         note=f"engine {engine} (the spark check needs --engine spark)"))
        return result
    session = spark
    if session is None:
        from spark_impl.session import get_or_create_session

        session = get_or_create_session(app_name="streamproof-conformance")
    result.checks.append(_run_check("spark vs spec(sort(u))", drawn[:SPARK_CASES], spark_engine(session),
                                    result, None))
    return result


def _run_check(name: str, drawn: Sequence[DgsCase], engine: Engine, result: SuiteResult,
               progress: Progress | None) -> CheckResult:
    check = CheckResult(name)
    start = time.monotonic()
    first: int | None = None
    for index, case in enumerate(drawn):
        problem = discrepancy(case, engine)
        check.cases += 1
        if problem is not None:
            check.failed += 1
            check.oracle_failures["outputs"] += 1
            first = index if first is None else first
        if progress is not None and ((index + 1) % 10 == 0 or index + 1 == len(drawn)):
            progress(index + 1, len(drawn))
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        result.failures.append(_shrink(name, first, drawn[first], engine))
    return check


def _shrink(check: str, index: int, case: DgsCase, engine: Engine) -> FailureReport:
    shrunk, stats = shrink(case, candidates, lambda batch: [discrepancy(c, engine) is not None for c in batch],
                           batch=8, max_evaluations=300, deadline_s=120.0)
    explanation = (f"program {shrunk.name}, seed {shrunk.seed}\nplan: {shrunk.plan.to_json()}\n"
                   f"streams: {shrunk.streams!r}\n" + (discrepancy(shrunk, engine) or "no longer fails"))
    shown = {"program": shrunk.name, "seed": shrunk.seed, "plan": shrunk.plan.to_json(),
             "streams": {s: [repr(item) for item in items] for s, items in shrunk.streams.items()}}
    return FailureReport(check, index, ("outputs",), explanation, _size(case), _size(shrunk), stats.steps, shown)


def candidates(case: DgsCase) -> Iterator[DgsCase]:
    """Simpler cases: the one-worker sequential plan, a stream without any event, then a
    stream without one event. Heartbeats stay, so each candidate is a valid input instance."""
    from reference.dgs.strategies import impl_universe

    program = program_of(case.name)
    if case.plan.root.children:
        sequential = Plan(Worker("w0", program.initial, frozenset(impl_universe(program, STREAMS))))
        yield replace(case, plan=sequential)
    for stream, items in case.streams.items():
        events = [i for i, item in enumerate(items) if isinstance(item, StreamEvent)]
        if len(events) > 1:
            yield replace(case, streams={**case.streams, stream: [x for x in items if not isinstance(x, StreamEvent)]})
        for i in events:
            yield replace(case, streams={**case.streams, stream: list(items[:i]) + list(items[i + 1:])})


def _size(case: DgsCase) -> int:
    return sum(1 for items in case.streams.values() for item in items if isinstance(item, StreamEvent))


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """DGS cases are not saved (module docstring), so there is nothing to replay."""
    return False, "DGS cases are printed, not saved for replay (see docs/conformance.md)"
