"""``streamproof demo``: the main job - Fries Fig. 1's fraud-detection pipeline on local Spark.

Runs the pipeline (payments -> FD1 -> FD2 -> Combiner) as a Spark micro-batch stream, and
in the middle of a batch hot-swaps FD2's model and the combiner's weights (Table 1) - once
under the Fries scheduler and once under the epoch scheduler. Prints each run's
reconfiguration delay, the verdict of ``check-schedule`` on its schedule, and the
schema mismatches (Fig. 2's anomaly: a tuple processed by the old FD2 and the new combiner).
Exit 0 when every run is serializable and mismatch-free, 1 otherwise. ``--json`` prints
``{"runs": [{"scheduler", "delay_ms", "serializable", "outputs", "alerts",
"schema_mismatches", "trace"}, ...]}``.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from typing import Any

from spec.errors import InputError
from spec.jsonio import load_json
from streamproof.output import print_json


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``demo`` sub-command."""
    parser = subparsers.add_parser(
        "demo", help="run the fraud-detection pipeline on Spark and hot-swap a model (fries vs epoch)",
        description="Fries Fig. 1 on local Spark: hot-swap FD2's model mid-stream under the fries "
        "and the epoch scheduler; print delays and the schedules' verdicts.")
    parser.add_argument("--payments", type=int, default=2400, help="payments in the stream (default 2400)")
    parser.add_argument("--batch-size", type=int, default=600, help="payments per micro-batch (default 600)")
    parser.add_argument("--cost-ms", type=float, default=3.0, help="FD2 model cost per payment in ms (default 3)")
    parser.add_argument("--schedulers", default="fries,epoch", help="comma-separated (default fries,epoch; "
                        "add naive to see the anomaly)")
    parser.add_argument("--trace-dir", default=None, help="write each run's schedule/outputs here")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the demo; 0 if every run is consistent, 1 otherwise."""
    schedulers = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    if not schedulers:
        raise InputError("no scheduler given (expected some of fries, epoch, naive)", "--schedulers")
    for name in schedulers:
        if name not in ("fries", "epoch", "naive"):
            raise InputError(f"unknown scheduler {name!r} (expected fries, epoch or naive)", "--schedulers")
    repeated = sorted({name for name in schedulers if schedulers.count(name) > 1})
    if repeated:
        raise InputError(f"scheduler {', '.join(map(repr, repeated))} given twice", "--schedulers")
    if not 0 <= args.cost_ms < math.inf:  # also rejects nan
        raise InputError(f"must be at least 0, got {args.cost_ms}", "--cost-ms")
    if args.payments < 2 * args.batch_size or args.batch_size < 1:
        raise InputError("need --payments >= 2 * --batch-size >= 2 (the swap happens in the second batch)")
    from spark_impl.session import get_or_create_session  # noqa: PLC0415 - loaded when the command runs, not by --help

    spark = get_or_create_session(app_name="streamproof-demo")
    trace_root = args.trace_dir or tempfile.mkdtemp(prefix="streamproof-demo-")
    runs = [_one_run(spark, name, args, os.path.join(trace_root, name)) for name in schedulers]
    if args.json:
        print_json({"runs": runs})
    else:
        print(f"fraud detection (Fries Fig. 1): {args.payments} payments, batches of {args.batch_size}, "
              f"FD2 model {args.cost_ms} ms/payment, swap of FD2 + Combiner (Table 1) mid-batch")
        print(f"{'scheduler':<10} {'delay ms':>10} {'verdict':<28} {'outputs':>8} {'alerts':>7} {'mismatches':>10}")
        for r in runs:
            verdict = "conflict-serializable" if r["serializable"] else "NOT serializable"
            print(f"{r['scheduler']:<10} {r['delay_ms']:>10.1f} {verdict:<28} {r['outputs']:>8} "
                  f"{r['alerts']:>7} {r['schema_mismatches']:>10}")
        print(f"schedules and outputs: {trace_root}/<scheduler>/ (check with: streamproof check-schedule "
              f"{trace_root}/fries/schedule.json)")
    return 0 if all(r["serializable"] and r["schema_mismatches"] == 0 for r in runs) else 1


def _one_run(spark: Any, scheduler: str, args: argparse.Namespace, trace: str) -> dict[str, Any]:
    from reference.fries.compact import compact_from_json  # noqa: PLC0415 - loaded when the command runs, not by --help
    from reference.fries.serializability import check_compact  # noqa: PLC0415 - loaded when the command runs, not by --help
    from spark_impl.reconfig import Executor, collect_results  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from spark_impl.reconfig.trace import write_trace  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from spark_impl.workloads.fraud import fraud_job, model_swap  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

    with tempfile.TemporaryDirectory(prefix="streamproof-demo-ckpt-") as checkpoint:
        executor = Executor(spark, [fraud_job(args.payments, fd_cost_ms=args.cost_ms, batch_size=args.batch_size)],
                            scheduler, checkpoint)
        executor.step()
        # the user asks while the second batch is being processed (FD2 busy with its backlog)
        answer = executor.step_with_request(1.0 + args.batch_size * args.cost_ms / 4000.0, 0, model_swap(args.cost_ms))
        if answer is not None:
            raise RuntimeError(f"the demo's request was rejected: {answer}")
        executor.run()
        (result,) = collect_results(executor)
    paths = write_trace(result, trace)
    verdict = check_compact(compact_from_json(load_json(paths["schedule"]), paths["schedule"]))
    kinds = [value[0] if isinstance(value, (tuple, list)) else "" for _, _, _, value in result.outputs]
    return {"scheduler": scheduler, "delay_ms": result.delays_ms[0] if result.delays_ms else float("nan"),
            "serializable": bool(verdict.serializable), "outputs": len(result.outputs),
            "alerts": kinds.count("fraud"), "schema_mismatches": kinds.count("schema-mismatch"), "trace": trace}
