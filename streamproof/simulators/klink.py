"""``streamproof simulate klink``: Klink against the baseline scheduling policies.

Runs the deterministic discrete-event simulator of ``reference.klink.simulator`` (model in
docs/klink.md) with every policy on the same seeded workload and prints one row per policy:
output latency (mean, p50, p99, and the part after the SWM's ingestion), memory (events
queued or held by joins) and censored windows; then the SWM estimator's accuracy at
f = 90% and 95%. ``--json`` prints::

    {"policies": {"klink": {"mean": s, "p99": s, ...}, "fcfs": {...}, "rr": {...},
                  "hr": {...}, "klink-nomm": {...}, "sbox": {...}},
     "workload": {...}, "estimator": {...}}

Exit codes: 0 after a run, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
from typing import Any

from streamproof.output import print_json

POLICY_ORDER = ("klink", "fcfs", "rr", "hr", "klink-nomm", "sbox")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def register(subparsers: Any) -> None:
    """Add ``klink`` under ``simulate``."""
    parser = subparsers.add_parser(
        "klink",
        help="Klink least-slack scheduling vs FCFS, round robin and highest rate",
        description="Simulate Q windowed queries on K cores under each scheduling policy "
        "(Klink, FCFS, RR, HR, plus Klink without memory management and StreamBox-style "
        "earliest deadline) and print output latency, memory and estimator accuracy.",
    )
    parser.add_argument("--queries", type=_positive_int, default=64, metavar="N",
                        help="number of windowed queries (default 64: ~95%% load on 4 cores)")
    parser.add_argument("--cores", type=_positive_int, default=4, metavar="K",
                        help="number of cores (default 4)")
    parser.add_argument("--delays", choices=("uniform", "zipf"), default="uniform",
                        help="network delay distribution (default uniform)")
    parser.add_argument("--seed", type=_seed, default=1, metavar="S", help="workload seed (default 1)")
    parser.add_argument("--horizon", type=_positive_float, default=100.0, metavar="SECONDS",
                        help="simulated seconds of measured input (default 100)")
    parser.add_argument("--json", action="store_true", help="print JSON for machines")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Simulate and print the policy table (or JSON)."""
    from reference.klink.results import estimator_accuracy  # noqa: PLC0415 - loaded when the command runs, not by --help
    from reference.klink.simulator import SimConfig, compare  # noqa: PLC0415 - loaded when the command runs, not by --help
    from reference.klink.workload import WorkloadConfig  # noqa: PLC0415 - loaded when the command runs, not by --help

    wconfig = WorkloadConfig(queries=args.queries, delays=args.delays, seed=args.seed,
                             horizon=args.horizon)
    sconfig = SimConfig(cores=args.cores)
    wconfig.check_size()  # before anything is built
    comparison = compare(wconfig, sconfig, POLICY_ORDER)
    policies = {name: comparison.results[name].summary() for name in POLICY_ORDER}
    estimator = {
        mode: {f"f{round(f * 100)}": estimator_accuracy(comparison.forecasts, f, mode) for f in (0.90, 0.95)}
        for mode in ("mixture", "eq6")
    }
    document: dict[str, Any] = {
        "policies": policies,
        "workload": {
            "queries": args.queries, "cores": args.cores, "delays": args.delays,
            "seed": args.seed, "horizon": args.horizon, "offered_load": comparison.offered_load,
            "memory_bound_events": comparison.memory_bound,
        },
        "estimator": {**estimator, "swms": len(comparison.forecasts), "scheduler_variance": sconfig.variance},
    }
    if args.json:
        print_json(document)
    else:
        print(_table(document))
    return 0


def _table(document: dict[str, Any]) -> str:
    w = document["workload"]
    lines = [
        f"Klink simulation: {w['queries']} queries on {w['cores']} cores, {w['delays']} network "
        f"delays, seed {w['seed']}, offered load {100 * w['offered_load']:.1f}%",
        "",
        f"{'policy':<11} {'mean s':>7} {'p50 s':>7} {'p99 s':>7} {'afterSWM':>8} "
        f"{'mem mean':>9} {'mem p99':>9} {'censored':>8} {'mean vs klink':>13}",
    ]
    klink_mean = document["policies"]["klink"]["mean"]
    for name, row in document["policies"].items():
        versus = "" if name == "klink" or row["mean"] == 0 else \
            f"{100 * (1 - klink_mean / row['mean']):+.0f}%"
        lines.append(
            f"{name:<11} {row['mean']:7.3f} {row['p50']:7.3f} {row['p99']:7.3f} "
            f"{row['after_swm_mean']:8.3f} {row['memory_mean']:9.0f} {row['memory_p99']:9.0f} "
            f"{row['censored']:8d} {versus:>13}"
        )
    e = document["estimator"]
    lines += [
        "",
        "'mean vs klink': how much lower Klink's mean latency is than this policy's.",
        f"SWM estimator accuracy over {e['swms']} SWMs (share ingested inside the Eq. 7 "
        f"interval): mixture variance f=90% {100 * e['mixture']['f90']:.1f}%, "
        f"f=95% {100 * e['mixture']['f95']:.1f}%; literal Eq. 6 f=90% "
        f"{100 * e['eq6']['f90']:.1f}%, f=95% {100 * e['eq6']['f95']:.1f}%",
    ]
    return "\n".join(lines)
