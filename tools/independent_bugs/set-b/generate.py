"""The second set of independent bugs: 24 realistic one-line bugs in
``spark_impl/``, written from ``spark_impl/`` (and the docs/papers) only, before reading
``conformance/``, ``tests/`` or the first set's patches.

Each entry below is ``(name, file, occurrence, old line, new line or None = deleted, what a user
would see)``. The old line is matched exactly (stripped) at its ``occurrence``-th place in the
file at the given commit (default HEAD). Running this script (re)writes ``NN-name.patch``
(zero-context unified diffs, applied with ``git apply --unidiff-zero`` by
``tools/independent_bugs.py --set set-b``) and ``INDEX.md`` next to it.

Usage: ``python tools/independent_bugs/set-b/generate.py [--commit HEAD]``
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

BUGS: list[tuple[str, str, int, str, str | None, str]] = [
    # --- Fries executor (spark_impl/reconfig, keys) --------------------------------------
    ("align-buffer-not-cleared", "spark_impl/reconfig/task.py", 2,
     "st.buffer = []", None,
     "a component member keeps the new-version input it held back for request R1 after "
     "aligning; at its next alignment (R2) that input is processed a second time: doubled "
     "state and outputs after the second reconfiguration"),
    ("trace-sender-is-receiver", "spark_impl/reconfig/task.py", 1,
     "log.append((txn, False, rec[5]))  # rec[5]: the sender, spec.fries.consistency (C2)",
     "log.append((txn, False, rec[2]))  # rec[5]: the sender, spec.fries.consistency (C2)",
     "the schedule trace records the RECEIVING object as each data operation's sender: "
     "RunResult.senders / the per-channel FIFO check see one channel per object (real "
     "reorderings between two senders are invisible, legal interleavings look like violations)"),
    ("restart-aliases-committed", "spark_impl/reconfig/driver.py", 2,
     "st.live = st.committed.snapshot()", "st.live = st.committed",
     "after a simulated crash the live progress IS the committed record (no copy): batches "
     "that run while a commit is blocked change the commit record itself, so a second crash "
     "restores an offset/pending list that was never committed (lost or double-counted tuples)"),
    ("retention-ignores-live-pending", "spark_impl/reconfig/retention.py", 1,
     "for prog in (st.committed, st.live):", "for prog in (st.committed,):",
     "with a Retention, the batches that ran while a request blocked commits (live pending) "
     "are deleted before they are committed: their outputs never reach the sink/results"),
    ("progress-snapshot-shallow", "spark_impl/reconfig/progress.py", 1,
     "return copy.deepcopy(self)", "return copy.copy(self)",
     "the committed view shares its pending list (and active request) with the live one: "
     "after a restart the crashed batch is still pending and is committed later, so its "
     "outputs appear twice"),
    ("request-cache-key-no-mtime", "spark_impl/reconfig/layout.py", 1,
     "key = (directory, s, j, os.stat(path).st_mtime)", "key = (directory, s, j)",
     "a Python worker keeps serving the cached pickle of request j after the driver rewrote "
     "it: after a rolled-back request (failing transformation) the next request with the "
     "same number runs the OLD updates (rejected again or wrong logic)"),
    ("levels-min-parent", "spark_impl/reconfig/layout.py", 1,
     "level[name] = 1 + max((level[p] for p in flow.parents(name)), default=0)",
     "level[name] = 1 + min((level[p] for p in flow.parents(name)), default=0)",
     "an operator whose parents lie at different depths gets a stage before its deepest "
     "parent: tuples from that parent arrive after its stage ran and are silently dropped"),
    ("pipelined-edges-child-kind", "spark_impl/reconfig/mcs.py", 1,
     "return frozenset((a, b) for a, b in flow.edges if flow.kind(a) is not OperatorKind.BLOCKING)",
     "return frozenset((a, b) for a, b in flow.edges if flow.kind(b) is not OperatorKind.BLOCKING)",
     "the pipelined region drops the edges INTO blocking operators instead of out of them: "
     "a reconfigured blocking operator is not synchronized with its one-to-many ancestors "
     "(a transaction is split across old and new logic), and edges out of blocking ones are kept"),
    ("route-bool-not-int", "spark_impl/keys.py", 1,
     "if isinstance(key, int):", "if type(key) is int:",
     "a bool key is routed by its hash instead of like the int it equals (True == 1): one "
     "key's tuples go to two workers (two states, two outputs for one key)"),
    ("sink-batch-id-first", "spark_impl/reconfig/sinks.py", 1,
     "batch_id = fresh[-1]", "batch_id = fresh[0]",
     "a delivery of several committed batches is recorded as delivered up to its FIRST batch: "
     "the later ones are delivered again under a new batch id (duplicate rows in the Parquet "
     "table / callback)"),
    ("objectstore-parts-not-per-batch", "spark_impl/reconfig/objectstore.py", 1,
     'name = f"data/b{batch_id:020d}/part-{part:05d}.parquet"',
     'name = f"data/part-{part:05d}.parquet"',
     "part files are named by partition only: the next delivery overwrites the previous "
     "batch's committed parts, so read_committed returns later rows twice and earlier rows never"),
    ("streaming-replay-last-batch", "spark_impl/reconfig/streaming.py", 1,
     "if batch_id <= index.last:", "if batch_id < index.last:",
     "after a driver crash Structured Streaming replays the last batch; it is already indexed "
     "but is written and indexed again: its tuples are ingested twice (duplicate outputs)"),
    # --- DGS (spark_impl/dgs) --------------------------------------------------------------
    ("dgs-release-latest-unreleased", "spark_impl/dgs/release.py", 1,
     "earliest[e.tag] = min(earliest.get(e.tag, e.key), e.key)",
     "earliest[e.tag] = max(earliest.get(e.tag, e.key), e.key)",
     "the release fixpoint compares with the LATEST held event of each tag: an event is "
     "released although an earlier dependent event is still held (dependent events processed "
     "out of key order under delays)"),
    ("dgs-inline-after-sync", "spark_impl/dgs/driver.py", 1,
     "merged[-1] = (previous_segment, (previous[0], previous[1] + inlined + sync[1]))",
     "merged[-1] = (previous_segment, (previous[0], previous[1] + sync[1] + inlined))",
     "with inline_below > 0 an inlined leaf segment is processed after the second "
     "synchronizing group instead of between the two: leaf events run after a later barrier"),
    ("dgs-segment-not-reset", "spark_impl/dgs/driver.py", 1,
     "segment = [[] for _ in topo.leaves]", None,
     "after a synchronizing event the leaf segment list is not renewed: leaf events after the "
     "barrier are also processed before it (and again after it)"),
    ("dgs-live-records-last-missing", "spark_impl/dgs/streaming_store.py", 1,
     "if batch <= up_to:", "if batch < up_to:",
     "DgsStreamingRun.results() omits the records of the last committed micro-batch: its "
     "outputs and processed events are missing"),
    ("dgs-live-replay-recomputed", "spark_impl/dgs/streaming.py", 1,
     "if batch_id <= commit.batch:", "if batch_id < commit.batch:",
     "a replayed micro-batch that was already committed is computed again: after a driver "
     "kill after the commit the query fails (timestamps not after the mailbox timers) or "
     "double-applies the batch"),
    # --- O+ (spark_impl/oplus) -------------------------------------------------------------
    ("oplus-band-y-strict", "spark_impl/oplus/operators.py", 1,
     'and abs(int(left["y"]) - int(right["b"])) <= op.band)',
     'and abs(int(left["y"]) - int(right["b"])) < op.band)',
     "ScaleJoin misses every pair whose y/b distance is exactly the band"),
    ("oplus-window-left-open", "spark_impl/oplus/operators.py", 1,
     "return left <= ts < left + op.ws or (op.off_by_one and ts == left + op.ws)",
     "return left < ts < left + op.ws or (op.off_by_one and ts == left + op.ws)",
     "WT single: a tuple exactly at an instance's left boundary is not counted in it"),
    ("oplus-expire-strict", "spark_impl/oplus/instance.py", 1,
     "if left + op.ws <= watermark:", "if left + op.ws < watermark:",
     "WT multi: a window instance whose end equals the watermark is emitted one round "
     "late (at the next watermark)"),
    ("oplus-rescale-late", "spark_impl/oplus/feed.py", 1,
     "if change.watermark <= wm:", "if change.watermark < wm:",
     "a rescale whose watermark is reached exactly is applied one round late (or never, at "
     "the end of the stream): keys are handled by the wrong instances meanwhile"),
    ("oplus-wordcount-repeated-word", "spark_impl/oplus/operators.py", 1,
     'return sorted(set(str(fields["text"]).split()))',
     'return sorted(str(fields["text"]).split())',
     "wordcount counts a tweet once per OCCURRENCE of a word instead of once per tweet "
     "containing it (docs/oplus.md: value = tuples containing the word)"),
    ("oplus-live-rescale-max-size", "spark_impl/oplus/streaming_round.py", 1,
     "size = plan.plans[job].parallelism if job in plan.plans else 1",
     "size = plan.partitions if job in plan.plans else 1",
     "live query with several jobs: a rescaled job's key states are re-read by the LARGEST "
     "job's parallelism instead of its own: states land on instances that never see the key"),
    ("oplus-live-silent-source-no-bound", "spark_impl/oplus/streaming.py", 1,
     "watermark = {j: min(bounds.get((j, s), -math.inf) for s in range(job.sources))",
     "watermark = {j: min(bounds.get((j, s), math.inf) for s in range(job.sources))",
     "live query: a source that has delivered nothing yet does not hold the job's watermark "
     "back: windows are emitted early and that source's first tuples are dropped as late"),
]


def git_show(commit: str, path: str) -> str:
    """``path``'s content at ``commit``."""
    return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def make_patch(commit: str, path: str, occurrence: int, old: str, new: str | None) -> str:
    """The zero-context patch replacing (or deleting) the ``occurrence``-th line equal to ``old``."""
    lines = git_show(commit, path).splitlines()
    hits = [i for i, line in enumerate(lines) if line.strip() == old.strip()]
    if len(hits) < occurrence:
        raise SystemExit(f"{path}: only {len(hits)} line(s) equal to {old!r}")
    index = hits[occurrence - 1]
    line = lines[index]
    head = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
    if new is None:
        return head + f"@@ -{index + 1},1 +{index},0 @@\n-{line}\n"
    indent = line[:len(line) - len(line.lstrip())]
    return head + f"@@ -{index + 1},1 +{index + 1},1 @@\n-{line}\n+{indent}{new.strip()}\n"


def main(argv: list[str] | None = None) -> int:
    """Write the patches and INDEX.md (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", default="HEAD")
    args = parser.parse_args(argv)
    for stale in HERE.glob("*.patch"):
        stale.unlink()
    rows = ["# Independent bugs, second set", "",
            "Written from `spark_impl/` only, before reading `conformance/`, `tests/` or the first set "
            "(`../INDEX.md`). Regenerate with `python tools/independent_bugs/set-b/generate.py`; "
            "run with `python tools/independent_bugs.py --run DIR --set set-b`.", "",
            "Two first-draft bugs were replaced after reading the first set's INDEX (near-duplicates): "
            "a blocking operator flushing with its initial logic (= first set 05) and the O+ handover sized by "
            "the rescaled scenarios only (= first set 23); they became 02 and 22.", "",
            "| bug | file | change | what a user would see |", "|---|---|---|---|"]
    for number, (name, path, occurrence, old, new, effect) in enumerate(BUGS, start=1):
        stem = f"{number:02d}-{name}"
        (HERE / f"{stem}.patch").write_text(make_patch(args.commit, path, occurrence, old, new), encoding="utf-8")
        change = f"`{old.strip()}` -> " + (f"`{new.strip()}`" if new is not None else "(line deleted)")
        rows.append(f"| {stem} | {path} | {change.replace('|', '&#124;')} | {effect} |")
    (HERE / "INDEX.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"{len(BUGS)} patches written to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
