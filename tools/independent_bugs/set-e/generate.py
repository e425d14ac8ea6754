"""The fifth set of independent bugs: 20 realistic one-line bugs in ``spark_impl/``, written
independently of the test suite from ``spark_impl/``, ``spec/`` and docs/spark.md alone - without
reading ``conformance/``, ``tests/``, docs/conformance.md, the earlier sets or git log
messages, and without running the suite or the tests on them. 8 in the Fries executor (task,
MCS, driver, control messages, progress, retention, sinks, streaming front end), 4 in DGS
(release, steps, live mailbox, live re-plan), 4 in O+ (windows, rounds, live watermark, live
rescale) and 4 in the shared layer (keys, records, store, faults), of varied kinds.

``python tools/independent_bugs/set-e/generate.py`` (re)writes ``NN-name.patch`` and
``INDEX.md`` here from the table below; each bug replaces one exact, unique snippet of the file
at HEAD (checked), so a patch that no longer applies fails loudly.

Run them: ``python tools/independent_bugs.py --run DIR --set set-e [--fail-fast]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from one_line_set import Bug, write_set  # noqa: E402

# (name, file, old snippet, new snippet, what a developer got wrong - and why it is observable)
BUGS: list[Bug] = [
    ("01-emit-tag-fn-req", "spark_impl/reconfig/task.py",
     "                             (lay.level[receiver], s, dest, DATA, st.switched, obj, txn, key, value)))\n",
     "                             (lay.level[receiver], s, dest, DATA, st.fn_req, obj, txn, key, value)))\n",
     "Tuples are tagged with the request whose logic the object runs (fn_req) instead of the last request it "
     "switched for (its version): a non-reconfigured MCS member (a synchronizing one-to-many head) keeps "
     "tagging old after its switch, so its in-component children process its new-version tuples before "
     "aligning - a Fries schedule that is not consistent whenever the MCS has a non-reconfigured head."),
    ("02-prune-replicate-any-edge", "spark_impl/reconfig/mcs.py",
     "        if len(leading) == 1:\n",
     "        if len(leading) >= 1:\n",
     "The edge-wise one-to-one pruning rule fires when ANY output edge leads to a reconfigured operator, not "
     "exactly one: a replicate feeding two reconfigured branches is pruned from V', so the branches become "
     "separate components with their own heads and one replicated transaction can see the old version on "
     "one branch and the new one on the other (wrong sync_operators/components, inconsistent run)."),
    ("03-ingest-past-at", "spark_impl/reconfig/driver.py",
     "            limit = count if planned is None else min(planned.at, count)\n",
     "            limit = count if planned is None else max(planned.at, count)\n",
     "min/max slip in the ingestion limit: ingestion no longer pauses at a planned request's `at`, so the "
     "request is made only in the batch that ingests the whole source - under the epoch scheduler Rj lands "
     "after all tuples instead of after the first `at` (docs/spark.md 'Scenarios'), so outputs and states "
     "differ from the serial order whenever at < source length."),
    ("04-fcm-delay-lo-check", "spark_impl/reconfig/control.py",
     "        if self.fcm_hi <= 0:\n",
     "        if self.fcm_lo <= 0:\n",
     "The 'no delay configured' shortcut tests the lower bound instead of the upper one: an fcm_delay of "
     "[0, hi] (the natural way to ask for up to hi ms) delivers every FCM at once, breaking the documented "
     "hook 'visible at issued + delay(o)': heads no longer get the FCM at different times, the measured "
     "reconfiguration delays collapse and the §7.3 commit-blocking window disappears."),
    ("05-progress-history-pending-swap", "spark_impl/reconfig/progress.py",
     "                        list(raw[\"rejected\"]), list(raw[\"history\"]), list(raw[\"pending\"]), raw[\"phase\"],\n",
     "                        list(raw[\"rejected\"]), list(raw[\"pending\"]), list(raw[\"history\"]), raw[\"phase\"],\n",
     "Two adjacent list arguments swapped when reading a progress record back: a resumed job (driver "
     "restart, or resume=True) sees an empty history and the committed batches as pending, so it restarts "
     "from no state (base -1) and its committed outputs vanish from the visible sink/results."),
    ("06-retention-ignores-live-pending", "spark_impl/reconfig/retention.py",
     "        for prog in (st.committed, st.live):\n",
     "        for prog in (st.committed,):\n",
     "Garbage collection only asks the committed view what it needs, forgetting the live view's pending "
     "(uncommitted) batches: with a Retention, batches run while a request blocks commits (a user request, "
     "or heads still waiting for the FCM) are deleted before they are committed, so their sink outputs "
     "are silently missing from the delivery and the history once the commit comes."),
    ("07-sink-batch-id-first", "spark_impl/reconfig/sinks.py",
     "        batch_id = fresh[-1]\n",
     "        batch_id = fresh[0]\n",
     "The delivery's batch id is the first committed batch it contains instead of the last: when one "
     "delivery covers several batches (commits held back by a request), the delivered mark stays behind, "
     "the next delivery repeats the later batches under another id, and the sink holds duplicate rows."),
    ("08-streaming-replay-strict", "spark_impl/reconfig/streaming.py",
     "            if batch_id <= index.last:\n",
     "            if batch_id < index.last:\n",
     "A replayed Structured Streaming batch equal to the last indexed one is indexed again: after a crash "
     "between the input index write and Structured Streaming's commit (e.g. crash_before_commit), the "
     "replayed batch's tuples enter the input log twice and are processed twice - duplicate outputs, "
     "exactly-once broken."),
    ("09-dgs-release-closure-max", "spark_impl/dgs/release.py",
     "                earliest[e.tag] = min(earliest.get(e.tag, e.key), e.key)\n",
     "                earliest[e.tag] = max(earliest.get(e.tag, e.key), e.key)\n",
     "The downward-closure fixpoint tracks the LATEST unreleased key per tag instead of the earliest: an "
     "event can be released while an earlier dependent event of the same tag is still held (several "
     "unreleased events of a tag, with stream delays), so dependent events are processed out of key order "
     "and the outputs of an order-sensitive program depend on the delays."),
    ("10-dgs-merge-sync-across-leaf-events", "spark_impl/dgs/driver.py",
     "        if not any(segment) and last is not None and last[0] == event.worker:\n",
     "        if last is not None and last[0] == event.worker:\n",
     "Dropped condition when merging consecutive synchronizing events of one worker: two sync events of w "
     "with leaf events between them (in key order) are merged into one group, so the leaf events run "
     "after both - e.g. a barrier sees counts without the increments that precede it (wrong outputs)."),
    ("11-dgs-mailbox-keeps-released", "spark_impl/dgs/streaming_input.py",
     "    mailbox.timers, mailbox.buffered = timers, kept\n",
     "    mailbox.timers, mailbox.buffered = timers, buffered\n",
     "The live mailbox keeps every buffered event instead of only those not released: events released in "
     "one micro-batch stay in the committed mailbox and are released (processed and output) again in "
     "every later batch - duplicated outputs on any live DGS query with more than one batch."),
    ("12-dgs-replan-join-new-plan", "spark_impl/dgs/streaming_replan.py",
     "        root = join_up(program, was, was.plan.root.id, {leaf: s for (j, leaf), s in leaves.items() if j == job})\n",
     "        root = join_up(program, now, was.plan.root.id, {leaf: s for (j, leaf), s in leaves.items() if j == job})\n",
     "The old leaf states are joined along the NEW plan's tree instead of the old one's: a live re-plan to "
     "a plan with more leaves fails (missing leaf states) and one with fewer leaves silently drops the "
     "state of the extra old leaves, so the run does not go on as from the sequential state."),
    ("13-oplus-lefts-of-last-window", "spark_impl/oplus/operators.py",
     "    return range(earliest_left(op, ts), (ts // op.wa) * op.wa + 1, op.wa)\n",
     "    return range(earliest_left(op, ts), (ts // op.wa) * op.wa, op.wa)\n",
     "Off-by-one in the stop of the range of window instances a tuple falls in: the latest instance "
     "(left = floor(ts/WA)*WA) is excluded, so WT-multi aggregates (sliding-sum, wordcount, ...) miss "
     "every tuple in the window that starts at or just before it - wrong window values, missing windows."),
    ("14-oplus-rounds-floor", "spark_impl/oplus/feed.py",
     "        return max(1, -(-longest // self.items_per_round))\n",
     "        return max(1, longest // self.items_per_round)\n",
     "Floor instead of ceiling division for the number of rounds: when the longest input list is not a "
     "multiple of items_per_round, its last partial round never runs - those tuples are lost and the final "
     "+inf watermark is never reached, so the last windows are never emitted."),
    ("15-oplus-live-watermark-max", "spark_impl/oplus/streaming.py",
     "            watermark = {j: min(bounds.get((j, s), -math.inf) for s in range(job.sources))\n",
     "            watermark = {j: max(bounds.get((j, s), -math.inf) for s in range(job.sources))\n",
     "The job's watermark is the maximum bound over its sources instead of TB's minimum: with two sources "
     "(scalejoin, forward, or sources=2) the fast source drives the watermark, windows are emitted before "
     "the slow source's tuples arrive and those tuples are then dropped as late - lost matches and wrong "
     "window values."),
    ("16-oplus-live-rescale-keeps-own", "spark_impl/oplus/streaming_round.py",
     "    state: PartitionState = {job: keys for job, keys in (own or []) if job not in plan.moved}\n",
     "    state: PartitionState = {job: keys for job, keys in (own or [])}\n",
     "Dropped condition in the VSN rescale: an instance keeps all of its old key states for a rescaled job "
     "besides the keys the new mapping gives it, so keys that moved exist on two instances and their "
     "windows are emitted twice (duplicated outputs after every live rescale that moves keys)."),
    ("17-keys-str-length-chars", "spark_impl/keys.py",
     "        out.append(b\"s%d:\" % len(raw) + raw)\n",
     "        out.append(b\"s%d:\" % len(key) + raw)\n",
     "The string encoding's length counts characters instead of UTF-8 bytes: stable_hash of any non-ASCII "
     "string (e.g. 'é') departs from the documented durable format (docs/spark.md 'Keys and routing'), so "
     "such keys route differently from the specification and from checkpoints of other versions."),
    ("18-records-altered-newest-skipped", "spark_impl/records.py",
     "            except TornRecordError as error:\n",
     "            except CorruptStateError as error:\n",
     "The base exception class is caught instead of the torn-record subclass: an ALTERED newest record "
     "(checksum mismatch, extended, wrong magic) is silently skipped for the previous one instead of "
     "refused, so a restart resumes from an older commit the sink may already have overtaken."),
    ("19-store-list-missing-prefix", "spark_impl/store.py",
     "        infos = fs.get_file_info(pafs.FileSelector(inner, allow_not_found=True))\n",
     "        infos = fs.get_file_info(pafs.FileSelector(inner))\n",
     "Dropped keyword argument: listing a prefix that does not exist yet raises on a URI store instead of "
     "returning [] as documented, so a fresh checkpoint on S3/GCS/HDFS/file:// fails at its first "
     "record-log listing (progress, control, commits) - valid use refused."),
    ("20-faults-check-oplus-only", "spark_impl/faults.py",
     "        if name not in FAULTS:\n",
     "        if name not in OPLUS_FAULTS:\n",
     "The wrong one of two similar constants: check_faults accepts only the O+ faults, so every Fries "
     "fault (naive, missing-alignment, ...) is refused as unknown, and O+ run_batch refuses the Fries "
     "names its docstring says it ignores - valid input refused."),
]


def main() -> int:
    """Write the patches and INDEX.md."""
    return write_set(HERE, ["# Independent bugs, fifth set", "",
                     "Written independently from spark_impl/, spec/ and docs/spark.md alone, "
                     "without reading conformance/, tests/, docs/conformance.md or the earlier sets "
                     "(generate.py holds the table).", ""], "what the developer got wrong (and why it is observable)", BUGS)


if __name__ == "__main__":
    sys.exit(main())
