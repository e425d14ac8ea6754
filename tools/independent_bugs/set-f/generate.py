"""The sixth set of independent bugs: 20 realistic one-line bugs in ``spark_impl/``, written
independently of the test suite from ``spark_impl/``, ``spec/`` and docs/spark.md alone - without
reading ``conformance/``, ``tests/``, docs/conformance.md, the earlier sets or git log
messages, and without running the suite or the tests on them. 8 in the Fries executor (task,
MCS, driver, control messages, progress, sinks, streaming front end, object-store sink), 4 in DGS
(release, fork down, live mailbox, steps), 4 in O+ (windows, ScaleJoin, rescale feed, live
watermark) and 4 in the shared layer (keys, records x2, store), of varied kinds.

``python tools/independent_bugs/set-f/generate.py`` (re)writes ``NN-name.patch`` and
``INDEX.md`` here from the table below; each bug replaces one exact, unique snippet of the file
at HEAD (checked), so a patch that no longer applies fails loudly.

Run them: ``python tools/independent_bugs.py --run DIR --set set-f [--fail-fast]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from one_line_set import Bug, write_set  # noqa: E402

# (name, file, old snippet, new snippet, what a developer got wrong - and why it is observable)
BUGS: list[Bug] = [
    # --- Fries executor (spark_impl/reconfig/) -------------------------------------------------
    ("01-task-restart-any-job", "spark_impl/reconfig/task.py",
     "        restarted = all(s in plan.base for s in range(len(self.jobs)))\n",
     "        restarted = any(s in plan.base for s in range(len(self.jobs)))\n",
     "all/any slip in the whole-driver-restart test: when ONE job of a multi-scenario batch restarts "
     "(timing.restarts, a per-job crash; docs/spark.md 'In a multi-scenario run this is per job (the other "
     "jobs of the batch commit normally)'), every task skips the previous batch's file, so every OTHER job "
     "of that batch starts again from empty objects: its key states, version tags and current logic "
     "(fn_req) are lost - wrong outputs and final states (and old-logic processing after a completed "
     "request) for the jobs that did not crash; single-job runs are unaffected."),
    ("02-mcs-latest-one-to-many", "spark_impl/reconfig/mcs.py",
     "            if not (reachable(a, parents) & many):\n",
     "            if not (reachable(a, children) & many):\n",
     "Wrong direction: sync_operators keeps the one-to-many ancestors with no one-to-many DEScendant "
     "(the latest) instead of those with no one-to-many ancestor (the earliest, Alg. 3/4 as docs/spark.md "
     "'MCS' describes). With two one-to-many operators in a chain before the reconfigured one, the MCS "
     "head is the later one, which can switch between two outputs of the earlier one's single "
     "transaction: one transaction sees both versions (non-serializable schedule, outputs no serial "
     "order gives), and components()/object_components() differ from spec/fries/mcs.py."),
    ("03-epoch-batch-current", "spark_impl/reconfig/driver.py",
     "        st.live.active = Active(j, st.attempts[j], time.time(), g + 1, heads if self.scheduler != \"epoch\" else [],\n",
     "        st.live.active = Active(j, st.attempts[j], time.time(), g, heads if self.scheduler != \"epoch\" else [],\n",
     "Off-by-one in the epoch boundary: epoch_batch is the batch that is RUNNING when the request is made "
     "instead of the next one (docs: 'every reconfigured operator switches at the next micro-batch "
     "boundary'). Objects of that batch that poll the control record after it appears switch mid-batch "
     "while those that already ran do not: under the epoch scheduler the first `at` tuples are partly "
     "processed by the new version (outputs differ from the serial order with Rj after `at` tuples) and a "
     "request over two levels mixes versions inside one transaction (not serializable)."),
    ("04-control-poll-throttle-inverted", "spark_impl/reconfig/control.py",
     "        if not force and now - self._checked < self.poll_s:\n",
     "        if not force and now - self._checked > self.poll_s:\n",
     "Inverted comparison in the poll throttle: a task checks the control store only when it was called "
     "within poll_s (1 ms; 20 ms on an object store) of its last check. With tuples that take longer than "
     "that (operator_cost, stragglers, the bench's 1 ms of CPU per event) a running head never sees the "
     "FCM between two tuples and switches only at the forced poll at the end of its partition - the "
     "documented 'a request reaches a task that is already running without waiting for the batch to end' "
     "is broken: Fries delays grow to a batch's length (bench reconfiguration ratio ~1) and fcm_delay "
     "visibility is no longer honoured between tuples."),
    ("05-progress-fold-newest", "spark_impl/reconfig/progress.py",
     "            for j in sorted(self.delays)[:-keep]:\n",
     "            for j in sorted(self.delays)[keep:]:\n",
     "Wrong slice when folding delays: the NEWEST delays beyond the first `keep` are folded into the "
     "DelaySummary instead of the oldest, so after Retention.delays (16) completed requests the record "
     "keeps the first 16 forever and folds every new one at once: collect_results(...).delays_ms lists the "
     "oldest requests' delays instead of the newest, and the summary's `last` is the newest request "
     "(docs/spark.md 'Bounded storage': 'older ones are folded')."),
    ("06-sink-batch-id-first", "spark_impl/reconfig/sinks.py",
     "        batch_id = fresh[-1]\n",
     "        batch_id = fresh[0]\n",
     "Wrong end of the list: a delivery's batch id is the FIRST committed executor batch it contains, not "
     "the last (docs/spark.md 'Sinks': 'batch id = the last committed executor batch it contains'), and "
     "that id is also recorded as delivered. Whenever one commit covers several batches (a user request "
     "blocks commits until it completes; a §7.3 block) the next delivery re-sends the later batches under "
     "a new id: rows duplicated in the Parquet table / ObjectStoreSink, wrong `batch` column."),
    ("07-streaming-replay-last-batch-reindexed", "spark_impl/reconfig/streaming.py",
     "            if batch_id <= index.last:\n",
     "            if batch_id < index.last:\n",
     "Boundary slip in the input log's replay test: a replay of the LAST indexed Structured Streaming batch "
     "(the usual case after a driver crash inside foreachBatch) is written and indexed a second time "
     "(docs: 'a batch already in the index is never written again'), so its tuples get new positions and "
     "the executor ingests them twice - duplicated outputs (new transaction ids S:i) after a restart or a "
     "crash_before_commit."),
    ("08-objectstore-key-value-types-swapped", "spark_impl/reconfig/objectstore.py",
     "            (\"key\", _ARROW_TYPES[key_type]), (\"value\", _ARROW_TYPES[value_type]))\n",
     "            (\"key\", _ARROW_TYPES[value_type]), (\"value\", _ARROW_TYPES[key_type]))\n",
     "Swapped arguments in the Fries part-file schema: the key column gets value_type's Arrow type and the "
     "value column key_type's. Invisible with the default string/string, but an ObjectStoreSink(uri, "
     "key_type=\"string\", value_type=\"long\") (or long keys, string values) fails in the tasks converting "
     "the rows (delivery raises, the stream stops), and read_committed(uri, key_type, value_type) reads "
     "the committed parts with a schema that does not match them."),
    # --- DGS (spark_impl/dgs/) -----------------------------------------------------------------
    ("09-dgs-release-latest-unreleased", "spark_impl/dgs/release.py",
     "                earliest[e.tag] = min(earliest.get(e.tag, e.key), e.key)\n",
     "                earliest[e.tag] = max(earliest.get(e.tag, e.key), e.key)\n",
     "min/max slip in the release fixpoint (rule 2: 'no buffered event that stays unreleased has a key < k "
     "and a dependent tag'): per tag it remembers the LATEST unreleased key, so when a tag has two held "
     "events around an otherwise releasable dependent event, that event is released before the earlier "
     "held one - dependent events processed out of key order, outputs that differ from spec(sort(u)) "
     "(batch run_dgs with arrival delays and the live mailbox alike)."),
    ("10-dgs-fork-swapped-predicates", "spark_impl/dgs/tasks.py",
     "    a, b = program.fork(worker.fork, state, left.subtree_tags(), right.subtree_tags())\n",
     "    a, b = program.fork(worker.fork, state, right.subtree_tags(), left.subtree_tags())\n",
     "Swapped arguments to the user's fork: the left child gets the part of the state for the right "
     "subtree's tags and vice versa. The initial fork of an empty state hides it, but every synchronizing "
     "event, a live re-plan or a restart with another plan forks real state the wrong way: a key's count "
     "lands on the leaf that never sees its events (WordCounter: read-resets output 0 / wrong counts), "
     "final states and outputs differ from the sequential program."),
    ("11-dgs-live-equal-ts-accepted", "spark_impl/dgs/streaming_input.py",
     "        if last is not None and item.ts <= last[0]:\n",
     "        if last is not None and item.ts < last[0]:\n",
     "Boundary slip in the per-stream timestamp check: an item whose ts EQUALS its stream's previous one is "
     "accepted instead of failing the batch with the one-line InputError (docs/spark.md 'Rows, heartbeats, "
     "keys': 'a timestamp not after its stream's previous one ... fails the batch'; Def. 3.3 strict). Two "
     "events then share one order key (ts, stream): a refusal that no longer happens, and ties in the "
     "release order."),
    ("12-dgs-merge-sync-across-leaf-segment", "spark_impl/dgs/driver.py",
     "        if not any(segment) and last is not None and last[0] == event.worker:\n",
     "        if last is not None and last[0] == event.worker:\n",
     "Missing guard when merging consecutive synchronizing events: a sync event of worker w is appended to "
     "w's previous group even when leaf events came in between, so those leaf events run AFTER it (in the "
     "next step) although their keys are earlier - a dependent leaf event (e.g. an increment before a "
     "root read) is processed out of key order: outputs differ from spec(sort(u)) and the processed trace "
     "is not in key order per worker."),
    # --- O+ (spark_impl/oplus/) ----------------------------------------------------------------
    ("13-oplus-lefts-miss-newest-window", "spark_impl/oplus/operators.py",
     "    return range(earliest_left(op, ts), (ts // op.wa) * op.wa + 1, op.wa)\n",
     "    return range(earliest_left(op, ts), (ts // op.wa) * op.wa, op.wa)\n",
     "Off-by-one in the range end: the newest window instance a tuple falls in (left boundary "
     "floor(ts / WA) * WA) is excluded, so under WT multi every tuple is missing from its latest window - "
     "sliding sums / word counts too small, windows that only contain recent tuples missing from the "
     "outputs (batch executor and live front end; differs from the sequential reference)."),
    ("14-oplus-scalejoin-ws-inclusive", "spark_impl/oplus/instance.py",
     "                if other_source != source and abs(other_ts - ts) < op.ws:\n",
     "                if other_source != source and abs(other_ts - ts) <= op.ws:\n",
     "Boundary slip in the ScaleJoin window predicate: two tuples exactly WS apart are compared (and "
     "emitted as a match when the band predicate holds) although they share no window (|Δts| < WS); "
     "whether the stored tuple is still there depends on the round's watermark, so extra matches appear "
     "depending on the cut into rounds - outputs differ from the reference."),
    ("15-oplus-rescale-watermark-strict", "spark_impl/oplus/feed.py",
     "            if change.watermark <= wm:\n",
     "            if change.watermark < wm:\n",
     "Boundary slip in the batch executor's rescale trigger: a reconfiguration at watermark w takes effect "
     "only after a round whose watermark EXCEEDS w, not at the first round boundary whose watermark "
     "reaches it (feed docstring, docs/oplus.md): with a round watermark exactly w the handover happens a "
     "round later (or never, at the end of the stream) - rows emitted by the instance of the old mapping "
     "(instance oracle), `applied` counts too low."),
    ("16-oplus-live-watermark-max-source", "spark_impl/oplus/streaming.py",
     "            watermark = {j: min(bounds.get((j, s), -math.inf) for s in range(job.sources))\n",
     "            watermark = {j: max(bounds.get((j, s), -math.inf) for s in range(job.sources))\n",
     "min/max slip in the live job watermark: it is the LARGEST bound over the job's sources instead of the "
     "smallest (docs/spark.md 'Watermarks from the data': TB's merged watermark). With two sources "
     "(scalejoin, forward, WT multi over 2 sources) windows are emitted before the slower source "
     "delivered its tuples, which then arrive late and are dropped (status().late > 0): missing and wrong "
     "window rows in the sink."),
    # --- shared layer (keys, records, store) ----------------------------------------------------
    ("17-keys-str-length-in-chars", "spark_impl/keys.py",
     "        out.append(b\"s%d:\" % len(raw) + raw)\n",
     "        out.append(b\"s%d:\" % len(key) + raw)\n",
     "Wrong variable in the durable key encoding: a string's length is its number of characters, not of "
     "its UTF-8 bytes (docs/spark.md 'Keys and routing': `s<n>:` + bytes, n their count). ASCII keys and "
     "the test vectors are unchanged, but every non-ASCII string key (\"é\", \"naïve\", CJK) hashes to "
     "another value than the documented format (b2sum of E(key)), so it may be routed to another worker "
     "than the format promises and than a checkpoint written by a correct version expects."),
    ("18-records-prune-keeps-one-more", "spark_impl/records.py",
     "            self.prune(seq - keep + 1)\n",
     "            self.prune(seq - keep)\n",
     "Off-by-one in RecordLog.append's pruning: keep=2 keeps THREE records (the newest keep + 1), so the "
     "progress log, the control log, the DGS commit log each hold one record more than documented ('the "
     "two newest are kept'; 'at most ... 2 progress and 2 control records', 'at most two commit records') "
     "- the bounded-storage counts on a local disk and on S3 are exceeded."),
    ("19-records-extended-record-is-torn", "spark_impl/records.py",
     "        raise CorruptStateError(path, f\"longer than written: {len(payload)} payload bytes, the header says {length}\")\n",
     "        raise TornRecordError(path, f\"longer than written: {len(payload)} payload bytes, the header says {length}\")\n",
     "Wrong exception class: a record LONGER than its header says is reported as torn instead of altered, "
     "so RecordLog.latest silently falls back to the previous commit (and a writer sets the record aside) "
     "instead of refusing it with CorruptStateError as documented ('An altered record (full length with a "
     "digest mismatch, longer than written, wrong magic) ... still refused'): an extended newest progress "
     "/ commit record is skipped, the previous commit re-run or re-delivered."),
    ("20-store-load-cache-keyed-by-size", "spark_impl/store.py",
     "            key: tuple[Any, ...] = (path, *stamp)\n",
     "            key: tuple[Any, ...] = (path, stamp[2])\n",
     "Stale cache: the per-worker cache of plans and requests on a local disk is keyed by the path and the "
     "file's SIZE only, not (inode, mtime, size) as documented ('cached per Python worker under the file's "
     "stat'). A plan or request rewritten at the same path with the same length - a batch planned again, a "
     "checkpoint directory used afresh in the same Spark session, a request number reused after a "
     "rejected request's rollback - is served from the old version: tasks run the old ranges / jobs stamp "
     "/ control record, or the old request's logic."),
]


def main() -> int:
    """Write the patches and INDEX.md."""
    return write_set(HERE, ["# Independent bugs, sixth set", "",
                     "Written independently from spark_impl/, spec/ and docs/spark.md alone, "
                     "without reading conformance/, tests/, docs/conformance.md or the earlier sets "
                     "(generate.py holds the table).", ""], "what the developer got wrong (and why it is observable)", BUGS)


if __name__ == "__main__":
    sys.exit(main())
