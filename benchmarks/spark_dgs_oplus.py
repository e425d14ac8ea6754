"""DGS and O+ on Spark, measured side by side in one run.

1. **DGS throughput**: the event-window and fraud-detection examples (reference/dgs/examples)
   on the same input - ``--events`` leaf events over 4 streams and ``--syncs`` synchronizing
   events on a fifth - under plans with 1 leaf (the sequential program on Spark: one worker,
   one partition), 2 and 4 leaves, with ``--syncs`` and with no synchronizing event. Events
   per second of the tick jobs (the driver's release, the initial fork and the final join
   excluded) and the ratio to the sequential program.
2. **Cost of one synchronizing event**: the event window at 4 leaves with no synchronizing
   event and with ``--syncs``; (difference of wall time) / syncs; and the same with the
   runtime optimization that processes short leaf segments at the root (``inline_below``).
3. **O+ rescale pause**: a wordcount stream rescaled 2 -> 4 instances at a watermark: the
   handover job's wall time next to the median round.

Every configuration runs ``--repeat`` times on one warm SparkSession (a warm-up run first);
the table shows medians. Usage:
``python benchmarks/spark_dgs_oplus.py [--events N] [--syncs K] [--repeat R] [--work W]``
(``--work W`` adds the event window with W busy-loop iterations per event: where leaves could
pay off).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from spec.dgs.loader import load_program  # noqa: E402
from spec.dgs.streams import Heartbeat, StreamEvent, expected_output  # noqa: E402
from spark_impl.dgs import run_dgs  # noqa: E402
from spark_impl.dgs.plans import balanced_plan  # noqa: E402
from spark_impl.oplus import run_batch  # noqa: E402
from spark_impl.session import get_or_create_session  # noqa: E402

EXAMPLES = ROOT / "reference" / "dgs" / "examples"
PROGRAMS = {
    "event-window": (f"{EXAMPLES / 'windowing.py'}:EventWindow", "value", "barrier"),
    "fraud": (f"{EXAMPLES / 'fraud_detection.py'}:FraudDetection", "txn", "rule"),
}
STREAMS = 4


def dgs_input(leaf_tag: str, sync_tag: str, events: int, syncs: int, seed: int = 0) -> dict[str, list[Any]]:
    """``events`` leaf events over 4 streams (ts 1, 2, ... per stream) and ``syncs`` evenly spread
    synchronizing events; every stream ends with a heartbeat."""
    rng = random.Random(seed)
    per = events // STREAMS
    streams: dict[str, list[Any]] = {
        f"s{i}": [StreamEvent(t, (leaf_tag, rng.randint(0, 999))) for t in range(1, per + 1)]
        for i in range(STREAMS)}
    step = max(1, per // (syncs + 1))
    streams["sync"] = [StreamEvent(step * (k + 1), (sync_tag, rng.randint(0, 9))) for k in range(syncs)]
    for items in streams.values():
        items.append(Heartbeat(per + 2))
    return streams


def plan(leaf_tag: str, sync_tag: str, leaves: int) -> Any:
    """The root owns the synchronizing stream; the 4 leaf streams are split over ``leaves``."""
    groups = [[(leaf_tag, f"s{i}") for i in range(STREAMS) if i * leaves // STREAMS == g] for g in range(leaves)]
    return balanced_plan([(sync_tag, "sync")], groups)


def timed_dgs(spark: Any, target: str, leaf: str, sync: str, leaves: int, streams: Any, repeat: int,
              inline_below: int = 0) -> float:
    """Median wall time of the tick jobs over ``repeat`` runs; checks the output every run."""
    program = load_program(target)
    expected = sorted(map(repr, expected_output(program, streams)))
    times = []
    for _ in range(repeat):
        run = run_dgs(spark, target, plan(leaf, sync, leaves), streams, inline_below=inline_below)
        assert sorted(map(repr, run.outputs)) == expected, "output differs from spec(sort(u))"
        times.append(run.seconds)
    return statistics.median(times)


HEAVY = """import sys
sys.path.insert(0, {folder!r})
from windowing import EventWindow


class HeavyWindow(EventWindow):
    \"\"\"The event window with {work} loop iterations of busy work per event (same outputs).\"\"\"

    @staticmethod
    def update(state, event):
        busy = 0
        for i in range({work}):
            busy += i * i
        return EventWindow.update(state, event)
"""


def heavy_target(work: int, folder: str) -> str:
    """A program file: the event window with busy work in update (where leaves could pay off)."""
    path = Path(folder) / "heavy_window.py"
    path.write_text(HEAVY.format(folder=str(EXAMPLES), work=work))
    return f"{path}:HeavyWindow"


def oplus_rescale(spark: Any, tuples: int, repeat: int) -> tuple[float, float, int]:
    """(median pause, median round, keys moved) of a wordcount rescale 2 -> 4 at a watermark."""
    rng = random.Random(1)
    words = [f"w{i}" for i in range(400)]
    stream = [{"ts": i, "text": " ".join(rng.sample(words, 5))} for i in range(tuples)]
    case = {"operator": "wordcount", "WA": 50, "WS": 200, "WT": "multi", "parallelism": 2,
            "inputs": [stream], "reconfigurations": [{"watermark": tuples // 2, "parallelism": 4}]}
    pauses, rounds, moved = [], [], 0
    for _ in range(repeat):
        result = run_batch(spark, [case], items_per_round=max(1, tuples // 8))
        (handover,) = result.handovers
        pauses.append(handover.pause_s)
        rounds.append(statistics.median(result.round_seconds))
        moved = handover.keys_moved
    return statistics.median(pauses), statistics.median(rounds), moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=40_000)
    parser.add_argument("--syncs", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tuples", type=int, default=4_000, help="O+ rescale stream length")
    parser.add_argument("--work", type=int, default=0,
                        help="also run the event window with this many busy-loop iterations per event")
    args = parser.parse_args()
    spark = get_or_create_session(app_name="bench-spark-dgs-oplus")
    master = spark.sparkContext.master
    print(f"Spark {spark.version}, master {master}; {args.events} leaf events, {args.syncs} "
          f"synchronizing events, median of {args.repeat}\n")
    warm = dgs_input("value", "barrier", 2_000, 2)
    timed_dgs(spark, *PROGRAMS["event-window"], 4, warm, 1)
    print(f"{'program':<14}{'syncs':>6}{'leaves':>7}{'seconds':>10}{'events/s':>12}{'vs sequential':>15}")
    for name, (target, leaf, sync) in PROGRAMS.items():
        for syncs in (args.syncs, 0):
            streams = dgs_input(leaf, sync, args.events, syncs)
            base = None
            for leaves in (1, 2, 4):
                seconds = timed_dgs(spark, target, leaf, sync, leaves, streams, args.repeat)
                base = base or seconds
                rate = (args.events + syncs) / seconds
                print(f"{name:<14}{syncs:>6}{leaves:>7}{seconds:>10.2f}{rate:>12.0f}{base / seconds:>14.2f}x")
    if args.work > 0:
        with tempfile.TemporaryDirectory() as folder:
            target = heavy_target(args.work, folder)
            streams = dgs_input("value", "barrier", args.events, args.syncs)
            base = None
            for leaves in (1, 2, 4):
                seconds = timed_dgs(spark, target, "value", "barrier", leaves, streams, args.repeat)
                base = base or seconds
                print(f"{'heavy-window':<14}{args.syncs:>6}{leaves:>7}{seconds:>10.2f}"
                      f"{(args.events + args.syncs) / seconds:>12.0f}{base / seconds:>14.2f}x"
                      f"   ({args.work} busy iterations per event)")
    target, leaf, sync = PROGRAMS["event-window"]
    none = timed_dgs(spark, target, leaf, sync, 4, dgs_input(leaf, sync, args.events, 0), args.repeat)
    some = timed_dgs(spark, target, leaf, sync, 4, dgs_input(leaf, sync, args.events, args.syncs), args.repeat)
    print(f"\nevent-window, 4 leaves: no sync {none:.2f} s, {args.syncs} syncs {some:.2f} s -> "
          f"one synchronizing event costs {(some - none) / max(1, args.syncs) * 1000:.0f} ms "
          "(gather + join + process + fork + scatter: two shuffles)")
    inlined = timed_dgs(spark, target, leaf, sync, 4, dgs_input(leaf, sync, args.events, args.syncs), args.repeat,
                        inline_below=args.events)
    print(f"event-window, 4 leaves, {args.syncs} syncs, leaf segments between synchronizing events "
          f"processed at the root (inline_below={args.events}): {inlined:.2f} s")
    start = time.perf_counter()
    pause, round_s, moved = oplus_rescale(spark, args.tuples, args.repeat)
    print(f"\nO+ wordcount rescale 2 -> 4 instances at a watermark ({args.tuples} tuples, 8 rounds): "
          f"pause {pause * 1000:.0f} ms (handover of {moved} key states) vs median round "
          f"{round_s * 1000:.0f} ms; ratio {pause / round_s:.2f} [{time.perf_counter() - start:.0f} s]")


if __name__ == "__main__":
    main()
