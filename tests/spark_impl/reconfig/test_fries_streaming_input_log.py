"""The Fries Structured Streaming front end's input log under a retention
(:mod:`spark_impl.reconfig.streaming`'s docstring), without Spark (``support.fries_streaming_front``):
"With a ``retention`` the input log is bounded too: after each Structured Streaming batch, files
wholly below the executor's *committed* offset are deleted and the index keeps ``base`` ... so
tuple positions never change", and "the executor resumes (``resume=True``) from its last commit
and re-ingests whatever it had not committed": every tuple from the committed offset on stays
readable, at its position, for as long as a restart may need it - also across a request in
progress (the job not committed while the live offset moves on) and a restart.

The run: batch 0 commits, a user's request is submitted; batches 1 and 2 run with its control
messages held (committed offset 3, live 9); the driver crashes, a new ``start_query`` resumes
from the commit, Structured Streaming replays batch 2, the request is submitted again and
completes; an empty batch lets the handler apply the retention. After every handler call the
log must equal its definition, read back the last tuple first by a reader whose cached layout
is the one of batch 0 (a Python worker Spark reused; the source's docstring: "indexed files
never change", the index grows).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from spec.fries.scenario import scenario_from_json
from support.fries_chains import chain_json
from support.fries_streaming_front import Hold

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import MicroBatch, Stream
from spark_impl.reconfig.api import scenario_job
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.streaming import INDEX_CACHE, read_index, start_query

PER_BATCH = 3
"""Tuples per Structured Streaming batch."""

BATCHES = 4
"""Batches landed (the scenario's 12 tuples)."""

SETTLE = 12
"""Executor steps allowed after the last batch for the request to complete and commit."""


def _run(directory: str) -> str | None:
    scenario = scenario_from_json(chain_json(2, PER_BATCH * BATCHES, at=PER_BATCH), "input-log")
    full = scenario_job(scenario)
    request = full.planned[0].request
    job = replace(full, planned=())
    landed = [(t.key, t.value) for t in scenario.sources["S"]]
    spark = LocalSpark()
    hold = Hold()

    def start() -> tuple[Any, Stream]:
        stream = Stream(columns=("key", "value"))
        run = start_query(spark, job, stream, scheduler="fries", checkpoint_dir=directory, settle_steps=0,
                          retention=Retention(batches=1), step_hook=hold)
        return run, stream

    stale: list[Any] = []  # the log's layout as a worker cached it after batch 0

    def deliver(run: Any, stream: Stream, batch_id: int) -> str | None:
        upto = min(len(landed), (batch_id + 1) * PER_BATCH)
        stream.handler(MicroBatch(spark, landed[batch_id * PER_BATCH:upto]), batch_id)
        if not stale:
            run.source.get(upto - 1)  # a worker reads the log: its layout is cached
            stale.append(INDEX_CACHE.get(run.source.path))
        else:  # a worker Spark reused that ran no task since batch 0
            INDEX_CACHE.put(run.source.path, stale[0])
        return _log_problem(run, landed[:upto], f"after Structured Streaming batch {batch_id}")

    run, stream = start()
    found = deliver(run, stream, 0)
    answer = run.submit(request)
    if found or answer is not None:
        return found or f"the request was refused by submit: {answer}"
    hold.holding = True
    for batch_id in (1, 2):
        found = found or deliver(run, stream, batch_id)
    st = run.executor.state[0]
    if found is None and not (st.live.active is not None and st.committed.offset < st.live.offset):
        found = (f"with the request's control messages held, the job was committed up to {st.committed.offset} "
                 f"of {st.live.offset} tuples (active request: {st.live.active}): Fries §7.3 commits no job "
                 "whose request has a head without its FCM")
    if found is not None:
        return found
    # the driver crashes: a new query on the same directory, batch 2 replayed
    run.stop()
    hold.holding = False
    run, stream = start()
    if run.executor.state[0].live.made == 0:
        answer = run.submit(request)
        if answer is not None:
            return f"the request lost in the crash was refused when submitted again: {answer}"
    for batch_id in (2, 3):
        found = found or deliver(run, stream, batch_id)
    if found is None and run.replayed != [2]:
        found = f"after the restart, replayed lists the batches {run.replayed} (Structured Streaming replayed batch 2)"
    for _ in range(SETTLE):
        st = run.executor.state[0]
        if found or (st.live.active is None and st.committed.offset == len(landed)):
            break
        run.step()
    st = run.executor.state[0]
    if found is None and (st.live.made != 1 or st.live.active is not None or st.committed.offset != len(landed)):
        found = (f"{SETTLE} steps after the last batch: {st.live.made} request(s) made, active {st.live.active}, "
                 f"committed up to {st.committed.offset} of {len(landed)} tuples (the request must complete and "
                 "every tuple be committed)")
    return found or deliver(run, stream, BATCHES)


def _log_problem(run: Any, landed: list[tuple[Any, Any]], when: str) -> str | None:
    """The input log against its definition (module docstring), ``landed`` every tuple so far."""
    source = run.source
    committed = run.executor.state[0].committed.offset
    index = read_index(source.path)
    if source.count() != len(landed):
        return f"{when}: the input log counts {source.count()} tuples, {len(landed)} landed"
    start = index.base
    for _, files in index.batches:
        for name, rows in files:
            end = start + int(rows)
            if end <= committed:
                return (f"{when}: the input log still lists {name} (tuples {start}..{end - 1}), wholly below the "
                        f"committed offset {committed}: a retention deletes it")
            start = end
    if index.base > committed:
        return (f"{when}: the input log deleted tuples up to {index.base - 1}, beyond the committed offset "
                f"{committed} (live: {run.executor.state[0].live.offset}): a restart re-reads them")
    for i in reversed(range(committed, len(landed))):  # the last first: a cached layout may be stale
        try:
            _, txn, key, value = source.get(i)
        except Exception as error:  # noqa: BLE001 - a lost tuple is the finding
            return f"{when}: tuple {i} (committed offset {committed}) cannot be read: {type(error).__name__}: {error}"
        if (key, value) != landed[i] or txn != f"S:{i}":
            return f"{when}: tuple {i} reads as {txn} {(key, value)}, landed as S:{i} {landed[i]}"
    on_disk = {f for f in os.listdir(source.path) if f.endswith(".jsonl")}
    listed = {str(name) for _, files in index.batches for name, _ in files}
    if on_disk - listed:
        return f"{when}: files deleted from the input log's index are still on disk: {sorted(on_disk - listed)}"
    return None


def test_the_input_log_keeps_every_tuple_from_the_committed_offset_across_a_request_and_a_restart(
        tmp_path: Path) -> None:
    assert _run(str(tmp_path)) is None
