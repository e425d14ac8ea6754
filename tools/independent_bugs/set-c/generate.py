"""The third set of independent bugs: 20 realistic one-line bugs in ``spark_impl/``, written from ``spark_impl/``,
``spec/``, README.md and docs/spark.md only, before reading ``conformance/``, ``tests/`` or the
earlier sets' patches. ``python tools/independent_bugs/set-c/generate.py`` (re)writes
``NN-name.patch`` and ``INDEX.md`` here from the table below; each bug replaces one exact,
unique snippet of the file at HEAD (checked), so a patch that no longer applies fails loudly.

Run them: ``python tools/independent_bugs.py --run DIR --set set-c [--fail-fast]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from one_line_set import Bug, write_set  # noqa: E402

# (name, file, old snippet, new snippet, what a developer got wrong)
BUGS: list[Bug] = [
    ("01-mcs-leading-child-not-counted", "spark_impl/reconfig/mcs.py",
     "        leading = [c for c in children[x] if c in reconfigured or reachable(c, children) & reconfigured]\n",
     "        leading = [c for c in children[x] if reachable(c, children) & reconfigured]\n",
     "Alg. 4 edge-wise one-to-one rule: a replicate's output edge counts as leading to a reconfigured operator only "
     "through a descendant - `reachable` excludes its start, so a child that is itself reconfigured is forgotten "
     "(wrong pruning either way: too many or too few synchronised operators)"),
    ("02-driver-rollback-no-continue", "spark_impl/reconfig/driver.py",
     "                st.live.rejected = rejected  # rejections are answers already given: kept\n"
     "                self._base[s] = st.live.history[-1] if st.live.history else -1\n"
     "                continue\n",
     "                st.live.rejected = rejected  # rejections are answers already given: kept\n"
     "                self._base[s] = st.live.history[-1] if st.live.history else -1\n",
     "rollback of a failing state transformation: the `continue` after the rollback is missing, so the failed "
     "batch is appended to the restored view and committed (its outputs become visible, then its tuples are "
     "ingested again)"),
    ("03-roles-cache-no-workers", "spark_impl/reconfig/layout.py",
     "    key = (s, request.operators, fries, job.dataflow, counts)\n",
     "    key = (s, request.operators, fries, job.dataflow)\n",
     "stale cache key: `roles()` is cached without the workers of each operator, so a later job with the same "
     "index, dataflow and reconfigured operators but other parallelism gets the earlier job's object roles"),
    ("04-retention-drops-pending", "spark_impl/reconfig/retention.py",
     "    needed = set(prog.pending) | set(prog.history[-keep:])\n",
     "    needed = set(prog.history[-keep:])\n",
     "bounded storage: a job's pending (ran, not yet committed) batches are not counted as needed, so while a "
     "request blocks commits their task files are deleted and the later commit publishes batches without outputs"),
    ("05-sink-rows-skip-deepest-level", "spark_impl/reconfig/sinks.py",
     "        for level in range(1, depth + 1):\n",
     "        for level in range(1, depth):\n",
     "off-by-one: the sink's row reader stops one level short, so outputs written by the deepest operator "
     "level never reach the Parquet / callback sink"),
    ("06-align-buffer-overwritten", "spark_impl/reconfig/task.py",
     "            st.buffer.extend(held)\n",
     "            st.buffer = held\n",
     "Fries alignment across batches: new-version input held back in a batch replaces the buffer instead of "
     "being appended, so what was held in an earlier unaligned batch is lost when alignment takes 3+ batches"),
    ("07-progress-delays-keys-str", "spark_impl/reconfig/progress.py",
     "        return Progress(raw[\"offset\"], raw[\"made\"], active, {int(k): float(v) for k, v in raw[\"delays\"].items()},\n",
     "        return Progress(raw[\"offset\"], raw[\"made\"], active, {k: float(v) for k, v in raw[\"delays\"].items()},\n",
     "checkpoint decoding: `from_json` keeps the JSON object's string keys of `delays` (request numbers), so a "
     "resumed driver's delays are keyed '1', '2' next to new int keys (look-ups by request number miss; retention "
     "compares str with int)"),
    ("08-streaming-log-stale-layout-at-end", "spark_impl/reconfig/streaming.py",
     "        starts, names = self._layout(refresh=False)\n        if index >= starts[-1]:\n",
     "        starts, names = self._layout(refresh=False)\n        if index > starts[-1]:\n",
     "off-by-one: the input log's cached layout is refreshed only past its end, so the first tuple of a batch "
     "indexed after the cache was filled (index == cached total) is looked up in the stale layout"),
    ("09-dgs-release-earliest-max", "spark_impl/dgs/release.py",
     "                earliest[e.tag] = min(earliest.get(e.tag, e.key), e.key)\n",
     "                earliest[e.tag] = max(earliest.get(e.tag, e.key), e.key)\n",
     "release rule 2: the earliest unreleased key per tag is computed with max, so with two held events of one "
     "tag an event dependent on it between their keys is released before the earlier one"),
    ("10-dgs-fork-tags-swapped", "spark_impl/dgs/tasks.py",
     "    a, b = program.fork(worker.fork, state, left.subtree_tags(), right.subtree_tags())\n",
     "    a, b = program.fork(worker.fork, state, right.subtree_tags(), left.subtree_tags())\n",
     "fork_down passes the children's tag sets in the wrong order (right's first), so each child gets the part "
     "of the state meant for its sibling"),
    ("11-dgs-sink-part-name-no-step", "spark_impl/dgs/driver.py",
     "                            sink, f\"t{number:06d}-s{index:05d}\")\n",
     "                            sink, f\"t{number:06d}\")\n",
     "stale file name: the sink part of a step is named by the tick only, so a later step of the same tick "
     "overwrites an earlier step's outputs and trace in the same partition"),
    ("12-dgs-live-mailbox-keeps-released", "spark_impl/dgs/streaming_input.py",
     "    mailbox.timers, mailbox.buffered = timers, kept\n",
     "    mailbox.timers, mailbox.buffered = timers, buffered\n",
     "wrong variable: the live mailbox keeps every buffered event (released ones included) instead of the ones "
     "kept, so released events are released again in later micro-batches"),
    ("13-oplus-earliest-left-rounding", "spark_impl/oplus/operators.py",
     "    return ((ts - reach) // op.wa + 1) * op.wa\n",
     "    return ((ts - reach + 1) // op.wa) * op.wa\n",
     "earliestWinL rewritten as floor((ts - WS + 1) / WA) * WA: right when WA = 1 or WA divides ts - WS + 1, "
     "otherwise one instance too early (a window that does not contain ts)"),
    ("14-oplus-scalejoin-match-ts-current", "spark_impl/oplus/instance.py",
     "                        emitted.append((max(ts, other_ts) + 1, \"match\", match_value(lhs, rhs)))\n",
     "                        emitted.append((ts + 1, \"match\", match_value(lhs, rhs)))\n",
     "ScaleJoin match timestamp from the tuple being processed instead of the later of the two: wrong when a "
     "later round carries a smaller timestamp than the stored tuple it matches"),
    ("15-oplus-rescale-watermark-strict", "spark_impl/oplus/feed.py",
     "            if change.watermark <= wm:\n",
     "            if change.watermark < wm:\n",
     "boundary: a reconfiguration takes effect only once the watermark passes its watermark, not when it "
     "reaches it (one round late; not at all if only the end of the stream passes it)"),
    ("16-oplus-live-moved-job-own-state-kept", "spark_impl/oplus/streaming_round.py",
     "    state: PartitionState = {job: keys for job, keys in (own or []) if job not in plan.moved}\n",
     "    state: PartitionState = {job: keys for job, keys in (own or [])}\n",
     "live VSN rescale: an instance keeps its own previous key states of a rescaled job and also re-reads the "
     "keys the new mapping gives it, so keys that moved away stay behind too (duplicate window outputs)"),
    ("17-keys-route-bool-not-int", "spark_impl/keys.py",
     "    if isinstance(key, int):\n        return int(key) % n\n",
     "    if type(key) is int:\n        return int(key) % n\n",
     "`type(key) is int` instead of isinstance: a bool key is routed by its hash while the equal int key goes "
     "to `k mod p` (True and 1 are one dict key, two workers)"),
    ("18-records-prune-leaks", "spark_impl/records.py",
     "else range(self._floor, below)\n",
     "else range(self._floor + 1, below)\n",
     "off-by-one in incremental pruning: the record at the previous floor is never deleted, so after the first "
     "prune the control and progress logs keep every record (storage grows without bound)"),
    ("19-directory-source-unsorted", "spark_impl/reconfig/model.py",
     "            listing = _DIRECTORY_LISTING[self.path] = sorted(n for n in os.listdir(self.path) if n.endswith(\".jsonl\"))\n",
     "            listing = _DIRECTORY_LISTING[self.path] = [n for n in os.listdir(self.path) if n.endswith(\".jsonl\")]\n",
     "directory source reads files in `os.listdir` order instead of name order: tuple positions follow the "
     "file system's hash order and can shift when a file arrives (not replayable, wrong order)"),
    ("20-store-load-cache-key-path-only", "spark_impl/store.py",
     "            key: tuple[Any, ...] = (path, *stamp)\n",
     "            key: tuple[Any, ...] = (path,)\n",
     "stale cache key: a local object's decoded value is cached by path only, so a rewritten plan or request "
     "file (a batch planned again, a request number reused after a rollback, a reused directory) is served stale"),
]


def main() -> int:
    """Write the patches and INDEX.md."""
    return write_set(HERE, ["# Independent bugs, third set", "",
                     "Written from spark_impl/, spec/, README.md and docs/spark.md only (generate.py holds the table).", ""], "what the developer got wrong", BUGS)


if __name__ == "__main__":
    sys.exit(main())
