"""The Fries executor run end to end on a pure-Python Spark, on shapes the Spark runs cannot
afford and bookkeeping no output shows.

:class:`~conformance.standin.spark.LocalSpark` runs the executor's own stages, task files,
control log and driver in this process. :func:`local_problem` runs two jobs in one executor
(two partitions), then a third afresh on the same directory, and names the first broken promise (run by
:mod:`conformance.fries.checks.contracts`); the parts of :mod:`conformance.fries.checks.late_request` run last:

* **Any depth.** A job whose operators form a chain 32 levels deep, with a request on its
  first operator: stage ``L`` runs the objects of level ``L`` (``layout``'s docstring) and a
  switch report (kind ``STATS``) is "passed to the end" (``task``'s docstring), whatever the
  job's depth. The run must finish within a bounded number of batches, complete the request
  (one delay reported, a duration inside the run: ``engines.delay_problem``) and conform (every oracle of :mod:`conformance.fries.oracles`). The
  Spark runs draw dataflows a few levels deep: a report taken for a deep stage's input (the
  request never completes, the job never ends) cannot show there.
* **Restarts happen.** ``timing.restarts`` (``driver``'s docstring): "the batch in which a
  job's ingestion reaches a listed count runs, then the job crashes before its commit and
  recovers from its last commit (state, offset, requests: a request made after that commit is
  made again, as attempt + 1)". The oracles see only the committed history, which a run
  without the crash gives too, so every restart scenario of the Spark runs passes with the
  crash skipped or misplaced. Checked from the batch plans and the committed history (a job of
  16 tuples restarted after 4, 8, 12 and 16: 4 a batch boundary, 8 the batch that makes its
  request, 12 reached while that batch is still pending, 16 the whole input, a count the
  Spark runs never list: their restart points are drawn below the total): walking the
  batches in order, a batch crashes (ran, never committed) exactly when its ingestion reached
  a listed count not reached before, the crash rolls back the batches pending before it too
  ("recovers from its last commit") and no other batch stays uncommitted; the tuples after
  the last commit are ingested again; a job without listed restarts has every batch it ran
  committed; and the restarted job still conforms.
* **The flush after the input.** docs/spark.md: "A job flushes its blocking operators [...]
  in one last batch, only after every request completed" (the driver plans the flush once
  the offset reached the count before the batch): every batch plan that flushes a job
  ingests nothing for it. A flush planned in the batch that ingests the last tuples gives the
  same outputs; it only skips a restart listed at the total count (the job is done before
  the crash), which the restart check above then names too (a driver that
  tests the offset after the batch, ``prog.offset >= count``, instead of ``lo``).
* **A failing task.** A user function that raises inside a task makes ``Executor.step``
  raise that very exception, and nothing of the batch is committed.
* **Commits as Fries §7.3 says.** After every batch: no job is committed while a head of its
  request lacks the FCM (:class:`~conformance.fries.engines.stepped.CommitWatch`, as on the stepped
  path), and every other job that ran is committed (the batch is not left pending). Commits
  that come late or never show in no output (a crash then replays more), only here.
* **A directory used afresh.** A new executor (no resume) on the checkpoint directory of the
  runs above (``task.load_plan``'s docstring: "a checkpoint directory used afresh rewrites"
  the plans) runs a job 2 levels deep: its results are read from its own batches, levels and
  partitions only (``results``), never from the deeper run's task files still on the
  directory, and conform. It runs on 9 partitions, more than ``FUSE_MAX_PARTITIONS``: the
  source has a stage of its own (the unfused plan, which on Spark only the resume path runs)
  and its objects spread over other partitions than at 2. Its request is a user's, made by ``Executor.step_with_request``
  (the ``demo`` and ``bench`` commands' way; no suite path calls it): accepted, completed,
  the job not committed until it completes; after the run, a batch that crashes before its
  commit raises out of ``step_with_request``.
* **Many partitions, the source fused.** ``Executor(fuse_source=True)`` fuses the source into
  the first stage at any partition count (the default does so only up to
  ``FUSE_MAX_PARTITIONS``): a job on :data:`WIDE` partitions, where every object's partition is
  above 256 (Python caches the small integers, so a partition number compared by identity
  instead of value goes unnoticed below that), must conform like any other
  (``dest != part`` -> ``dest is not part`` drops every tuple there). A job one
  level deep, unfused (``fuse_source=False``), on :data:`WIDE_UNFUSED` partitions, where the
  source stage's task of the job (``partition_of(s, "")``) and every object's partition are above 256:
  ``task.source_stage`` is "Stage 0: read this batch's source tuples of the jobs owned by
  partition ``part``", and the job must conform like the others (compared by
  identity, no task reads them, and nothing is ever processed; the Spark runs have a few
  partitions, below 256 and mostly fused).
* **The epoch scheduler switches at the next batch.** docs/spark.md ("Scenarios: interpretation
  choices"): "under the epoch scheduler the serial order puts ``Rj`` exactly after the first
  ``at`` tuples" (every reconfigured operator switches at the next micro-batch boundary). A
  job on one source run with ``epoch``: in every reconfigured object's log, the tuples before
  ``R1`` are exactly those of index below ``at``. A switch one batch late is as consistent
  (every oracle passes), only later than promised (independent bug set D, 01).
* **Processing costs as configured.** ``timing.operator_cost`` is "the processing time per
  tuple by operator" and ``stragglers`` "an object's cost multiplier" (``spec.fries.scenario.Timing``):
  in a job ``S -> O1 -> O2 -> O3`` with costs 2 ms at ``O1`` and 1 ms at ``O2`` (2 workers
  each), ``O2``'s object ``O2#1`` (not ``O2#0``) a straggler of factor 3 and ``O3`` without a
  cost, the tasks sleep exactly 2 ms per tuple ``O1``'s workers process, 1 ms per tuple
  ``O2#0`` processes and 3 ms per tuple ``O2#1`` processes (counted per object from the run's
  schedule logs), and never for ``O3`` (the task module's ``time.sleep`` is recorded for the
  run). A wrong cost changes only *when* things happen, which no oracle sees (a
  default cost of 1 ms for every operator without one; the
  multiplier looked up by operator, ``stragglers.get(op)``, which an operator of one worker,
  whose object is named as the operator, cannot show).
* **A crash before the first commit.** ``Executor``'s resume: "a resume with nothing
  committed (a crash before the first commit) still never reuses a batch number that ran, and
  loads no state from those batches". A job whose first batch crashes before its commit,
  resumed on the same directory, runs its next batch as batch 2 and must finish and conform
  (a resume that numbers from 0 again runs over the crashed batch's
  files, with outputs that still conform).
* **A long-running job's 300th request.** An unbounded job (``S -> O1 -> O2 -> O3``, every
  operator on 2 workers) takes :data:`REQUESTS` requests through ``Executor.submit``, one after
  the other, each updating ``O1`` and ``O3`` (so ``O2``'s and ``O3``'s workers align on markers
  from their parents): each must complete within :data:`STEPS_PER_REQUEST` batches. Request
  and batch numbers pass 256, where Python's small-integer cache ends: a number compared by
  identity instead of value (a marker's request number ``is`` the
  entry's) stops the 257th request from ever completing, which runs of a few requests cannot show.
  The job runs under ``Retention(2, delays=KEPT_DELAYS)`` (``retention``'s docstring: "delays
  beyond the newest ``delays``" are folded into the record's summary, "``Progress.delay_stats()``
  still covers every request", and a request file is kept only "while it is the latest
  completed request that updated one of the job's operators"; docs/spark.md: "``history``
  keeps ``batches`` entries"): at the end the commit keeps exactly the delays of the newest
  :data:`KEPT_DELAYS` requests, ``delay_stats()`` counts all :data:`REQUESTS` (the last R300),
  the history its last 2 batches, and the request files only R300's. No output shows what a
  commit record keeps, and the Spark runs make a few requests (a
  committed view trimmed to ``Retention.batches`` delays instead of ``delays``).
* **A request's 300th attempt.** A request made after the last commit is "made again, as
  attempt + 1" after every crash (``driver``'s docstring): attempt numbers grow without bound
  in a job that keeps crashing. A job whose request R1 is made as attempt :data:`LATE_ATTEMPT`
  (its attempt count set as 299 crashes would leave it) must finish and conform: the
  driver matches the tasks' switch reports (read back from Spark, new int objects) to the
  active attempt by value (``a.attempt != attempt`` -> ``is not``
  drops every report of an attempt past 256; the request never completes).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import replace
from typing import Any

from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import scenario_from_json

from conformance.fries.checks.chains import BOUND, chain_json, conformance_problem, run_to_end
from conformance.fries.checks.late_request import more_problem
from conformance.fries.engines.batch import delay_problem
from conformance.fries.engines.stepped import CommitWatch
from conformance.standin.spark import LocalSpark

DEPTH = 32
REQUESTS = 300  # a long-running job's requests (numbers past 256)
STEPS_PER_REQUEST = 20  # batches a request may take to complete (it needs 2)
KEPT_DELAYS = 5  # the long-running job's Retention(2, delays=...)
LATE_ATTEMPT = 300  # a request made again after 299 crashes (attempt numbers past 256)
WIDE = 309  # partitions: the objects of chain_json(2, ...) land on 303, 304 and 261
WIDE_UNFUSED = 338  # partitions: chain_json(1, ...)'s source stage task is 259, its objects on 314 and 315


def local_problem() -> str | None:
    """Run the jobs of the module docstring; the first broken promise, or None."""
    directory = tempfile.mkdtemp(prefix="streamproof-local-")
    runs = [{"the job 32 levels deep": scenario_from_json(chain_json(DEPTH, 6, at=2), "deep"),
             "the job restarted after 4, 8, 12 and 16 tuples":
                 scenario_from_json(chain_json(2, 16, at=8, restarts=(4, 8, 12, 16)), "restarting")},
            # afresh: the deeper run's task files are still on the directory
            {"a job 2 levels deep run afresh on the directory of a deeper run (a user's request)":
                scenario_from_json(chain_json(2, 6, at=3), "afresh")}]
    try:
        for named in runs:
            try:
                found = _run_problem(directory, named, submit=named is runs[-1], partitions=9 if named is runs[-1] else 2)
            except Exception as error:  # noqa: BLE001 - a crash of the executor's code is a finding
                found = f"{' and '.join(named)}: raised {type(error).__name__}: {error}"
            if found is not None:
                return found
        wide = {f"a job on {WIDE} partitions with its source fused (fuse_source=True)":
                scenario_from_json(chain_json(2, 6, at=3), "wide")}
        found = _run_problem(os.path.join(directory, "wide"), wide, partitions=WIDE, fuse_source=True)
        unfused = {f"a job on {WIDE_UNFUSED} partitions with a source stage (fuse_source=False)":
                   scenario_from_json(chain_json(1, 4, at=2), "wide-unfused")}
        found = found or _run_problem(os.path.join(directory, "wide-unfused"), unfused, partitions=WIDE_UNFUSED,
                                      fuse_source=False)
        found = found or _epoch_problem(os.path.join(directory, "epoch"))
        found = found or _many_requests_problem(os.path.join(directory, "many"))
        found = found or _cost_problem(os.path.join(directory, "costs"))
        found = found or _first_commit_crash_problem(os.path.join(directory, "first-crash"))
        found = found or _late_attempt_problem(os.path.join(directory, "late-attempt"))
        found = found or more_problem(os.path.join(directory, "more"))
        return found if found is not None else _failing_task_problem(os.path.join(directory, "failing"))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run_problem(directory: str, named: dict[str, Any], *, submit: bool = False, partitions: int = 2,
                 fuse_source: bool | None = None) -> str | None:
    """Run the named scenarios in one executor (``partitions``) on ``directory`` (used afresh:
    no resume), at most :data:`BOUND` batches; the first broken promise, or None. ``submit``:
    job 0's request is a user's, made by ``Executor.step_with_request`` in its second batch,
    and once the run is done a batch that crashes before its commit (the ``before_commit``
    seam) must raise out of ``step_with_request`` (a demo or bench run would else go on)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor
    from spark_impl.reconfig.task import load_plan

    names, scenarios = list(named), list(named.values())
    jobs = [scenario_job(sc) for sc in scenarios]
    user = jobs[0].planned[0].request if submit else None
    if submit:
        jobs[0] = replace(jobs[0], planned=())
    began = time.monotonic()
    ex = Executor(LocalSpark(), jobs, "fries", directory, partitions=partitions, fuse_source=fuse_source)
    watch = CommitWatch()
    for batch in range(BOUND):
        if ex.done():
            break
        if user is not None and batch == 1:
            answer = ex.step_with_request(0.01, 0, user)
            if answer is not None:
                return f"{names[0]}: step_with_request's request was rejected: {answer}"
        else:
            ex.step()
        for s, problem in sorted({**watch.after_batch(ex), **_uncommitted(ex)}.items()):
            return f"{names[s]}: {problem}"
    if not ex.done():
        unfinished = [names[s] for s, st in enumerate(ex.state) if st.live.phase != "done"]
        return (f"{' and '.join(unfinished)} did not finish in {BOUND} batches (a run needs about 6): "
                "a request that never completes holds the job")
    elapsed_ms = (time.monotonic() - began) * 1000.0
    results = collect_results(ex)
    plans = {g: load_plan(directory, g) for g in range(1, ex.g)}  # the batches this executor ran
    for s, (scenario, result, name) in enumerate(zip(scenarios, results, names)):
        if len(result.delays_ms) != len(scenario.reconfigurations) or result.rejected:
            return (f"{name}: {len(result.delays_ms)} of {len(scenario.reconfigurations)} requests completed "
                    f"(rejected: {list(result.rejected)})")
        delay = delay_problem(result.delays_ms, elapsed_ms)
        if delay is not None:
            return f"{name}: {delay}"
        found = conformance_problem(name, scenario, result)
        if found is not None:
            return found
        flushing = [g for g, p in plans.items() if s in p.flush and p.ranges[s][0] != p.ranges[s][1]]
        if flushing:
            g = flushing[0]
            return (f"{name}: batch {g} flushed the job while ingesting its tuples {plans[g].ranges[s][0]}.."
                    f"{plans[g].ranges[s][1]}: the flush runs in one last batch, after the input (docs/spark.md)")
        found = _restart_problem(name, scenario, ex.state[s].committed.history,
                                 {g: p.ranges[s] for g, p in plans.items() if s in p.active})
        if found is not None:
            return found
    return _crash_problem(ex, names[0], user) if user is not None else None


def _epoch_problem(directory: str) -> str | None:
    """The epoch scheduler's switch point (module docstring)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    at = 5
    scenario = scenario_from_json(chain_json(2, 12, at=at), "epoch")
    ex = Executor(LocalSpark(), [scenario_job(scenario)], "epoch", directory, partitions=2)
    run_to_end(ex)
    if not ex.done():
        return f"the epoch job did not finish in {BOUND} batches"
    for obj, log in sorted(collect_results(ex)[0].schedule.logs.items()):
        txns = [op.txn for op in log]
        if "R1" not in txns:
            continue
        cut = txns.index("R1")
        before = sorted(int(t.split(":")[1]) for t in txns[:cut])
        after = sorted(int(t.split(":")[1]) for t in txns[cut + 1:] if t.startswith("S:"))
        if any(i >= at for i in before) or any(i < at for i in after):
            return (f"epoch scheduler: {obj} switched to R1 after the tuples {before} (requested at {at} tuples: "
                    f"the serial order must put R1 exactly after the first {at}, docs/spark.md)")
    return None


def _first_commit_crash_problem(directory: str) -> str | None:
    """A crash before the first commit, then a resume (module docstring)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    scenario = scenario_from_json(chain_json(2, 8, at=3), "first-crash")
    crashed = Executor(LocalSpark(), [scenario_job(scenario)], "fries", directory, partitions=2)
    crashed.before_commit = _crash
    try:
        crashed.step()
        return "a batch whose commit crashed returned from Executor.step"
    except _Crash:
        pass
    ex = Executor(LocalSpark(), [scenario_job(scenario)], "fries", directory, partitions=2, resume=True)
    if ex.g != 2:
        return (f"resumed after a crash before the first commit (batch 1 ran), the next batch is {ex.g}, "
                "not 2: a resume never reuses a batch number that ran")
    run_to_end(ex)
    if not ex.done():
        return f"the job resumed after a crash before its first commit did not finish in {BOUND} batches"
    result = collect_results(ex)[0]
    return conformance_problem("the job resumed after a crash before its first commit", scenario, result)


def _crash(plan: Any) -> None:
    raise _Crash(f"crash before the commit of batch {plan.g}")


class SleepRecorder:
    """The ``time`` module as the task module sees it during :func:`_cost_problem`: ``sleep``
    records its argument instead of sleeping; everything else is the real module's."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def _cost_problem(directory: str) -> str | None:
    """Processing costs and stragglers (module docstring)."""
    from spark_impl.reconfig import task
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    shape = chain_json(3, 8, at=3)
    shape["parallelism"] = {"O1": 2, "O2": 2}  # objects O2#0 (keys 0, 2) and O2#1 (key 1)
    shape["timing"] = {"operator_cost": {"O1": 2.0, "O2": 1.0}, "stragglers": {"O2#1": 3.0, "O3": 5.0}}
    ex = Executor(LocalSpark(), [scenario_job(scenario_from_json(shape, "costs"))], "fries", directory, partitions=2)
    recorder = SleepRecorder()
    real = getattr(task, "time")
    setattr(task, "time", recorder)  # noqa: B010 - the task module's own name for the module
    try:
        run_to_end(ex)
    finally:
        setattr(task, "time", real)  # noqa: B010
    if not ex.done():
        return f"the job with processing costs did not finish in {BOUND} batches"
    processed = Counter(obj for obj, log in collect_results(ex)[0].schedule.logs.items()
                        for op in log if op.txn.startswith("S:"))
    want = Counter({0.002: processed["O1#0"] + processed["O1#1"], 0.001: processed["O2#0"],
                    0.003: processed["O2#1"]})
    got = Counter(round(seconds, 9) for seconds in recorder.slept)
    if got != want or not processed["O2#0"] or not processed["O2#1"]:
        return (f"processing costs: the tasks slept {dict(sorted(got.items()))} (seconds: times), the timing "
                f"gives {dict(sorted(want.items()))} (O1 2 ms, O2 1 ms, its object O2#1 a straggler of factor 3, "
                f"O3 none; tuples processed by object: {dict(sorted(processed.items()))})")
    return None


def _many_requests_problem(directory: str) -> str | None:
    """A long-running job's :data:`REQUESTS` requests (module docstring)."""
    from spark_impl.reconfig.api import scenario_job
    from spark_impl.reconfig.driver import Executor
    from spark_impl.reconfig.layout import request_name
    from spark_impl.reconfig.retention import Retention

    shape = chain_json(3, 4 * STEPS_PER_REQUEST * REQUESTS, at=1)
    shape["reconfigurations"][0]["updates"]["O3"] = {"function": {"op": "fold", "mul": 7},
                                                     "state": {"mul": 1, "add": 2}}
    shape["parallelism"] = {"O1": 2, "O2": 2, "O3": 2}
    full = scenario_job(scenario_from_json(shape, "many requests"))
    request = full.planned[0].request
    ex = Executor(LocalSpark(), [replace(full, planned=(), unbounded=True)], "fries", directory, partitions=2,
                  retention=Retention(2, delays=KEPT_DELAYS))
    for number in range(1, REQUESTS + 1):
        answer = ex.submit(0, request)
        if answer is not None:
            return f"a long-running job's request R{number} was refused: {answer}"
        for _ in range(STEPS_PER_REQUEST):
            ex.step()
            st = ex.state[0]
            if st.live.active is None and st.queued is None:
                break
        else:
            return (f"a long-running job's request R{number} (batch {ex.g}) did not complete within "
                    f"{STEPS_PER_REQUEST} batches (each of R1..R{number - 1} did): a request or batch number "
                    "above 256 compared by identity?")
    made = ex.state[0].live.made
    if made != REQUESTS:
        return f"a long-running job made {made} of its {REQUESTS} requests"
    committed = ex.state[0].committed
    kept, stats = sorted(committed.delays), committed.delay_stats()
    newest = list(range(REQUESTS - KEPT_DELAYS + 1, REQUESTS + 1))
    if kept != newest or stats.count != REQUESTS or stats.last != REQUESTS:
        return (f"a long-running job under Retention(2, delays={KEPT_DELAYS}) keeps the delays of {kept} and "
                f"summarizes {stats.count} (the last R{stats.last}): the commit keeps the newest {KEPT_DELAYS} "
                f"(R{newest[0]}..R{newest[-1]}) and delay_stats() covers all {REQUESTS} requests")
    if len(committed.history) != 2:
        return (f"a long-running job under Retention(2, ...) keeps {len(committed.history)} history entries "
                f"({committed.history}), not its last 2 committed batches")
    files = sorted(name for name in ex.store.list("requests") if name.endswith(".pkl"))
    if files != [request_name(0, REQUESTS).rsplit("/", 1)[1]]:
        return (f"a long-running job under a retention keeps the request files {files[:4]}{'...' * (len(files) > 4)} "
                f"({len(files)}) after R{REQUESTS} completed and was committed: only the latest request that "
                "changed an operator is kept")
    return None


def _late_attempt_problem(directory: str) -> str | None:
    """A request's attempt number past 256 (module docstring)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    scenario = scenario_from_json(chain_json(2, 12, at=3), "late attempt")
    ex = Executor(LocalSpark(), [scenario_job(scenario)], "fries", directory, partitions=2)
    ex.state[0].attempts[1] = LATE_ATTEMPT - 1  # R1 was made, then lost to a crash, this many times
    run_to_end(ex)
    if ex.state[0].attempts.get(1) != LATE_ATTEMPT:
        return f"R1 was made as attempt {ex.state[0].attempts.get(1)}, not {LATE_ATTEMPT} (the check's set-up)"
    if not ex.done():
        return (f"a job whose request R1 is in its attempt {LATE_ATTEMPT} did not finish in {BOUND} batches: "
                "an attempt number above 256 compared by identity?")
    result = collect_results(ex)[0]
    return conformance_problem(f"a job whose request is in its attempt {LATE_ATTEMPT}", scenario, result)


def _failing_task_problem(directory: str) -> str | None:
    """A user function that raises inside a task: ``Executor.step`` raises that exception (the
    Spark job's error, re-raised in the driver thread) and commits nothing."""
    from spark_impl.reconfig import Executor, ListSource, UserOperator, user_job

    def boom(state: Any, key: Any, value: Any) -> Any:
        raise ValueError(f"boom on key {key}")

    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, boom)}, ListSource((("S", "S:0", 3, 1),)))
    ex = Executor(LocalSpark(), [job], "fries", directory, partitions=2)
    try:
        ex.step()
    except ValueError as error:
        if str(error) != "boom on key 3":
            return f"a task's ValueError('boom on key 3') came out of Executor.step as ValueError({str(error)!r})"
    except Exception as error:  # noqa: BLE001 - another exception is the finding
        return f"a task's ValueError('boom on key 3') came out of Executor.step as {type(error).__name__}: {error}"
    else:
        return "a batch whose task raised ValueError returned from Executor.step as if it ran"
    if ex.g != 1 or ex.state[0].committed.history:
        return f"a batch whose task raised was committed (next batch {ex.g}, history {ex.state[0].committed.history})"
    return None


class _Crash(Exception):
    """The driver crash of :func:`_crash_problem`."""


def _crash_problem(ex: Any, name: str, request: Any) -> str | None:
    """A batch that crashes before its commit raises out of ``step_with_request``."""
    def crash(plan: Any) -> None:
        raise _Crash(f"crash before the commit of batch {plan.g}")

    ex.before_commit = crash
    try:
        ex.step_with_request(0.0, 0, request)
    except _Crash:
        return None
    return f"{name}: a batch that crashed before its commit returned from step_with_request as if it ran"


def _uncommitted(ex: Any) -> dict[int, str]:
    """Jobs whose batch just run was neither committed nor rolled back although Fries §7.3
    allowed the commit (``driver``'s docstring: after each batch the driver commits every job
    whose state is consistent, except one whose active request has a head without its FCM,
    or a user's request in progress). The other direction, no commit in that window, is
    :class:`conformance.fries.engines.stepped.CommitWatch`'s."""
    g = ex.g - 1
    found: dict[int, str] = {}
    for s, st in enumerate(ex.state):
        live, a = st.live, st.live.active
        if g not in live.pending:  # committed, rolled back, or the job did not run
            continue
        if a is None or not (a.user or set(a.heads) - set(a.switched)):
            found[s] = (f"batch {g} was left uncommitted (pending {live.pending}) although "
                        f"{'no request was in progress' if a is None else f'every head of R{a.j} had its FCM'}: "
                        "after each batch the driver commits every consistent job (Fries §7.3)")
    return found


def _restart_problem(name: str, scenario: Any, history: list[int], ranges: dict[int, tuple[int, int]]) -> str | None:
    """The restart bookkeeping of one job against the module docstring. ``ranges``: the
    source tuples [lo, hi) each batch that ran the job ingested. Walking the batches in
    order, a batch crashes (runs, is never committed) exactly when its ingestion reached a
    listed count not reached before; the crash also rolls back the batches still pending
    before it (run since the last commit: a request's heads lacked the FCM), and no other
    batch stays uncommitted; the tuples after the last commit are ingested again."""
    count = sum(len(tuples) for tuples in scenario.sources.values())
    pending = sorted(c for c in scenario.timing.restarts if c <= count)
    committed = set(history)
    crashes: dict[int, int] = {}  # batch -> the listed count it reached first
    for g in sorted(ranges):
        due = [c for c in pending if ranges[g][1] >= c]
        pending = [c for c in pending if c not in due]
        if due:
            crashes[g] = due[0]
    for g in sorted(ranges):
        if g in crashes and g in committed:
            return (f"{name}: batch {g} ingested up to {ranges[g][1]} tuples, reaching the restart at {crashes[g]}, "
                    "and was committed: the crash before its commit never happened")
        crash = min((c for c in crashes if c >= g), default=None)
        if g not in committed and (crash is None or any(b in committed for b in ranges if g <= b <= crash)):
            return (f"{name}: batch {g} (tuples {ranges[g][0]}..{ranges[g][1]}) ran and was never committed, "
                    f"though it reached no listed restart ({list(scenario.timing.restarts)}) and no crash "
                    "rolled it back before a commit")
    ingested = sum(hi - lo for lo, hi in ranges.values())
    if pending or (ingested <= count) != (not scenario.timing.restarts):
        return (f"{name}: {ingested} source tuples ingested for {count} (restarts {list(scenario.timing.restarts)}, "
                f"never reached: {pending}): a crash replays the tuples after the last commit, nothing else does")
    return None
