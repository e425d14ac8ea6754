"""``streamproof bench reconfiguration|throughput|latency [--json]``: spark_impl's measurements.

``reconfiguration``: the backlogged workload (events -> Expensive -> Tally, every batch a
backlog that keeps Expensive's tasks busy for seconds) run under fries and under epoch, side
by side in one process; in the middle of a batch the user swaps Expensive's model (Fries
§8.3). The delay is from the request to the last reconfigured object's switch.
``--json`` prints ``{"fries_ms": float, "epoch_ms": float, "ratio": float, ...}``.

``throughput``: the same operators with no reconfiguration, through the executor (trace
off, checkpoints on) and through a plain PySpark micro-batch pipeline (state as cached RDDs);
also a cost floor (same shuffles, state in the Python workers' memory, not durable);
Also the same operators on Spark's own stateful streaming API (two chained
``transformWithStateInPandas`` processors, RocksDB state, file source and sink:
:mod:`spark_impl.workloads.structured`), the baseline a user would otherwise pick;
``--json`` prints ``{"executor_s", "plain_s", "slowdown", "memory_floor_s",
"slowdown_vs_floor", "structured_streaming_s", "vs_structured_streaming", "events", ...}``
(``vs_structured_streaming`` = executor time / Structured Streaming time). The runs are
interleaved (plain, floor, executor, Structured Streaming, twice) and the best of each kept.

``latency``: the per-micro-batch floor with tiny batches (default 10 events, no per-event
cost): each engine runs 2 and 2 + K batches (default K = 8), interleaved, best of two; the
floor is the difference divided by K (so query start-up cancels out). ``--json`` prints
``{"executor_ms", "structured_streaming_ms", "ratio", "batches", "batch_size"}``.

Every result also has ``"load_average"``: the 1-minute load average before and after the
runs. If the Structured Streaming baseline cannot run (its Python workers miss Spark's fixed
connect-back timeout in every attempt, see :func:`_timed_structured`), the command prints
one stderr line saying so and exits 3 with no result.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

from spec.errors import InputError, cut
from streamproof.output import print_json


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``bench`` sub-command."""
    parser = subparsers.add_parser("bench", help="measure spark_impl: reconfiguration delay, throughput",
                                   description="Benchmarks of the PySpark executor.")
    parser.add_argument("what", choices=["reconfiguration", "throughput", "latency"],
                        help="which benchmark")
    parser.add_argument("--events", type=int, default=None, help="events in the stream")
    parser.add_argument("--batch-size", type=int, default=None, help="events per micro-batch")
    parser.add_argument("--cost-ms", type=float, default=None, help="Expensive's CPU cost per event in ms")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


MAX_EVENTS = 10_000_000
"""Largest ``--events`` (throughput's default is 20,000 events, about a minute; 10^7 at the
default 0.2 ms per event is over half an hour of CPU per run, and each bench runs several)."""
MAX_BATCH_SIZE = 1_000_000
MAX_COST_MS = 60_000.0
"""Largest ``--cost-ms``: one minute of CPU per event."""


def run(args: argparse.Namespace) -> int:
    """Run one benchmark and print it."""
    from spark_impl.session import get_or_create_session, prefer_installed_pyspark  # noqa: PLC0415 - loaded when the command runs, not by --help

    for name, most in (("events", MAX_EVENTS), ("batch_size", MAX_BATCH_SIZE), ("cost_ms", MAX_COST_MS)):
        value = getattr(args, name)
        if value is not None and not 0 < value <= most:  # also rejects nan
            raise InputError(f"must be positive and at most {most:,g}, got {cut(str(value), 40)}",
                             f"--{name.replace('_', '-')}")
    if args.what == "reconfiguration" and args.events is not None \
            and args.events < 2 * (args.batch_size or 2000):
        # the request is made while the second batch runs: there must be one
        raise InputError(f"need --events >= 2 * --batch-size (the swap happens in the second "
                         f"batch), got {args.events} events in batches of {args.batch_size or 2000}",
                         "--events")
    # the stateful streaming baseline starts fresh Python workers with a fixed 10 s to
    # connect back: let them import the installed pyspark, not recompile pyspark.zip
    prefer_installed_pyspark()
    spark = get_or_create_session(app_name="streamproof-bench")
    bench = {"reconfiguration": _reconfiguration, "throughput": _throughput,
             "latency": _latency}[args.what]
    load_before = os.getloadavg()[0]
    try:
        result = bench(spark, args)
    except BaselineFailed as failed:
        print(f"streamproof bench: {failed}", file=sys.stderr)
        return 3
    result["load_average"] = [round(load_before, 1), round(os.getloadavg()[0], 1)]
    if args.json:
        print_json(result)
    else:
        for key, value in result.items():
            print(f"{key:>22}: {value:.4f}" if isinstance(value, float) else f"{key:>22}: {value}")
    return 0


def _reconfiguration(spark: Any, args: argparse.Namespace) -> dict[str, Any]:
    from spark_impl.reconfig import Executor, collect_results  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from spark_impl.workloads.backlog import backlog_job, cheaper_model  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

    batch = args.batch_size or 2000
    events = args.events or 2 * batch
    cost = args.cost_ms or 1.0
    delays: dict[str, float] = {}
    for scheduler in ("fries", "epoch"):
        with tempfile.TemporaryDirectory(prefix="streamproof-bench-") as checkpoint:
            executor = Executor(spark, [backlog_job(events, cost_ms=cost, batch_size=batch, trace=False)],
                                scheduler, checkpoint)
            executor.step()
            # ask while the second batch's Expensive tasks work through their backlog
            # (each of the 2 workers holds batch/2 events * cost ms)
            answer = executor.step_with_request(0.6 + batch * cost / 8000.0, 0, cheaper_model(cost))
            if answer is not None:
                raise RuntimeError(f"request rejected: {answer}")
            executor.run()
            (result,) = collect_results(executor)
            delays[scheduler] = result.delays_ms[0]
    return {"fries_ms": delays["fries"], "epoch_ms": delays["epoch"], "ratio": delays["fries"] / delays["epoch"],
            "events": events, "batch_size": batch, "cost_ms": cost, "workers": 2}


def _timed_executor(spark: Any, events: int, cost: float, batch: int) -> float:
    """Seconds for the executor (fries, trace off, checkpoints on) over ``events``."""
    from spark_impl.reconfig import Executor  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from spark_impl.workloads.backlog import backlog_job  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

    with tempfile.TemporaryDirectory(prefix="streamproof-bench-") as checkpoint:
        start = time.perf_counter()
        Executor(spark, [backlog_job(events, cost_ms=cost, batch_size=batch, trace=False)],
                 "fries", checkpoint).run()
        return time.perf_counter() - start


ATTEMPTS = 6
"""Structured Streaming runs tried before the bench gives up (see :func:`_timed_structured`)."""
PAUSE_S = 5.0
"""Pause after failed attempt ``k``: ``k * PAUSE_S`` seconds."""


class BaselineFailed(Exception):
    """Every attempt of a Structured Streaming run failed on the connect-back timeout."""


def _timed_structured(spark: Any, events: int, cost: float, batch: int) -> float:
    """Seconds for the Structured Streaming pipeline over ``events``.

    ``transformWithStateInPandas`` starts fresh Python processes (not the forked daemon's
    workers) that must import pyspark, pandas and pyarrow and connect back to the JVM within
    a timeout Spark 4.3 fixes at 10 s (``PythonWorkerFactory.createSimpleWorker``; no
    configuration changes it). The bench lets them import the installed pyspark rather than
    recompile ``pyspark.zip`` (:func:`spark_impl.session.prefer_installed_pyspark`, ~3x
    faster), but on a heavily loaded machine the start can still take longer and the query
    fails; such a run is started again from scratch after a pause (up to
    :data:`ATTEMPTS` times; one stderr line per failed attempt), timing only the run that
    completes. Spark's own stack traces of a failed attempt are silenced (log level OFF
    while the query runs); if every attempt fails, :class:`BaselineFailed` says so."""
    from spark_impl.workloads.structured import structured_run  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

    sc = spark.sparkContext
    for attempt in range(1, ATTEMPTS + 1):
        with tempfile.TemporaryDirectory(prefix="streamproof-bench-ss-") as directory:
            sc.setLogLevel("OFF")
            start = time.perf_counter()
            try:
                structured_run(spark, events, cost_ms=cost, batch_size=batch,
                               directory=directory)
                return time.perf_counter() - start
            except Exception as error:  # noqa: BLE001 - only the connect-back timeout
                if "failed to connect back" not in str(error):
                    raise
            finally:
                sc.setLogLevel("ERROR")
        load = os.getloadavg()[0]
        print(f"streamproof bench: Structured Streaming attempt {attempt}/{ATTEMPTS} failed: a Python "
              f"worker missed Spark's fixed 10 s connect-back timeout (load average {load:.1f})",
              file=sys.stderr)
        if attempt < ATTEMPTS:
            time.sleep(PAUSE_S * attempt)  # let the load burst pass
    raise BaselineFailed(f"the Structured Streaming baseline failed {ATTEMPTS} times in a row: its Python "
                         f"workers missed Spark's fixed 10 s connect-back timeout (load average "
                         f"{os.getloadavg()[0]:.1f}); no ratio measured, run again on a quieter machine")


def _latency(spark: Any, args: argparse.Namespace) -> dict[str, Any]:
    batch = args.batch_size or 10
    extra = max(1, (args.events or 8 * batch) // batch)  # K
    cost = args.cost_ms or 0.0
    _timed_structured(spark, batch, cost, batch)  # warm up both
    _timed_executor(spark, batch, cost, batch)
    best: dict[tuple[str, int], float] = {}
    for _ in range(2):
        for batches in (2, 2 + extra):
            for name, timed in (("executor", _timed_executor), ("structured", _timed_structured)):
                seconds = timed(spark, batches * batch, cost, batch)
                best[name, batches] = min(best.get((name, batches), seconds), seconds)
    floor = {name: 1000 * max(0.0, best[name, 2 + extra] - best[name, 2]) / extra
             for name in ("executor", "structured")}
    return {"executor_ms": floor["executor"], "structured_streaming_ms": floor["structured"],
            # null, not Infinity (not JSON), when the baseline's floor measured as zero
            "ratio": floor["executor"] / floor["structured"] if floor["structured"] else None,
            "batches": extra, "batch_size": batch, "cost_ms": cost}


def _throughput(spark: Any, args: argparse.Namespace) -> dict[str, Any]:
    from spark_impl.workloads.backlog import plain_memory_run, plain_run  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

    batch = args.batch_size or 5000
    events = args.events or 4 * batch
    cost = args.cost_ms or 0.2
    plain_run(spark, batch, cost_ms=cost, batch_size=batch)  # warm the Python workers
    timings: dict[str, float] = {}
    for attempt in range(2):
        start = time.perf_counter()
        plain_run(spark, events, cost_ms=cost, batch_size=batch)
        timings[f"plain{attempt}"] = time.perf_counter() - start
        start = time.perf_counter()
        plain_memory_run(spark, events, cost_ms=cost, batch_size=batch)
        timings[f"memory{attempt}"] = time.perf_counter() - start
        timings[f"executor{attempt}"] = _timed_executor(spark, events, cost, batch)
        timings[f"structured{attempt}"] = _timed_structured(spark, events, cost, batch)
    executor_s = min(timings["executor0"], timings["executor1"])
    structured_s = min(timings["structured0"], timings["structured1"])
    plain_s = min(timings["plain0"], timings["plain1"])
    memory_s = min(timings["memory0"], timings["memory1"])
    return {"executor_s": executor_s, "plain_s": plain_s, "slowdown": executor_s / plain_s,
            "memory_floor_s": memory_s, "slowdown_vs_floor": executor_s / memory_s,
            "structured_streaming_s": structured_s,
            "vs_structured_streaming": executor_s / structured_s, "events": events,
            "batch_size": batch, "cost_ms": cost, "executor_events_per_s": events / executor_s,
            "plain_events_per_s": events / plain_s}
