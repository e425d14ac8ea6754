"""Where an executor micro-batch's time goes.

    python benchmarks/batch_floor.py                    # 24 tiny batches, breakdown table
    python benchmarks/batch_floor.py --batches 40 --python-profile   # + cProfile of the tasks

Runs the bench's workload (``events -> Expensive -> Tally``, 2 workers each, batches of 10
events, no per-event cost, trace off, checkpoints on: what ``streamproof bench latency``
times) through :class:`~spark_impl.reconfig.Executor` in a fresh local session with Spark's
event log on, and prints, per micro-batch (medians over the batches after the first two):

* the driver's wall time of ``Executor.step`` split into its phases (planning, building the
  RDD, the Spark job as the driver waits for ``collect``, absorbing the stats + commit
  (``progress.json``), sinks/retention), measured with ``cProfile`` on the driver;
* the Spark job from the event log: job submission -> first stage submitted, each stage's
  wall time (submission -> completion), the gaps between stages (the DAG scheduler), and per
  task: launch delay, deserialisation, run time, shuffle write/fetch wait, result
  serialisation;
* with ``--python-profile`` (``spark.python.profile``): the Python workers' cumulative time
  in the task functions (state file reads/writes, job loading, control polling).
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spark_impl.reconfig import Executor  # noqa: E402
from spark_impl.session import get_or_create_session  # noqa: E402
from spark_impl.workloads.backlog import backlog_job  # noqa: E402

DRIVER_PHASES = [  # (label, function name as cProfile sees it: file suffix, name)
    ("plan the batch", ("driver.py", "_plan")),
    ("create the batch directory", ("task.py", "ensure_dirs")),
    ("Spark job (driver waits in collect)", ("threading.py", "join")),
    ("absorb stats + commit progress.json", ("driver.py", "_absorb")),
    ("  of which write_progress", ("progress.py", "write_progress")),
    ("  of which publish control.json", ("driver.py", "_publish")),
    ("sinks + retention (_maintain)", ("driver.py", "_maintain")),
]

TASK_FUNCTIONS = [
    ("source stage (generate events)", ("task.py", "source_stage")),
    ("load jobs.pkl (cached)", ("layout.py", "load_jobs")),
    ("read previous state file", ("storage.py", "read_task_file")),
    ("write state file", ("storage.py", "write_task_file")),
    ("control polling", ("control.py", "poll")),
    ("mark task started", ("task.py", "mark_started")),
    ("objects' work", ("task.py", "_object")),
]


def _cumulative(stats: pstats.Stats, where: tuple[str, str]) -> tuple[float, int]:
    total, calls = 0.0, 0
    for (filename, _, name), (_, ncalls, _, cum, _) in stats.stats.items():  # type: ignore[attr-defined]
        if filename.endswith(where[0]) and name == where[1]:
            total += cum
            calls += ncalls
    return total, calls


def _events(log_dir: str) -> list[dict[str, Any]]:
    files = [p for p in glob.glob(os.path.join(log_dir, "**"), recursive=True)
             if os.path.isfile(p) and not os.path.basename(p).startswith(("appstatus", "."))]
    events: list[dict[str, Any]] = []
    for path in files:
        with open(path, encoding="utf-8") as handle:
            events.extend(json.loads(line) for line in handle if line.strip())
    return events


def _spark_breakdown(events: list[dict[str, Any]], skip: int, walls: list[tuple[float, float]]
                     ) -> list[tuple[str, float]]:
    jobs: dict[int, dict[str, Any]] = {}
    stage_job: dict[int, int] = {}
    for ev in events:
        kind = ev["Event"]
        if kind == "SparkListenerJobStart":
            jobs[ev["Job ID"]] = {"start": ev["Submission Time"], "stages": {}, "tasks": []}
            for sid in ev["Stage IDs"]:
                stage_job[sid] = ev["Job ID"]
        elif kind == "SparkListenerJobEnd":
            jobs[ev["Job ID"]]["end"] = ev["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = ev["Stage Info"]
            job = jobs[stage_job[info["Stage ID"]]]
            job["stages"][info["Stage ID"]] = (info["Submission Time"], info["Completion Time"], info["Number of Tasks"])
        elif kind == "SparkListenerTaskEnd":
            sid = ev["Stage ID"]
            if sid in stage_job:
                jobs[stage_job[sid]]["tasks"].append(ev)
    rows: dict[str, list[float]] = {}

    def add(label: str, value: float) -> None:
        rows.setdefault(label, []).append(value)

    ordered = [jobs[j] for j in sorted(jobs)][-len(walls):]
    for number, (job, (began, ended)) in enumerate(zip(ordered, walls)):
        stages = sorted(job["stages"].values())
        if number < skip or not stages or "end" not in job:
            continue
        add("driver: step() called -> job submitted", job["start"] - began)
        add("driver: job end -> step() returns", ended - job["end"])
        add("job: submitted -> first stage submitted", stages[0][0] - job["start"])
        for index, (sub, comp, _) in enumerate(stages):
            add(f"stage {index}: submitted -> completed", comp - sub)
            if index:
                add(f"gap stage {index - 1} completed -> stage {index} submitted", sub - stages[index - 1][1])
        add("job: last stage completed -> job end", job["end"] - stages[-1][1])
        add("job: total (event log)", job["end"] - job["start"])
        by_stage: dict[int, list[dict[str, Any]]] = {}
        for task in job["tasks"]:
            by_stage.setdefault(task["Stage ID"], []).append(task)
        for index, sid in enumerate(sorted(by_stage)):
            sub = job["stages"][sid][0]
            tasks = by_stage[sid]
            launch = max(t["Task Info"]["Launch Time"] - sub for t in tasks)
            add(f"stage {index} tasks: submitted -> last launch", launch)
            metrics = [t.get("Task Metrics") or {} for t in tasks]
            add(f"stage {index} tasks: deserialize (max)", max(m.get("Executor Deserialize Time", 0) for m in metrics))
            add(f"stage {index} tasks: run time (max)", max(m.get("Executor Run Time", 0) for m in metrics))
            add(f"stage {index} tasks: shuffle write (max)",
                max(m.get("Shuffle Write Metrics", {}).get("Shuffle Write Time", 0) for m in metrics) / 1e6)
            add(f"stage {index} tasks: shuffle fetch wait (max)",
                max(m.get("Shuffle Read Metrics", {}).get("Fetch Wait Time", 0) for m in metrics))
            add(f"stage {index} tasks: result serialize (max)", max(m.get("Result Serialization Time", 0) for m in metrics))
            add(f"stage {index} tasks: finish -> stage completed",
                job["stages"][sid][1] - max(t["Task Info"]["Finish Time"] for t in tasks))
    return [(label, statistics.median(values)) for label, values in rows.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--python-profile", action="store_true", help="cProfile the Python workers too")
    parser.add_argument("--top", type=int, default=0, help="also print the workers' top N functions")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="streamproof-floor-") as tmp:
        log_dir = os.path.join(tmp, "events")
        os.makedirs(log_dir)
        conf = {"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file://{log_dir}",
                "spark.eventLog.compress": "false", "spark.eventLog.rolling.enabled": "false"}
        if args.python_profile:
            conf["spark.python.profile"] = "true"
        spark = get_or_create_session(app_name="streamproof-batch-floor", conf=conf)
        sc = spark.sparkContext
        # warm-up run: Python workers started, modules imported
        Executor(spark, [backlog_job(2 * args.batch_size, cost_ms=0.0, batch_size=args.batch_size, trace=False)],
                 "fries", os.path.join(tmp, "warm")).run()
        executor = Executor(spark, [backlog_job(args.batches * args.batch_size, cost_ms=0.0,
                                                batch_size=args.batch_size, trace=False)],
                            "fries", os.path.join(tmp, "run"))
        steps: list[float] = []
        walls: list[tuple[float, float]] = []  # epoch ms, the event log's clock
        profile = cProfile.Profile()
        while not executor.done():
            start, began = time.perf_counter(), 1000 * time.time()
            profile.enable()
            executor.step()
            profile.disable()
            steps.append(1000 * (time.perf_counter() - start))
            walls.append((began, 1000 * time.time()))
        stats = pstats.Stats(profile)
        batches = len(steps)
        worker_stats: pstats.Stats | None = None
        if args.python_profile:
            dump = os.path.join(tmp, "profiles")
            sc.dump_profiles(dump)
            files = glob.glob(os.path.join(dump, "*"))
            if files:
                worker_stats = pstats.Stats(files[0])
                for path in files[1:]:
                    worker_stats.add(path)
        spark.stop()
        events = _events(log_dir)
    print(f"{batches} micro-batches of {args.batch_size} events; step wall ms: median "
          f"{statistics.median(steps[2:]):.1f}, mean {statistics.mean(steps[2:]):.1f}, "
          f"min {min(steps):.1f} (load average {os.getloadavg()[0]:.1f})")
    print()
    print("| driver phase (cProfile, per batch) | ms |")
    print("| --- | --- |")
    for label, where in DRIVER_PHASES:
        total, _ = _cumulative(stats, where)
        print(f"| {label} | {1000 * total / batches:.1f} |")
    print()
    print("| Spark job (event log, median per batch) | ms |")
    print("| --- | --- |")
    for label, value in _spark_breakdown(events, 2, walls):
        print(f"| {label} | {value:.1f} |")
    if worker_stats is not None:
        print()
        print("| Python task functions (spark.python.profile, summed over tasks, per batch) | ms | calls/batch |")
        print("| --- | --- | --- |")
        for label, where in TASK_FUNCTIONS:
            total, calls = _cumulative(worker_stats, where)
            print(f"| {label} | {1000 * total / batches:.1f} | {calls / batches:.1f} |")
        if args.top:
            worker_stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
