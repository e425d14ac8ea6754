"""The fourth set of independent bugs: 20 realistic one-line bugs in ``spark_impl/``, written
independently of the test suite from ``spark_impl/`` alone (and ``tools/independent_bugs.py``
plus the code part, not the table, of the third set's ``generate.py`` for the file format; the earlier
sets' patch file names were seen in directory listings, none of the files opened) - without reading ``conformance/``, ``tests/``,
docs/conformance.md, the earlier sets' patches or INDEX.md files, or git log
messages, and without running the suite or the tests on them. Spread as a real codebase's
bugs: 8 in the Fries executor (``spark_impl/reconfig``: task, mcs, driver, retention, sinks,
the Structured Streaming front end), 4 in ``spark_impl/dgs`` (batch and live), 4 in
``spark_impl/oplus`` (batch and live) and 4 in the shared layer (keys, records).

``python tools/independent_bugs/set-d/generate.py`` (re)writes ``NN-name.patch`` and
``INDEX.md`` here from the table below; each bug replaces one exact, unique snippet of the file
at HEAD (checked), so a patch that no longer applies fails loudly.

Run them: ``python tools/independent_bugs.py --run DIR --set set-d [--fail-fast]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from one_line_set import Bug, write_set  # noqa: E402

# (name, file, old snippet, new snippet, what a developer got wrong - and why it is observable)
BUGS: list[Bug] = [
    # --- spark_impl/reconfig (Fries executor) -----------------------------------------------
    ("01-epoch-switch-one-batch-late", "spark_impl/reconfig/task.py",
     "            if plan.g >= entry.epoch_batch:\n",
     "            if plan.g > entry.epoch_batch:\n",
     "Epoch scheduler: `>` where the epoch batch itself must already run the new configuration; "
     "every tuple of batch `epoch_batch` is processed (and its outputs tagged) with the old logic."),
    ("02-restart-any-job-drops-others-state", "spark_impl/reconfig/task.py",
     "        restarted = all(s in plan.base for s in range(len(self.jobs)))\n",
     "        restarted = any(s in plan.base for s in range(len(self.jobs)))\n",
     "`any` for `all`: when ONE job of a shared executor restarts (simulated crash or a rolled-back "
     "transformation) the task skips batch g-1's file for every job, so the other jobs lose all "
     "their operator state (wrong aggregates after the restart)."),
    ("03-mcs-red-needs-all-parents", "spark_impl/reconfig/mcs.py",
     "        if node in vprime or any(p in red for p in parents[node]):\n",
     "        if node in vprime or all(p in red for p in parents[node]):\n",
     "Alg. 1 red pass with `all` for `any`: an operator between two sync operators that also has a "
     "parent outside the MCS is left out, the component splits, and a downstream reconfigured "
     "operator becomes a head that switches without aligning (inconsistent outputs/states)."),
    ("04-request-done-when-heads-switched", "spark_impl/reconfig/driver.py",
     "            if a is not None and set(a.required) <= set(a.switched):\n",
     "            if a is not None and set(a.heads) <= set(a.switched):\n",
     "Wrong field of Active: a request counts as complete once its heads switched (before the "
     "aligning members); the next request is made while it is still running, and under epoch "
     "(no heads) the delay computation reads switch times that do not exist (KeyError)."),
    ("05-submit-busy-check-and", "spark_impl/reconfig/driver.py",
     "            if problem is None and (st.live.active is not None or st.queued is not None):\n",
     "            if problem is None and (st.live.active is not None and st.queued is not None):\n",
     "`and` for `or`: a second submit while a request is in progress is accepted (active and queued "
     "are never both set) instead of rejected 'one at a time'; it overwrites the running request's "
     "bookkeeping (missing rejection message, overlapping reconfigurations)."),
    ("06-retention-deletes-live-requests", "spark_impl/reconfig/retention.py",
     "            if j <= jobs[str(s)].get(\"\", 0) and j not in keep[s]:\n",
     "            if j <= jobs[str(s)].get(\"\", 0) or j not in keep[s]:\n",
     "`or` for `and` in bounded storage: request files of active (not yet completed) requests and "
     "the current logic's request are deleted; a task that loads them (switch, or fn_req on a cache "
     "miss) fails with FileNotFoundError."),
    ("07-sink-redelivers-last-batch", "spark_impl/reconfig/sinks.py",
     "        fresh = [g for g in st.committed.history if g > delivered.get(s, -1)]\n",
     "        fresh = [g for g in st.committed.history if g >= delivered.get(s, -1)]\n",
     "`>=` for `>`: every delivery includes the batch already delivered last time, under a new batch "
     "id, so the Parquet table / callback sees that batch's outputs twice (not exactly once)."),
    ("08-streaming-input-dropped-below-live-offset", "spark_impl/reconfig/streaming.py",
     "            if self.bounded and index.drop_below(path, run.executor.state[0].committed.offset):\n",
     "            if self.bounded and index.drop_below(path, run.executor.state[0].live.offset):\n",
     "Wrong progress record: with a retention the input log drops files below the LIVE offset; when "
     "the commit lags (a request in progress) a restart re-reads tuples whose files are gone "
     "(IndexError 'deleted from the input log')."),
    # --- spark_impl/dgs ------------------------------------------------------------------------
    ("09-dgs-release-timer-strict", "spark_impl/dgs/release.py",
     "    ok = [all(timers.get(s, far) >= e.key for s in topo.release_streams[(e.tag, e.stream)])\n",
     "    ok = [all(timers.get(s, far) > e.key for s in topo.release_streams[(e.tag, e.stream)])\n",
     "`>` for `>=`: an event's own stream timer equals its key, so it waits for a later item of its "
     "stream; a stream ending with an event makes the run raise 'events can never be released' "
     "on a valid input."),
    ("10-dgs-tick-steps-min-over-runs", "spark_impl/dgs/driver.py",
     "            for index in range(max(len(p) for p in plans.values())):\n",
     "            for index in range(min(len(p) for p in plans.values())):\n",
     "`min` for `max` when several runs share a tick's Spark job: the steps of the runs with more "
     "steps than the shortest are never executed (their outputs, trace and final state are missing)."),
    ("11-dgs-live-equal-timestamp-accepted", "spark_impl/dgs/streaming_input.py",
     "        if last is not None and item.ts <= last[0]:\n",
     "        if last is not None and item.ts < last[0]:\n",
     "`<` for `<=`: a live item with the same timestamp as its stream's previous item is accepted "
     "instead of refused (Def. 3.3: timestamps increase strictly) - bad input without an error, "
     "and two events share one order key."),
    ("12-dgs-live-replay-of-committed-batch-recomputed", "spark_impl/dgs/streaming.py",
     "        if batch_id <= commit.batch:\n",
     "        if batch_id < commit.batch:\n",
     "Off by one on replay: Structured Streaming replays the last batch after a kill between the "
     "DGS commit and its own; it is computed again on top of the commit that already holds it "
     "(its items are refused as not after the timers, or processed twice)."),
    # --- spark_impl/oplus ---------------------------------------------------------------------
    ("13-oplus-lefts-miss-last-window", "spark_impl/oplus/operators.py",
     "    return range(earliest_left(op, ts), (ts // op.wa) * op.wa + 1, op.wa)\n",
     "    return range(earliest_left(op, ts), (ts // op.wa) * op.wa, op.wa)\n",
     "Exclusive range end off by one: a tuple is not added to the newest window instance it falls "
     "in (for tumbling windows to none at all): WT multi aggregates emit wrong/missing values."),
    ("14-oplus-feed-rounds-floor", "spark_impl/oplus/feed.py",
     "        return max(1, -(-longest // self.items_per_round))\n",
     "        return max(1, longest // self.items_per_round)\n",
     "Floor for ceiling division: when the longest input list is not a multiple of items_per_round "
     "its last partial round never runs - those tuples are lost and the +inf watermark never comes "
     "(windows still open are never emitted)."),
    ("15-oplus-band-match-copy-paste", "spark_impl/oplus/operators.py",
     "            and abs(int(left[\"y\"]) - int(right[\"b\"])) <= op.band)\n",
     "            and abs(int(left[\"y\"]) - int(right[\"a\"])) <= op.band)\n",
     "Copy-paste slip in the ScaleJoin predicate: y is compared with a instead of b, so pairs "
     "within the band are missed and others matched (wrong match outputs)."),
    ("16-oplus-live-watermark-max-of-sources", "spark_impl/oplus/streaming.py",
     "            watermark = {j: min(bounds.get((j, s), -math.inf) for s in range(job.sources))\n",
     "            watermark = {j: max(bounds.get((j, s), -math.inf) for s in range(job.sources))\n",
     "`max` for `min` over the sources' bounds (TB's merged watermark is the minimum): with two "
     "sources the watermark runs ahead of the slower one, windows close early and its tuples are "
     "counted late and dropped."),
    # --- shared layer -------------------------------------------------------------------------
    ("17-keys-string-length-in-characters", "spark_impl/keys.py",
     "        out.append(b\"s%d:\" % len(raw) + raw)\n",
     "        out.append(b\"s%d:\" % len(key) + raw)\n",
     "Length of the str instead of its UTF-8 bytes in E(key): stable_hash (a durable, documented "
     "format) and so the routing of every non-ASCII string key (or tuple holding one) differ from "
     "the specification; a checkpoint resumed by a correct version routes keys elsewhere."),
    ("18-records-truncated-payload-not-torn", "spark_impl/records.py",
     "        raise TornRecordError(path, f\"truncated: {len(payload)} payload bytes, the header says {length}\")\n",
     "        raise CorruptStateError(path, f\"truncated: {len(payload)} payload bytes, the header says {length}\")\n",
     "Wrong exception class for a record cut inside its payload: a driver killed mid-commit (torn "
     "newest record) is refused as corrupt instead of falling back to the previous commit, so the "
     "restart fails."),
    ("19-records-single-torn-record-refused", "spark_impl/records.py",
     "                if len(seqs) > 1 and previous is None:\n",
     "                if previous is None:\n",
     "Dropped half of a condition: when the only record of a log is torn (a kill during the very "
     "first commit) latest() loops and raises 'vanished five times' instead of reporting an empty "
     "log, so the restart is refused."),
    ("20-records-pickle-framed-with-json-magic", "spark_impl/records.py",
     "    store.write_once(name, frame(pickle.dumps(value), PICKLE_MAGIC))\n",
     "    store.write_once(name, frame(pickle.dumps(value)))\n",
     "Forgot the non-default magic argument: framed pickles are written with the JSON record's magic, "
     "so every read_pickle_record (live DGS leaf states, sink parts on a URI store) refuses them as "
     "'no streamproof pickled object header' and the run stops."),
]


def main() -> int:
    """Write the patches and INDEX.md."""
    return write_set(HERE, ["# Independent bugs, fourth set", "",
                     "Written independently from spark_impl/ alone, "
                     "without reading conformance/, tests/, docs/conformance.md or the earlier sets' patches "
                     "(generate.py holds the table).", ""], "what the developer got wrong (and why it is observable)", BUGS)


if __name__ == "__main__":
    sys.exit(main())
