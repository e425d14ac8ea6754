"""What the sandboxed child computes for ``streamproof dgs-plan``: load the program, build (or
optimize) a synchronization plan for the input's rates, check it P-valid (V1, V2), run it with
the reference executor and compare its outputs with the sequential program's (Def. 3.4).

The result is ``{"kind": "report", "consistent": ok, "document", "lines"}`` like the check
task's (:mod:`streamproof.sandbox.check`), ``ok`` meaning "the plan is valid and its
outputs equal the sequential program's". Where the plan comes from:

* the input file's ``plan``, run as given (an invalid one is reported, not run);
* otherwise the Appendix B optimizer (:func:`reference.dgs.optimizer.optimize`) on the rates,
  at most ``--workers`` leaves (:func:`reference.dgs.leaves.cap_leaves`), ``inline_below`` 0;
* ``--optimize``: the optimizer's plan at every number of leaves from 1 to its own (or
  ``--workers``), each with its cheapest ``inline_below``
  (:mod:`streamproof.sandbox.plan_cost`); the cheapest pair wins (fewer leaves on ties).

Load and synchronizations are counted on the reference run's trace: a worker's *load* is the
events it processed; an event processed by a worker with children costs one join and one fork
at that worker and at every worker with children below it (the §3.4 protocol the executor
follows); the initial fork of ``init`` and the final join are not counted. With engine
``spark`` the plan also runs on Spark (:func:`spark_run`), whose outputs must equal too.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Iterator

from streamproof.sandbox.guard import SandboxMonitor
from streamproof.sandbox.plan_cost import PlanCost, choose_inline_below, plan_cost, released_in_order
from streamproof.sandbox.plan_input import PlanInput, parse_plan_input
from reference.dgs.executor import execute_plan
from reference.dgs.leaves import cap_leaves, collapses, leaf_count
from reference.dgs.optimizer import optimize
from reference.dgs.validity import check_plan, impl_text
from spark_impl.dgs import run_dgs
from spark_impl.dgs.topology import topology
from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program, short_repr
from spec.dgs.semantics import multiset_equal, outputs_equal, spec_output
from spec.dgs.streams import ImplTag, StreamEvent, sort_streams
from spec.errors import InputError
from spark_impl.session import get_or_create_session

TASK = "plan"


@dataclass(frozen=True)
class PlanRequest:
    """What the parent asks for (``dgs-plan``'s arguments and the validated input file)."""

    target: str
    source: str
    document: Any
    workers: int | None
    optimize: bool
    seed: int
    sync_cost: float
    engine: str = "reference"
    memory_mb: int = 0
    task: str = TASK

    @staticmethod
    def from_json(data: dict[str, Any]) -> "PlanRequest":
        """The request the parent wrote."""
        workers = data["workers"]
        return PlanRequest(str(data["target"]), str(data["source"]), data["document"],
                           None if workers is None else int(workers), bool(data["optimize"]), int(data["seed"]),
                           float(data["sync_cost"]), str(data.get("engine", "reference")), int(data["memory_mb"]))


def plan_program(request: PlanRequest, monitor: SandboxMonitor) -> dict[str, Any]:
    """Load, plan, check, run, compare; the report (module docstring)."""
    with monitor.phase("loading the program"):
        program = load_program(request.target, monitor)
    inputs = parse_plan_input(request.document, "$")
    with monitor.phase("building the plan"):
        unknown = sorted((t for t, _ in inputs.rates if t not in program.tags), key=repr)
        if unknown:
            raise InputError(f"{short_repr(unknown[0])} is not a tag of {program.name}", f"{request.source}: $.rates")
        rates = measured_rates(program, inputs)
        plan, source, cost, tried = _plan(program, inputs, request, rates)
    document: dict[str, Any] = {
        "program": request.target, "input": request.source, "engine": request.engine, "seed": request.seed,
        "plan_source": source, "plan": _plan_json(plan), "leaves": leaf_count(plan),
        "rates": [{"impl_tag": impl_text(t), "rate": r} for t, r in sorted(rates.items(), key=repr)],
    }
    leaves = leaf_count(plan)
    lines = [f"{request.target} on {request.source}: {source} plan, {leaves} leaf worker{'s' * (leaves != 1)}",
             *tree_lines(plan)]
    problem = _invalidity(program, plan, inputs)
    document.update(valid=problem is None, counterexample=problem)
    if problem is not None:
        lines.append(f"plan INVALID: {problem}")
        return _report(False, document, lines)
    lines.append("plan valid (V1, V2: P-valid, DGS Def. 3.2)")
    with monitor.phase("running the plan"):
        run = execute_plan(program, plan, inputs.streams, request.seed)
    with monitor.phase("running the sequential program"):
        expected = spec_output(program, sort_streams(inputs.streams))
    with monitor.phase("comparing the outputs"):  # == and repr of the program's values run here
        difference = output_difference(run.outputs, expected)
    document.update(outputs_equal=difference is None, outputs={"plan": len(run.outputs), "sequential": len(expected),
                                                              "difference": difference})
    lines.append(f"outputs equal the sequential program's ({len(expected)} outputs, as multisets)" if difference is None
                 else f"outputs DIFFER from the sequential program's: {difference}")
    load = worker_load(plan, run.processed)
    document["workers"] = load
    document["synchronizations"] = {k: sum(w[k] for w in load) for k in ("joins", "forks")}
    lines.append(f"synchronizations: {document['synchronizations']['joins']} joins, "
                 f"{document['synchronizations']['forks']} forks")
    lines.extend(f"  {w['id']}: {w['events']} events, {w['joins']} joins, {w['forks']} forks" for w in load)
    if cost is not None:
        document["spark_model"] = {**cost.to_json(), "sync_cost": request.sync_cost,
                                   "tried": [c.to_json() for c in tried]}
        lines.append(f"Spark executor model: inline_below={cost.inline_below}: {cost.rounds} synchronizing rounds, "
                     f"{cost.critical} events on the critical path, cost {cost.cost:g} "
                     f"(sync cost {request.sync_cost:g} events; {len(tried)} candidate{'s' * (len(tried) != 1)} tried)")
    ok = difference is None
    if request.engine == "spark":
        with monitor.phase("running the plan on Spark"):
            spark = spark_run(request.target, plan, inputs, 0 if cost is None else cost.inline_below)
        with monitor.phase("comparing the outputs"):
            spark_difference = output_difference(spark.outputs, expected)
        events = {w.id: 0 for w in plan.workers()}
        for worker_id, _, _ in spark.processed:
            events[worker_id] += 1
        rounds = sum(t.syncs for t in spark.ticks)
        document["spark"] = {"outputs_equal": spark_difference is None, "difference": spark_difference,
                             "inline_below": 0 if cost is None else cost.inline_below, "rounds": rounds,
                             "events": events, "seconds": round(spark.seconds, 3)}
        lines.append(f"Spark: outputs equal the sequential program's ({len(spark.outputs)} outputs)"
                     if spark_difference is None else f"Spark: outputs DIFFER from the sequential program's: {spark_difference}")
        lines.append(f"Spark: inline_below={document['spark']['inline_below']}, {rounds} synchronizing rounds, "
                     f"events per worker: {', '.join(f'{w} {n}' for w, n in events.items())}; {spark.seconds:.2f} s")
        ok = ok and spark_difference is None
    return _report(ok, document, lines)


def spark_run(target: str, plan: Plan, inputs: PlanInput, inline_below: int) -> Any:
    """The plan run by the Spark executor (``spark_impl.dgs.run_dgs``) in a local session this
    process starts and stops. The JVM and the Python workers it starts write to /dev/null, not
    to the captured output: Spark's log lines are not the program's (and what the program
    prints in Spark's workers is lost; the reference run before shows it)."""

    with _quiet_fds():
        session = get_or_create_session(app_name="streamproof-dgs-plan")
    try:
        return run_dgs(session, target, plan, inputs.streams, inline_below=inline_below)
    finally:
        session.stop()


@contextmanager
def _quiet_fds() -> Iterator[None]:
    """File descriptors 1 and 2 on /dev/null meanwhile (processes started now inherit that)."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _report(ok: bool, document: dict[str, Any], lines: list[str]) -> dict[str, Any]:
    document["ok"] = ok
    return {"kind": "report", "consistent": ok, "document": document, "lines": lines}


def measured_rates(program: Program, inputs: PlanInput) -> dict[ImplTag, float]:
    """Events per time unit of each implementation tag on the streams (the input's time span),
    overridden by the file's ``rates``."""
    items = [item for stream in inputs.streams.values() for item in stream]
    span = max(it.ts for it in items) - min(it.ts for it in items) + 1
    counts: dict[ImplTag, int] = {}
    for stream, stream_items in inputs.streams.items():
        for item in stream_items:
            if isinstance(item, StreamEvent):
                impl = (program.tag(item.payload), stream)
                counts[impl] = counts.get(impl, 0) + 1
    return {**{impl: n / span for impl, n in counts.items()}, **inputs.rates}


def _plan(
    program: Program, inputs: PlanInput, request: PlanRequest, rates: dict[ImplTag, float]
) -> tuple[Plan, str, PlanCost | None, list[PlanCost]]:
    """The plan to run, where it came from, and (built plans) its modelled Spark cost."""
    if inputs.plan is not None:
        return inputs.plan, "given", None, []
    locations = {impl: inputs.nodes[impl[1]] for impl in rates if impl[1] in inputs.nodes}
    full = optimize(program, rates, locations)
    most = leaf_count(full) if request.workers is None else min(request.workers, leaf_count(full))
    if not request.optimize:
        plan = cap_leaves(program, full, most, rates)
        topo = topology(program, plan)
        cost = plan_cost(topo, released_in_order(program, topo, inputs.streams), 0, request.sync_cost)
        return plan, "built", cost, [cost]
    best: tuple[float, int, Plan, PlanCost] | None = None
    tried: list[tuple[int, list[PlanCost]]] = []
    for plan in collapses(full, rates):  # the capped plans from the most leaves down to one
        leaves = leaf_count(plan)
        if leaves > most:
            continue
        topo = topology(program, plan)  # checks it P-valid
        cost, candidates = choose_inline_below(topo, released_in_order(program, topo, inputs.streams),
                                               request.sync_cost)
        tried.append((leaves, candidates))
        if best is None or (cost.cost, leaves) <= (best[0], best[1]):  # fewer leaves on ties
            best = (cost.cost, leaves, plan, cost)
    assert best is not None
    return best[2], "optimized", best[3], [c for _, group in sorted(tried, key=lambda t: t[0]) for c in group]


def _invalidity(program: Program, plan: Plan, inputs: PlanInput) -> str | None:
    """Why ``plan`` cannot run the input: not P-valid (V1/V2, in words) or an input event no
    worker handles; None when it can."""
    try:
        check_plan(program, plan)
    except InputError as error:
        return str(error)
    owned = {impl for w in plan.workers() for impl in w.impl_tags}
    for stream, items in inputs.streams.items():
        for item in items:
            if isinstance(item, StreamEvent) and (program.tag(item.payload), stream) not in owned:
                impl = (program.tag(item.payload), stream)
                return (f"no worker handles implementation tag {impl_text(impl)}, which the event "
                        f"{short_repr(item.payload)} at ts {item.ts} of stream {stream!r} carries")
    return None


def output_difference(got: list[Any], expected: list[Any]) -> str | None:
    """None when ``got`` equals ``expected`` as a multiset, else one item too many or missing."""
    if multiset_equal(got, expected):
        return None
    rest = list(expected)
    extra = []
    for value in got:  # quadratic, but only for outputs that differ (elements need not hash)
        for index, candidate in enumerate(rest):
            if outputs_equal(candidate, value):
                del rest[index]
                break
        else:
            extra.append(value)
    if not extra and not rest:
        return None
    parts = []
    if extra:
        parts.append(f"the plan output {short_repr(extra[0])}{_more(extra)} that the sequential program did not")
    if rest:
        parts.append(f"the sequential program output {short_repr(rest[0])}{_more(rest)} that the plan did not")
    return f"{len(got)} outputs against {len(expected)}; " + "; ".join(parts)


def _more(values: list[Any]) -> str:
    return f" (and {len(values) - 1} more)" if len(values) > 1 else ""


def worker_load(plan: Plan, processed: list[tuple[str, tuple[int, str], Any]]) -> list[dict[str, Any]]:
    """Per worker: events processed, joins and forks performed (module docstring)."""
    events = {w.id: 0 for w in plan.workers()}
    for worker_id, _, _ in processed:
        events[worker_id] += 1
    syncs = {w.id: 0 for w in plan.workers()}
    for worker in plan.workers():
        if worker.children:
            for below in worker.walk():
                if below.children:
                    syncs[below.id] += events[worker.id]
    return [asdict(_Load(w.id, w.state_type, not w.children, events[w.id], syncs[w.id], syncs[w.id],
                         sorted(impl_text(t) for t in w.impl_tags))) for w in plan.workers()]


@dataclass(frozen=True)
class _Load:
    id: str
    state_type: str
    leaf: bool
    events: int
    joins: int
    forks: int
    impl_tags: list[str]


def tree_lines(plan: Plan) -> list[str]:
    """The plan as an indented tree, one worker a line."""
    lines: list[str] = []

    def walk(worker: Worker, depth: int) -> None:
        tags = ", ".join(sorted(impl_text(t) for t in worker.impl_tags)) or "-"
        prims = f" fork {worker.fork}/join {worker.join}" if worker.children else ""
        node = f" at {worker.node}" if worker.node else ""
        lines.append(f"{'  ' * (depth + 1)}{worker.id} [{worker.state_type}]{prims}{node}: {tags}")
        for child in worker.children:
            walk(child, depth + 1)

    walk(plan.root, 0)
    return lines


def _plan_json(plan: Plan) -> Any:
    try:
        return plan.to_json()
    except InputError:  # a tag JSON cannot hold: the tree lines still show it
        return None
