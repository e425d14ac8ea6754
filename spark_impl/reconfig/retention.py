"""Bounded storage for a long-running executor: what may be deleted after a commit.

Without a :class:`Retention` the executor keeps every batch (the scenario runs, the
conformance suite and ``collect_results`` read a job's whole history). With one, after each
micro-batch (and after the sink got the newly committed batches) it deletes:

* **batch directories** (each task file is a full snapshot of its partition's state plus the
  batch's sink outputs and schedule operations) that no job needs: a job needs its last
  ``batches`` committed batches (the last is its restart base, Fries §7.3), its pending
  (uncommitted) batches and the committed batches the sink has not received yet; the batch
  that just ran is always kept (the next batch carries its state forward).
  State snapshots therefore need no merge: the newest full snapshot a restart needs is kept and
  every older one is garbage. Rolled-back batches are older than the next commit and go too;
* **history entries** of those batches in the progress record (``history`` keeps the needed
  entries), and **delays** beyond the newest ``delays`` (default 16): they are folded into the
  record's :class:`~spark_impl.reconfig.progress.DelaySummary` (count, total, max), so the
  commit record stops growing after a few requests (a 1,000-entry bound took a soak 5,000
  batches to reach) and ``Progress.delay_stats()`` still covers every request;
* **request files** no object can need again: request ``j`` of a job is kept while it is not
  yet completed and committed, or while it is the latest completed request that updated one of
  the job's operators (that operator's current logic is loaded from it; ``requests/current.json``
  - framed and checksummed like every record - records the latest request per operator so
  deleted files are never read again);
* on an object store, the jobs files of earlier drivers (``jobs-<digest>.pkl``).

Everything goes through the checkpoint's :class:`~spark_impl.store.Store`, so the same
collection runs on a local disk and on an object store (deletes, no rename).

The Structured Streaming front end adds the input log's files below the committed offset
(:mod:`spark_impl.reconfig.streaming`). Steady-state disk use is then a constant number of
batches of state and outputs (docs/spark.md, "Bounded storage").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

from spark_impl.reconfig.layout import load_request, request_name
from spark_impl.reconfig.progress import Progress, write_progress
from spark_impl.reconfig.storage import batch_name, batches_on
from spark_impl.records import read_json_record, write_json_record
from spark_impl.store import Store


class RetainedJob(Protocol):
    """What the collection reads of one job's progress in the executor."""

    @property
    def committed(self) -> Progress:
        """The job's progress as of the last commit."""
        ...

    @property
    def live(self) -> Progress:
        """The job's progress including batches not committed yet."""
        ...


class RetainingExecutor(Protocol):
    """What :func:`collect_garbage` reads of the executor
    (:class:`spark_impl.reconfig.driver.Executor`, which calls it after a commit)."""

    @property
    def g(self) -> int:
        """The next batch number (so ``g - 1`` is the last batch that ran)."""
        ...

    @property
    def state(self) -> Sequence[RetainedJob]:
        """Per job, its progress."""
        ...

    @property
    def store(self) -> Store:
        """The checkpoint's storage."""
        ...

    @property
    def directory(self) -> str:
        """The checkpoint's location."""
        ...

    @property
    def jobs_path(self) -> str:
        """Where the executor saved the current jobs."""
        ...


CURRENT = "requests/current.json"


@dataclass(frozen=True)
class Retention:
    """How much history to keep (see the module docstring); ``batches`` >= 1."""

    batches: int = 2
    delays: int = 16

    def __post_init__(self) -> None:
        if self.batches < 1 or self.delays < 1:
            raise ValueError("Retention keeps at least one committed batch and one delay")


def needed_by(prog: Progress, keep: int, undelivered_after: int | None) -> set[int]:
    """The batches job ``prog`` still needs: its last ``keep`` committed batches (the last is
    its restart base), its pending ones and, with a sink (``undelivered_after``: the last batch
    the sink received), the committed ones not delivered yet."""
    needed = set(prog.pending) | set(prog.history[-keep:])
    if undelivered_after is not None:
        needed |= {g for g in prog.history if g > undelivered_after}
    return needed


def trim_requests(prog: Progress, needed: set[int], delays: int) -> None:
    """Keep only the request history ``needed`` of ``prog`` and fold all but the last ``delays``
    reconfiguration delays into their summary: the bounded bookkeeping of a long run."""
    prog.history = [g for g in prog.history if g in needed]
    prog.fold_delays(delays)


def collect_garbage(ex: RetainingExecutor, retention: Retention, delivered: dict[int, int] | None) -> set[int]:
    """Delete what no restart, commit or sink delivery needs any more (module docstring).
    ``delivered``: job -> last batch the sink received (None: no sink). Returns the batches
    kept."""
    last_ran = ex.g - 1
    needed = {last_ran}
    for s, st in enumerate(ex.state):
        after = None if delivered is None else delivered.get(s, -1)
        for prog in (st.committed, st.live):
            needed |= needed_by(prog, retention.batches, after)
    _collect_requests(ex)
    for st in ex.state:
        trim_requests(st.committed, needed, retention.delays)
        trim_requests(st.live, needed, retention.delays)
    write_progress(ex.directory, [st.committed for st in ex.state], last_ran)
    for g in batches_on(ex.store):
        # only older batches: a directory above the last one that ran is a batch being planned
        if g < last_ran and g not in needed:
            ex.store.delete(batch_name(g))
    if not ex.store.local:
        current = ex.jobs_path.partition("?")[0].rsplit("/", 1)[-1]
        for name in ex.store.list(""):
            if name.startswith("jobs-") and name.endswith(".pkl") and name != current:
                ex.store.delete(name)
    return needed


def _collect_requests(ex: RetainingExecutor) -> None:
    raw = read_json_record(ex.store, CURRENT) or {"jobs": {}}
    jobs: dict[str, dict[str, int]] = raw["jobs"]
    changed = False
    keep: dict[int, set[int]] = {}
    for s, st in enumerate(ex.state):
        current = jobs.setdefault(str(s), {})
        done = current.get("", 0)  # requests up to this one are folded into ``current``
        completed = sorted(j for j in st.committed.delays if j > done)
        for j in completed:
            for op in load_request(ex.directory, s, j).operators:
                current[op] = j
            current[""] = j
            changed = True
        done = current.get("", 0)
        keep[s] = {j for op, j in current.items() if op}
    if changed:
        write_json_record(ex.store, CURRENT, {"jobs": jobs})
    for name in ex.store.list("requests"):
        s_part, _, rest = name.partition("-r")
        if not (name.startswith("s") and name.endswith(".pkl") and s_part[1:].isdigit()):
            continue
        s, digits = int(s_part[1:]), rest[:-4]
        # only requests folded into ``current`` (completed and committed) are candidates
        if digits.isdigit() and s in keep:
            j = int(digits)
            if j <= jobs[str(s)].get("", 0) and j not in keep[s]:
                ex.store.delete(request_name(s, j))
