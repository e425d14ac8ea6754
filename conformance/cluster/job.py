"""The driver script ``streamproof cluster run`` submits (``spark-submit --deploy-mode client``).

It runs one small conformance-checked batch on the cluster's executors and writes a JSON
report to ``--out``: the driver's pids, where tasks ran before and after the batch
(:mod:`conformance.cluster.probe`), and per case the failed oracles (empty = conformed).

* ``fries``: random scenarios of the Fries suite through spark_impl's executor
  (:class:`conformance.fries.engines.batch.SparkEngine`, checkpoints under ``--checkpoint``, a
  directory every process of the cluster shares), judged by :func:`conformance.fries.oracles.judge`;
* ``oplus``: STRETCH O+ cases through ``spark_impl.oplus``, compared with the sequential
  reference (:func:`conformance.oplus.suite.spark_discrepancies`);
* ``dgs``: DGS cases through ``spark_impl.dgs``, judged by :func:`conformance.dgs.suite.judge`.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any, Sequence

from spec.jsonio import write_json_atomic

import spark_impl.session as spark_session

from conformance.cluster.probe import executors
from conformance.core.cases import draw_cases
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.engines.batch import spark_engine as dgs_engine
from conformance.dgs.oracles import judge
from conformance.fries.cases.sections import honest_claims, scenario_strategy
from conformance.fries.engines.batch import SparkEngine
from conformance.fries.suite import judge_batch
from conformance.oplus.cases import oplus_cases
from conformance.oplus.engines.batch import spark_engine
from conformance.oplus.oracles import spark_discrepancies

JOBS = ("fries", "oplus", "dgs")


def wait_for_executors(spark: Any, count: int, timeout_s: float) -> int:
    """Wait until ``count`` executors have registered with the driver; return how many did."""
    deadline = time.monotonic() + timeout_s
    registered = 0
    while time.monotonic() < deadline:
        registered = int(spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()) - 1
        if registered >= count:
            break
        time.sleep(0.5)
    return registered


def judged(kind: str, spark: Any, cases: int, seed: int, checkpoint: str) -> list[list[str]]:
    """Per case, the failed oracles as ``"oracle: explanation"`` lines (empty = conformed)."""
    if kind == "fries":
        strategy = scenario_strategy()
        if isinstance(strategy, str):
            raise RuntimeError(strategy)
        scenarios = [honest_claims(s) for s in draw_cases(strategy, cases, seed)]
        engine = SparkEngine("fries", frozenset(), spark=spark, checkpoint_dir=checkpoint)
        return [[f"{f.oracle}: {f.summary}" for f in judgement.failures]
                for _, judgement, _ in judge_batch(engine, scenarios)]
    if kind == "oplus":
        drawn = draw_cases(oplus_cases(), cases, seed)
        return [[] if problem is None else [problem]
                for problem in spark_discrepancies(drawn, spark_engine(frozenset(), spark))]
    if kind == "dgs":
        drawn_dgs = draw_dgs_cases(cases, seed)
        observed = dgs_engine(spark)(drawn_dgs)
        return [[f"{oracle}: {text}" for oracle, text in judge(case, seen)]
                for case, seen in zip(drawn_dgs, observed)]
    raise ValueError(f"unknown job {kind!r}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the job; the report goes to ``--out`` (exit 0 even when a case failed: the report
    says so; non-zero only when the driver itself failed)."""
    parser = argparse.ArgumentParser(prog="conformance.cluster.job")
    parser.add_argument("--job", choices=JOBS, required=True)
    parser.add_argument("--cases", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    spark = spark_session.get_or_create_session(app_name=f"streamproof-cluster-{args.job}")
    registered = wait_for_executors(spark, args.executors, 180.0)
    report: dict[str, Any] = {
        "job": args.job, "master": spark.sparkContext.master, "registered_executors": registered,
        "driver": {"python_pid": os.getpid(),
                   "jvm_pid": int(spark._jvm.java.lang.ProcessHandle.current().pid())},
        "before": executors(spark, 4 * max(1, args.executors)),
    }
    began = time.monotonic()
    failures = judged(args.job, spark, args.cases, args.seed, args.checkpoint)
    report["job_s"] = round(time.monotonic() - began, 2)
    report["cases"] = [{"index": i, "failures": f} for i, f in enumerate(failures)]
    report["after"] = executors(spark, 4 * max(1, args.executors))
    write_json_atomic(args.out, report, indent=1)
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
