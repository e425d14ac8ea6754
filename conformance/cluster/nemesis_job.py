"""The driver script the nemesis submits (``spark-submit --deploy-mode client``): rounds of
conformance-checked jobs until told to stop, every step reported as a JSON line.

Round ``r`` runs job ``jobs[r % len(jobs)]`` (``--jobs``, default ``fries,oplus,dgs``) on ``--cases`` random cases drawn from ``seed * 1000 + r``
(so a relaunched driver redraws exactly the cases of the round it resumes):

* ``fries``: Fries scenarios (random reconfigurations, timing, simulated job restarts) through
  spark_impl's :class:`~spark_impl.reconfig.driver.Executor`, stepped here so each micro-batch
  is reported (with whether a request is in progress: the next batch runs mid-reconfiguration);
  checkpoints in ``<out>/round-<r>``; with ``--resume`` the round continues from that checkpoint
  (``Executor(resume=True)``) - the driver-crash recovery path;
* ``oplus``: STRETCH O+ cases (with elastic rescales; each handover reported as it starts and
  ends) through the O+ suite's Spark engine;
* ``dgs``: DGS cases through the DGS suite's Spark engine.

Every run is judged by the suites' own oracles (:mod:`conformance.cluster.nemesis_oracles`).
Events (``<out>/events.jsonl``, appended by every driver incarnation): ``driver``, ``beat``
(every 0.25 s: registered executors and a monotone count of finished Spark work),
``round``, ``batch``, ``rescale``, ``collect``, ``result``, ``stopped``. The round loop stops after the
round in progress when ``<out>/stop`` exists. A round that raises is reported as failed (its
error text kept whole, so a refused corrupt state file is recognisable), never ends the loop.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from typing import Any, Callable, Sequence

import spark_impl.oplus.driver as oplus_driver
import spark_impl.session as spark_session

from conformance.cluster.job import wait_for_executors
from conformance.cluster.nemesis_oracles import judge_dgs, judge_fries, judge_oplus
from conformance.core.cases import draw_cases
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.engines import batch as dgs_batch
from conformance.fries.cases.sections import honest_claims, scenario_strategy
from conformance.oplus.cases import oplus_cases
from conformance.oplus.engines import batch as oplus_batch
from spark_impl.reconfig.api import collect_results, scenario_job
from spark_impl.reconfig.driver import Executor

JOBS = ("fries", "oplus", "dgs")
Emit = Callable[..., None]


class Events:
    """Appends one JSON object per line to the events file (thread-safe)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = threading.Lock()

    def __call__(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"e": kind, "t": time.time(), "pid": os.getpid(), **fields}, default=str)
        with self.lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()


def heartbeat(spark: Any, emit: Emit, stop: threading.Event, every_s: float = 0.25) -> None:
    """Report registered executors and finished work (succeeded jobs + the most tasks seen
    finished per stage) until ``stop`` is set."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    succeeded: set[int] = set()
    tasks: dict[int, int] = {}
    while not stop.wait(every_s):
        try:
            executors = int(sc._jsc.sc().getExecutorMemoryStatus().size()) - 1
            for job_id in tracker.getJobIdsForGroup():
                if job_id in succeeded:
                    continue
                info = tracker.getJobInfo(job_id)
                if info is not None and info.status == "SUCCEEDED":
                    succeeded.add(job_id)
            for stage_id in tracker.getActiveStageIds():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    tasks[stage_id] = max(tasks.get(stage_id, 0), int(stage.numCompletedTasks))
        except Exception:  # noqa: BLE001 - the context is stopping; the next beat or none
            continue
        emit("beat", executors=executors, work=len(succeeded) + sum(tasks.values()))


def fries_round(spark: Any, cases: int, seed: int, directory: str, resume: bool, emit: Emit,
                r: int) -> list[dict[str, Any]]:
    """Run and judge one round of Fries scenarios (module docstring)."""
    strategy = scenario_strategy()
    if isinstance(strategy, str):
        raise RuntimeError(strategy)
    scenarios = [honest_claims(s) for s in draw_cases(strategy, cases, seed)]
    executor = Executor(spark, [scenario_job(s) for s in scenarios], "fries", directory, resume=resume)
    for _ in range(5000):
        if executor.done():
            break
        executor.step()
        emit("batch", round=r, g=executor.g - 1,
             reconfiguring=any(st.live.active is not None for st in executor.state))
    else:
        raise RuntimeError("the Fries jobs did not finish within 5000 micro-batches")
    emit("collect", round=r)  # from now on the round's state files are read for the verdict
    return judge_fries(scenarios, collect_results(executor))


def oplus_round(spark: Any, cases: int, seed: int, emit: Emit, r: int) -> list[dict[str, Any]]:
    """Run and judge one round of O+ cases, reporting each rescale's handover."""
    original = getattr(oplus_driver, "_handover", None)

    def traced(*args: Any, **kwargs: Any) -> Any:
        emit("rescale", round=r, phase="start")
        try:
            return original(*args, **kwargs)  # type: ignore[misc]
        finally:
            emit("rescale", round=r, phase="end")

    if original is not None:
        setattr(oplus_driver, "_handover", traced)
    try:
        drawn = draw_cases(oplus_cases(), cases, seed)
        return judge_oplus(drawn, oplus_batch.spark_engine(frozenset(), spark))
    finally:
        if original is not None:
            setattr(oplus_driver, "_handover", original)


def dgs_round(spark: Any, cases: int, seed: int) -> list[dict[str, Any]]:
    """Run and judge one round of DGS cases."""
    drawn = draw_dgs_cases(cases, seed)
    return judge_dgs(drawn, dgs_batch.spark_engine(spark)(drawn))


def run_round(spark: Any, args: argparse.Namespace, r: int, resume: bool, emit: Emit) -> None:
    """One round: announce, run, judge, report (a raise is the round's failure)."""
    job = args.jobs[r % len(args.jobs)]
    seed = args.seed * 1000 + r
    directory = os.path.join(args.out, f"round-{r}")
    emit("round", round=r, job=job, dir=directory, resume=resume)
    try:
        if job == "fries":
            runs = fries_round(spark, args.cases, seed, directory, resume, emit, r)
        elif job == "oplus":
            runs = oplus_round(spark, args.cases, seed, emit, r)
        else:
            runs = dgs_round(spark, args.cases, seed)
        emit("result", round=r, job=job, runs=runs, error=None)
    except Exception as error:  # noqa: BLE001 - a failed round is a finding, the loop goes on
        emit("result", round=r, job=job, runs=[], error=f"{type(error).__name__}: {error}"[:20000])


def main(argv: Sequence[str] | None = None) -> int:
    """Rounds from ``--start-round`` until ``<out>/stop`` exists (module docstring)."""
    parser = argparse.ArgumentParser(prog="conformance.cluster.nemesis_job")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=3)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument("--start-round", type=int, default=0)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--jobs", type=lambda text: text.split(","), default=list(JOBS))
    args = parser.parse_args(argv)

    emit = Events(os.path.join(args.out, "events.jsonl"))
    spark = spark_session.get_or_create_session(app_name="streamproof-nemesis")
    # O+ and DGS state then survives an executor loss (spark_impl.lineage)
    spark.sparkContext.setCheckpointDir(os.path.join(args.out, "rdd-checkpoints"))
    registered = wait_for_executors(spark, args.executors, 300.0)
    emit("driver", executors=registered, start_round=args.start_round, resume=args.resume)
    stop = threading.Event()
    threading.Thread(target=heartbeat, args=(spark, emit, stop), daemon=True).start()
    r, resume = args.start_round, args.resume
    while not os.path.exists(os.path.join(args.out, "stop")):
        run_round(spark, args, r, resume and args.jobs[r % len(args.jobs)] == "fries", emit)
        r, resume = r + 1, False
    stop.set()
    emit("stopped", next_round=r)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
