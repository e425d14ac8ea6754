"""Reconfiguration delay in the Fries simulator, mirroring the paper's experiments (Fries §8).

    python benchmarks/fries_delay.py                # every table
    python benchmarks/fries_delay.py --only fig15   # one of fig15, fig16, table6, table7
    python benchmarks/fries_delay.py --quick        # smaller runs

Time unit: 1 simulated millisecond. Every run is checked against the spec (conflict-
serializable and equal to the witness serial execution: column ``ok``). Workflows:

* Fig. 15 / 16 - W1-like: Src -> Parse -> FD (the user-based inference operator, 8 workers,
  25 ms a tuple) -> Sink; a dummy reconfiguration of FD after 20 s. Fig. 15 raises the
  ingestion rate, Fig. 16 FD's per-tuple cost at a fixed rate.
* Table 6 - W4-like: Src -> RE (replicate) -> FD3 -> S1 -> F3 -> SJ and RE -> F4 -> FD4 -> SJ,
  SJ (self-join, uniqueness property) -> E1 -> Sink; FD3/FD4 are slow inference operators.
  SJ keeps only the tuples of the FD3 branch (even values), so it really emits at most one
  tuple per data transaction. Fries with and without the pruning rules of Alg. 4.
* Table 7 - W2-like chain Src -> J1 -> J2 -> J3 -> J4 -> Sink (single-worker sink), every other
  operator with w workers (2 ms a tuple, ingestion at 80% of capacity), a dummy
  reconfiguration of J1 and J4: data channels between all workers vs between MCS workers,
  and the markers each scheduler actually sent.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference.fries.schedulers.fries import object_mcs  # noqa: E402
from reference.fries.simulator import check_run, simulate  # noqa: E402
from reference.fries.topology import build_topology  # noqa: E402
from spec.fries.scenario import Scenario, scenario_from_json  # noqa: E402

CHANNEL = [0.1, 0.5]
FCM = [0.5, 1.0]


def _map(mul: int = 1, add: int = 0) -> dict[str, Any]:
    return {"op": "map", "mul": mul, "add": add}


def _scenario(ops: list[tuple[str, str, bool]], edges: list[tuple[str, str]], functions: dict[str, Any],
              rate: float, seconds: float, request_s: float, updates: dict[str, Any],
              costs: dict[str, float], parallelism: dict[str, int], seed: int = 1) -> Scenario:
    tuples = int(rate * seconds)
    return scenario_from_json({
        "dataflow": {"operators": [{"name": n, "kind": k, "unique": u} for n, k, u in ops],
                     "edges": [list(e) for e in edges]},
        "functions": functions,
        "parallelism": parallelism,
        "sources": {"Src": [{"key": i, "value": i % 97} for i in range(tuples)]},
        "reconfigurations": [{"at": int(rate * request_s),
                              "updates": {op: {"function": functions[op]} for op in updates}}],
        "timing": {"seed": seed, "ingest_interval": 1000.0 / rate, "operator_cost": costs,
                   "channel_delay": CHANNEL, "fcm_delay": FCM},
    })


def w1(rate: float, fd_cost: float, seconds: float) -> Scenario:
    """Src -> Parse -> FD (8 workers) -> Sink, reconfigure FD after 20 s (or 2/3 of the run)."""
    ops = [("Src", "source", False), ("Parse", "one-to-one", False), ("FD", "one-to-one", False),
           ("Sink", "one-to-one", False)]
    edges = [("Src", "Parse"), ("Parse", "FD"), ("FD", "Sink")]
    functions = {"Parse": _map(), "FD": _map(2), "Sink": _map()}
    return _scenario(ops, edges, functions, rate, seconds, seconds * 2 / 3, {"FD": None},
                     {"Parse": 0.2, "FD": fd_cost, "Sink": 0.1}, {"FD": 8})


def w4(reconfigured: list[str], rate: float, seconds: float) -> Scenario:
    """The replicate / self-join workflow of Table 6."""
    ops = [("Src", "source", False), ("RE", "replicate", False), ("FD3", "one-to-one", False),
           ("S1", "one-to-one", False), ("F3", "one-to-one", False), ("F4", "one-to-one", False),
           ("FD4", "one-to-one", False), ("SJ", "one-to-one", True), ("E1", "one-to-one", False),
           ("Sink", "one-to-one", False)]
    edges = [("Src", "RE"), ("RE", "FD3"), ("FD3", "S1"), ("S1", "F3"), ("F3", "SJ"), ("RE", "F4"),
             ("F4", "FD4"), ("FD4", "SJ"), ("SJ", "E1"), ("E1", "Sink")]
    functions = {"RE": {"op": "replicate"}, "FD3": _map(2), "S1": _map(), "F3": _map(),
                 "F4": _map(2, 1), "FD4": _map(), "SJ": {"op": "filter", "mod": 2, "rem": 0},
                 "E1": _map(), "Sink": _map()}
    costs = {"RE": 0.1, "FD3": 30.0, "S1": 0.5, "F3": 0.2, "F4": 0.2, "FD4": 30.0, "SJ": 0.5,
             "E1": 0.2, "Sink": 0.1}
    return _scenario(ops, edges, functions, rate, seconds, seconds * 2 / 3,
                     {op: None for op in reconfigured}, costs, {"FD3": 4, "FD4": 4})


def w2(workers: int, tuples: int) -> Scenario:
    """Src -> J1 -> J2 -> J3 -> J4 -> Sink; Sink has one worker, the rest ``workers``."""
    names = ["Src", "J1", "J2", "J3", "J4", "Sink"]
    ops = [(n, "source" if n == "Src" else "one-to-one", False) for n in names]
    edges = list(zip(names, names[1:]))
    functions = {n: _map() for n in names[1:]}
    parallelism = {n: workers for n in names[:-1]} if workers > 1 else {}
    rate = 400.0 * workers  # 80% of the joins' capacity (2 ms a tuple per worker)
    return _scenario(ops, edges, functions, rate, tuples / rate, tuples / rate / 2, {"J1": None, "J4": None},
                     {"J1": 2.0, "J2": 2.0, "J3": 2.0, "J4": 2.0}, parallelism)


def _run(scenario: Scenario, scheduler: str, **options: bool) -> tuple[float, str]:
    result = simulate(scenario, scheduler, **options)
    return result.delays[0], "yes" if check_run(scenario, result).ok else "NO"


def _table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"\n{title}")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths)))


def fig15(quick: bool) -> None:
    seconds = 6.0 if quick else 30.0
    rows = []
    for rate in (50, 100, 200, 300, 400, 500):
        scenario = w1(rate, 25.0, seconds)
        fries, ok_f = _run(scenario, "fries")
        epoch, ok_e = _run(scenario, "epoch")
        rows.append([str(rate), f"{fries:.1f}", f"{epoch:.1f}", f"{epoch / fries:.0f}x", ok_f + "/" + ok_e])
    _table(f"Fig. 15 - delay (ms) vs ingestion rate (tuples/s); FD: 8 workers x 25 ms/tuple "
           f"(capacity 320/s), request after {seconds * 2 / 3:.0f} s",
           ["rate", "Fries", "Epoch", "Epoch/Fries", "ok"], rows)


def fig16(quick: bool) -> None:
    seconds = 6.0 if quick else 30.0
    rows = []
    for cost in (10, 20, 30, 40, 50):
        scenario = w1(250, float(cost), seconds)
        fries, ok_f = _run(scenario, "fries")
        epoch, ok_e = _run(scenario, "epoch")
        rows.append([str(cost), f"{fries:.1f}", f"{epoch:.1f}", f"{epoch / fries:.0f}x", ok_f + "/" + ok_e])
    _table("Fig. 16 - delay (ms) vs FD cost (ms/tuple, 8 workers) at 250 tuples/s",
           ["cost", "Fries", "Epoch", "Epoch/Fries", "ok"], rows)


def _mcs_names(scenario: Scenario, operators: list[str], prune: bool) -> str:
    topology = build_topology(scenario)
    mcs = object_mcs(topology, operators, prune_edgewise=prune, prune_uniqueness=prune)
    names = sorted({topology.operator_of[v] for v in mcs.vertices}, key=scenario.dataflow.names.index)
    return "{" + ", ".join(names) + "}"


def table6(quick: bool) -> None:
    seconds = 6.0 if quick else 20.0
    rows = []
    for reconfigured in (["FD4"], ["F3"], ["F4"], ["FD3", "FD4"], ["E1"]):
        scenario = w4(reconfigured, 150.0, seconds)
        pruned, ok_p = _run(scenario, "fries")
        unpruned, ok_u = _run(scenario, "fries", prune_edgewise=False, prune_uniqueness=False)
        epoch, ok_e = _run(scenario, "epoch")
        rows.append([", ".join(reconfigured), _mcs_names(scenario, reconfigured, True),
                     _mcs_names(scenario, reconfigured, False), f"{pruned:.1f}", f"{unpruned:.1f}",
                     f"{unpruned / pruned:.0f}x", f"{epoch:.1f}", "/".join((ok_p, ok_u, ok_e))])
    _table("Table 6 - Fries with / without MCS pruning (ms), W4-like, 150 tuples/s, FD3/FD4: 4 workers x 30 ms",
           ["reconfigured", "MCS pruned", "MCS unpruned", "pruned", "unpruned", "ratio", "Epoch", "ok"], rows)


PAPER_TABLE_7 = {1: (5, 3), 4: (68, 48), 12: (588, 432), 20: (1620, 1200), 40: (6440, 4800)}


def table7(quick: bool) -> None:
    rows = []
    for workers in (1, 4, 12, 20) if quick else (1, 4, 12, 20, 40):
        scenario = w2(workers, (50 if quick else 100) * workers)
        topology = build_topology(scenario)
        mcs = object_mcs(topology, ["J1", "J4"])
        fries = simulate(scenario, "fries")
        epoch = simulate(scenario, "epoch")
        ok = "/".join("yes" if check_run(scenario, r).ok else "NO" for r in (fries, epoch))
        paper = PAPER_TABLE_7[workers]
        rows.append([str(workers), str(len(topology.data_channels())), str(len(mcs.edges)),
                     f"{paper[0]:,}/{paper[1]:,}", str(epoch.stats.markers), str(fries.stats.markers),
                     f"{epoch.delays[0]:.1f}", f"{fries.delays[0]:.1f}", ok])
    _table("Table 7 - channels with workers (W2-like chain, reconfigure J1 and J4)",
           ["workers", "all channels", "MCS channels", "paper all/MCS", "Epoch markers", "Fries markers",
            "Epoch ms", "Fries ms", "ok"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["fig15", "fig16", "table6", "table7"])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    args = parser.parse_args()
    experiments = {"fig15": fig15, "fig16": fig16, "table6": table6, "table7": table7}
    for name, run in experiments.items():
        if args.only in (None, name):
            start = time.monotonic()
            run(args.quick)
            print(f"  ({time.monotonic() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
