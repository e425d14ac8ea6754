"""Sizing the live O+ and DGS front ends (docs/production/oplus.md and dgs.md, "Sizing"):
rows per micro-batch, keys, partitions and ``allowed_lateness`` against throughput, batch time,
state, commit log, checkpoint and memory, side by side.

    python benchmarks/production_sizing.py            # every configuration (about 6 min on 2 cores)
    python benchmarks/production_sizing.py --quick    # fewer configurations (about 1-2 min)

Both front ends read the file source (``maxFilesPerTrigger=1``: one file = one micro-batch) on
the session streamproof creates (``local[2]`` unless ``--master``). Every micro-batch covers
``SPAN`` = 10 000 event-time units (say 10 s of milliseconds); its rows are spread evenly over
them, in event-time order, keys drawn at random from ``keys`` keys.

* **O+**: ``start_oplus_query`` with ``oplus_job("sliding-sum", 1000, 5000, WT="multi",
  parallelism=partitions)`` (a 5 000-unit window every 1 000 units: 5 open windows per key and
  per 1 000 units of lateness), rows ``{"ts", "key", "value"}``, ``ParquetSink``.
* **DGS**: ``start_dgs_query`` with the key counter of docs/spark.md (``("i", k)`` counts,
  ``("r", k)`` outputs the count and resets; one event in ten a read-reset) on ``keys`` keys and
  two streams (a program has at most 1 000 tags: 500 keys here), under
  ``keyed_plan(..., leaves=partitions)`` (each key's events on one leaf), rows
  ``{"stream", "ts", "event"}``, ``ParquetSink``.

``late_policy="fail"`` on both (the input is in order, so a late tuple would be a bug of the
benchmark; it would stop the script). The first micro-batch of each query (Python workers
starting, plans compiling) is left out of the averages. Columns:

* ``rows/s``: rows per batch / e2e, where e2e runs from the file's rename into the input
  directory until ``processAllAvailable()`` returns with its rows committed and delivered;
* ``batch ms``: the ``foreachBatch`` wall time (``run.batch_ms``), averaged;
* ``state KiB``: the key/leaf states on disk after the last batch (O+ ``oplus/state``, DGS
  ``dgs/states``: the committed version, plus O+'s previous one kept with ``keep=2``);
* ``log KiB``: the front end's commit records after the last batch (O+ ``oplus/commits``, DGS
  ``dgs/commits``: the mailboxes, with the events held for reordering, are in them);
* ``ckpt KiB``: the whole checkpoint directory (with Structured Streaming's own ``query/``);
* ``heap MiB``: the JVM heap in use after a full GC, after the last batch;
* ``worker MiB``: resident memory of the largest Python worker process (``pyspark.daemon``
  and the workers it forks; workers are reused across queries) after the last batch.

``O+/DGS`` rows give the ratio of each figure for the same configuration. Every run is checked:
each batch committed, nothing late, outputs delivered (else the script exits 1). The load
average before and after is printed: on a shared machine the figures are slower than on a quiet
one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, NoReturn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spark_impl.dgs.streaming import LiveJob, start_dgs_query  # noqa: E402
from spark_impl.dgs.streaming_plan import keyed_plan  # noqa: E402
from spark_impl.oplus.streaming import start_oplus_query  # noqa: E402
from spark_impl.oplus.streaming_jobs import oplus_job  # noqa: E402
from spark_impl.reconfig.sinks import ParquetSink  # noqa: E402
from spark_impl.session import get_or_create_session  # noqa: E402
from spec.dgs.loader import load_program  # noqa: E402

SPAN = 10_000
"""Event-time units one micro-batch covers."""

COUNTER = '''
from hypothesis import strategies as st

KEYS = tuple(f"k{i}" for i in range(%d))


class Counter:
    tags = frozenset((kind, key) for kind in ("i", "r") for key in KEYS)

    @staticmethod
    def tag(event):
        return tuple(event)

    @staticmethod
    def depends(t1, t2):
        return t1[1] == t2[1] and "r" in (t1[0], t2[0])

    @staticmethod
    def init():
        return {}

    @staticmethod
    def update(state, event):
        kind, key = event
        return {**state, key: state.get(key, 0) + 1 if kind == "i" else 0}

    @staticmethod
    def out(state, event):
        kind, key = event
        return [(key, state.get(key, 0))] if kind == "r" else []

    @staticmethod
    def fork(state, left_tags, right_tags):
        right = {k: n for k, n in state.items() if ("r", k) in right_tags}
        return {k: n for k, n in state.items() if k not in right}, right

    @staticmethod
    def join(left, right):
        return {k: left.get(k, 0) + right.get(k, 0) for k in set(left) | set(right)}

    @staticmethod
    def state_eq(a, b):
        return {k: n for k, n in a.items() if n} == {k: n for k, n in b.items() if n}

    @staticmethod
    def events():
        return st.tuples(st.sampled_from(("i", "r")), st.sampled_from(KEYS))
'''
"""The key counter of docs/spark.md's DGS recipe with ``%d`` keys (a program is a file)."""


@dataclass(frozen=True)
class Config:
    """One query: rows per micro-batch, distinct keys, partitions (O+ parallelism, DGS leaves)
    and ``allowed_lateness``."""

    rows: int
    keys: int
    partitions: int
    lateness: int


@dataclass
class Figures:
    """What one query measured (module docstring, columns)."""

    rate: float
    batch_ms: float
    state_kib: float
    log_kib: float
    ckpt_kib: float
    heap_mib: float
    workers_mib: float


def size_of(directory: str) -> int:
    """Bytes of every file under ``directory`` (0 if absent)."""
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(directory) for n in names)


def land(directory: str, number: int, lines: list[str]) -> float:
    """Write one file aside, rename it into ``directory``; the time of the rename."""
    tmp = os.path.join(os.path.dirname(directory), f".f{number:04d}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(line + "\n" for line in lines)
    os.utime(tmp, (1_700_000_000 + number, 1_700_000_000 + number))  # distinct seconds: files in order
    started = time.perf_counter()
    os.replace(tmp, os.path.join(directory, f"f{number:04d}.json"))
    return started


def times(batch: int, rows: int) -> list[int]:
    """The event times of batch ``batch``'s ``rows`` rows: increasing, within its ``SPAN``."""
    return [batch * SPAN + (i * SPAN) // rows for i in range(rows)]


def oplus_lines(batch: int, config: Config, rng: random.Random) -> list[str]:
    return [json.dumps({"ts": ts, "key": f"k{rng.randrange(config.keys)}", "value": rng.randrange(100)})
            for ts in times(batch, config.rows)]


def dgs_lines(batch: int, config: Config, rng: random.Random) -> list[str]:
    # two streams, alternating rows: each stream's timestamps strictly increase
    return [json.dumps({"stream": f"s{i % 2}", "ts": ts,
                        "event": ["r" if rng.random() < 0.1 else "i", f"k{rng.randrange(config.keys)}"]})
            for i, ts in enumerate(times(batch, config.rows))]


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` (0 if gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def worker_mib() -> float:
    """Resident memory of the largest Python worker (``pyspark.daemon`` and its children) of
    this process's Spark."""
    parents: dict[int, int] = {}
    daemons: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as handle:
                parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if b"pyspark.daemon" in handle.read():
                    daemons.add(int(entry))
        except OSError:
            continue
    mine = {pid for pid in daemons if _descends(pid, os.getpid(), parents)}
    children = {pid for pid, parent in parents.items() if parent in mine}
    return max((rss_mib(pid) for pid in mine | children), default=0.0)


def _descends(pid: int, ancestor: int, parents: dict[int, int]) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parents.get(pid, 0)
    return False


def heap_mib(spark: Any) -> float:
    """The driver JVM's heap in use after a full GC."""
    runtime = spark.sparkContext._jvm.java.lang.Runtime.getRuntime()
    spark.sparkContext._jvm.java.lang.System.gc()
    return float(runtime.totalMemory() - runtime.freeMemory()) / 2 ** 20


def drive(spark: Any, run: Any, data: str, files: int, make: Callable[[int], list[str]]) -> list[float]:
    """Land ``files`` files one at a time, each processed before the next; the e2e times (ms)."""
    samples = []
    try:
        for number in range(files):
            landed = land(data, number, make(number))
            run.query.processAllAvailable()
            samples.append((time.perf_counter() - landed) * 1000.0)
    except Exception:
        run.stop()
        raise
    return samples


def start_oplus(spark: Any, config: Config, root: str, rng: random.Random) -> tuple[Any, Callable[[int], list[str]]]:
    """The O+ query of the module docstring, and its files' lines."""
    stream = (spark.readStream.schema("ts long, key string, value long").option("maxFilesPerTrigger", 1)
              .json(os.path.join(root, "in")))
    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 1000, 5000, WT="multi",
                                                      parallelism=config.partitions)],
                            checkpoint_dir=os.path.join(root, "ckpt"),
                            sink=ParquetSink(os.path.join(root, "results"), key_type="string", value_type="long"),
                            allowed_lateness=config.lateness, late_policy="fail")
    return run, lambda b: oplus_lines(b, config, rng)


def start_dgs(spark: Any, config: Config, root: str, rng: random.Random) -> tuple[Any, Callable[[int], list[str]]]:
    """The DGS query of the module docstring, and its files' lines."""
    program_file = os.path.join(root, "counter.py")
    with open(program_file, "w", encoding="utf-8") as handle:
        handle.write(COUNTER % config.keys)
    target = f"{program_file}:Counter"
    plan = keyed_plan(load_program(target), ["s0", "s1"], leaves=config.partitions)
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(os.path.join(root, "in"))
    run = start_dgs_query(spark, [LiveJob(target, plan)], stream, checkpoint_dir=os.path.join(root, "ckpt"),
                          sink=ParquetSink(os.path.join(root, "results")),
                          allowed_lateness=config.lateness, late_policy="fail")
    return run, lambda b: dgs_lines(b, config, rng)


def progress(front: str, run: Any) -> tuple[int, int]:
    """The committed batch and the late tuples/events so far."""
    if front == "oplus":
        record = run.status()
        return (-1, 0) if record is None else (record.batch, sum(record.late.values()))
    return run.committed().batch, run.late_count()


def measure(spark: Any, front: str, config: Config, files: int) -> Figures:
    """One query of ``front`` (``oplus`` or ``dgs``, module docstring)."""
    root = tempfile.mkdtemp(prefix=f"{front}-sizing-")
    rng = random.Random(config.rows * 7 + config.keys)
    try:
        os.makedirs(os.path.join(root, "in"))
        run, make = (start_oplus if front == "oplus" else start_dgs)(spark, config, root, rng)
        e2e = drive(spark, run, os.path.join(root, "in"), files, make)
        heap, workers = heap_mib(spark), worker_mib()
        batch = [run.batch_ms[b] for b in sorted(run.batch_ms)[1:]]
        committed, late = progress(front, run)
        run.stop()
        if committed != files - 1 or late:
            fail(f"{front} {config}: committed batch {committed} of {files}, {late} late")
        if spark.read.parquet(os.path.join(root, "results")).count() == 0:
            fail(f"{front} {config}: nothing delivered")
        ckpt = os.path.join(root, "ckpt")
        state = os.path.join(ckpt, front, "state" if front == "oplus" else "states")
        return figures(config, e2e, batch, state, os.path.join(ckpt, front, "commits"), ckpt, heap, workers)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def figures(config: Config, e2e: list[float], batch: list[float], state: str, log: str, ckpt: str,
            heap: float, workers: float) -> Figures:
    """Averages over the batches after the first."""
    later = e2e[1:] or e2e
    mean_e2e = sum(later) / len(later)
    return Figures(config.rows / (mean_e2e / 1000.0), sum(batch) / max(1, len(batch)), size_of(state) / 1024.0,
                   size_of(log) / 1024.0, size_of(ckpt) / 1024.0, heap, workers)


def fail(message: str) -> NoReturn:
    print(f"FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def plan_kib(keys: int, partitions: int) -> float:
    """The JSON size of the DGS plan for ``keys`` keys (every commit record holds it)."""
    with tempfile.TemporaryDirectory(prefix="dgs-plan-") as root:
        path = os.path.join(root, "counter.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(COUNTER % keys)
        plan = keyed_plan(load_program(f"{path}:Counter"), ["s0", "s1"], leaves=partitions)
        return len(json.dumps(plan.to_json())) / 1024.0


def load() -> str:
    with open("/proc/loadavg", encoding="ascii") as handle:
        return " ".join(handle.read().split()[:3])


HEADER = (f"{'front end':<9} {'rows/batch':>10} {'keys':>5} {'parts':>5} {'lateness':>8} {'rows/s':>8} "
          f"{'batch ms':>8} {'state KiB':>9} {'log KiB':>8} {'ckpt KiB':>8} {'heap MiB':>8} {'worker MiB':>10}")


def row(name: str, config: Config, f: Figures) -> str:
    return (f"{name:<9} {config.rows:>10} {config.keys:>5} {config.partitions:>5} {config.lateness:>8} "
            f"{f.rate:>8.0f} {f.batch_ms:>8.0f} {f.state_kib:>9.1f} {f.log_kib:>8.1f} {f.ckpt_kib:>8.0f} "
            f"{f.heap_mib:>8.0f} {f.workers_mib:>10.0f}")


def ratio(o: Figures, d: Figures) -> str:
    def r(a: float, b: float) -> str:
        return f"{a / b:.2f}" if b else "-"
    return (f"{'O+/DGS':<9} {'':>10} {'':>5} {'':>5} {'':>8} {r(o.rate, d.rate):>8} {r(o.batch_ms, d.batch_ms):>8} "
            f"{r(o.state_kib, d.state_kib):>9} {r(o.log_kib, d.log_kib):>8} {r(o.ckpt_kib, d.ckpt_kib):>8} "
            f"{r(o.heap_mib, d.heap_mib):>8} {r(o.workers_mib, d.workers_mib):>10}")


def configs(quick: bool) -> list[Config]:
    """The grid: rows per batch, then keys, then partitions, then lateness, each from a base."""
    if quick:
        return [Config(1000, 100, 2, 0), Config(4000, 100, 2, 0), Config(1000, 100, 2, SPAN)]
    return [Config(1000, 100, 2, 0), Config(4000, 100, 2, 0), Config(16000, 100, 2, 0),
            Config(4000, 100, 1, 0), Config(4000, 100, 4, 0), Config(4000, 500, 2, 0), Config(4000, 100, 2, SPAN)]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="three configurations, three batches each")
    parser.add_argument("--files", type=int, default=None, help="micro-batches per query (first one not counted)")
    parser.add_argument("--master", default="local[2]", help="Spark master (default local[2])")
    args = parser.parse_args()
    files = args.files or (3 if args.quick else 4)
    spark = get_or_create_session(master=args.master)
    started = time.monotonic()
    print(f"load average before: {load()}  (cores: {os.cpu_count()}, master {spark.sparkContext.master})")
    print(HEADER, flush=True)
    for config in configs(args.quick):
        o = measure(spark, "oplus", config, files)
        d = measure(spark, "dgs", config, files)
        print(row("O+", config, o))
        print(row("DGS", config, d))
        print(ratio(o, d), flush=True)
    print(f"load average after: {load()}  ({time.monotonic() - started:.0f} s)")
    for keys in sorted({c.keys for c in configs(args.quick)}):
        print(f"DGS plan in every commit record, {keys} keys: {plan_kib(keys, 2):.1f} KiB")
    spark.stop()


if __name__ == "__main__":
    main()
