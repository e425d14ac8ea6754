"""A driver crash between a sink write and its record, then a resume, on a pure-Python Spark.

:mod:`spark_impl.reconfig.sinks` promises: "A crash between the write and that record makes a
restarted executor deliver the same batches again under the same batch id", and ``Executor``
makes that delivery "first" when it resumes, before any batch. The Spark sink path
(:mod:`conformance.fries.engines.sink`) crashes at its second delivery, whichever job and batch
that is; when the crashed job commits nothing after the crash, a resume that skips the
redelivery leaves the table right (the write happened before the crash) and only the delivery
record behind, which no output shows (``restored is not None`` ->
``restored is None`` passes every differential run).

The test runs one job (``support.fries_chains.chain_json``,
:data:`TUPLES` tuples, 4 a batch) on :class:`~conformance.standin.spark.LocalSpark` with a
``CallbackSink`` whose function keeps every call (batch id and rows) and raises right after
its :data:`CRASH_AT`-th call, mid-run; then ``Executor(resume=True)`` on the same directory.
The promises:

1. the resumed executor, at construction and before any batch, delivers exactly once: the
   crashed delivery's batch id with the same rows;
2. the job then commits more (else the scenario tests nothing), finishes and conforms;
3. ``sink.json`` records the job's last committed batch;
4. the table as the sink sees it (the last write of every batch id, the ``foreachBatch``
   contract) holds every committed output exactly once: the outputs ``collect_results``
   reports, as a multiset;
5. every row of every call has ``job`` 0 and ``batch`` the call's batch id (the sinks'
   docstring: "``batch`` is the delivery's *batch id*: the last committed executor batch it
   contains"; ``ParquetSink`` partitions the table by it);
6. a sink first given to an executor resumed on a checkpoint with :data:`UNDELIVERED` batches
   run and committed but none delivered receives them in one delivery ("the batches committed
   since the last delivery"), made at construction under the id of the last one: every
   committed output (``collect_results``), each row with ``job`` 0 and ``batch`` that id.

Promise 5 in the crash run sees a row that carries its own executor batch only when a
delivery holds several batches (usually the crashed one: batch 2 is committed with batch 3,
but that depends on when the request's control message arrives); promise 6 always delivers
several. The Spark sink path reads back only the other columns (``job`` to split the table
by scenario), so neither shows there.
"""

from __future__ import annotations

from pathlib import Path
from collections import Counter
from typing import Any

from spec.fries.scenario import scenario_from_json

from support.fries_chains import chain_json, conformance_problem, run_to_end
from conformance.standin.spark import LocalSpark
from spark_impl.reconfig.api import collect_results, scenario_job
from spark_impl.reconfig.driver import Executor
from spark_impl.reconfig.sinks import read_delivered, CallbackSink

#: Source tuples of the job (3 keys, a request at :data:`AT`): several commits after the crash.
TUPLES = 24
AT = 5
#: The delivery whose function raises right after it wrote (1-based).
CRASH_AT = 2
#: Batches the run may take (it needs about 8).
BOUND = 40
#: Batches run without a sink before a resumed executor is given one (promise 6).
UNDELIVERED = 4


class _Crash(RuntimeError):
    """The simulated driver crash inside the sink function, after its write."""


class _Table:
    """The ``CallbackSink`` function: every call kept, the table as batch id -> rows."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, list[tuple[Any, ...]]]] = []
        self.crash_at: int | None = CRASH_AT

    def __call__(self, df: Any, batch_id: int) -> None:
        self.calls.append((batch_id, sorted(df.collect(), key=repr)))
        if self.crash_at is not None and len(self.calls) == self.crash_at:
            raise _Crash(f"driver crash after the sink wrote batch id {batch_id}, before its record")

    def rows(self) -> Counter[tuple[Any, ...]]:
        latest = dict(self.calls)  # the last write of every batch id
        return Counter((op, txn, key, value) for rows in latest.values() for _, _, op, txn, key, value in rows)


def _run(directory: str) -> str | None:
    scenario = scenario_from_json(chain_json(2, TUPLES, at=AT), "sink-crash")
    table = _Table()
    sink = CallbackSink(table, key_type="long", value_type="long")

    def executor(resume: bool) -> Any:
        return Executor(LocalSpark(), [scenario_job(scenario)], "fries", directory, partitions=2, sink=sink,
                        resume=resume)

    ex = executor(False)
    try:
        run_to_end(ex, BOUND)
        return f"the sink function raised at its delivery {CRASH_AT}, but the run went on (the crash was lost)"
    except _Crash:
        pass
    crashed_id, crashed_rows = table.calls[-1]
    table.crash_at = None
    before = len(table.calls)
    ex = executor(True)
    again = table.calls[before:]
    if [batch_id for batch_id, _ in again] != [crashed_id]:
        return (f"resumed after a crash between the sink's write of batch id {crashed_id} and its record, the "
                f"executor delivered batch ids {[b for b, _ in again]} before its first batch: the interrupted "
                f"delivery must be made again first, under the same id (spark_impl.reconfig.sinks)")
    if again[0][1] != crashed_rows:
        return (f"the delivery made again on resume under batch id {crashed_id} holds {len(again[0][1])} rows, "
                f"the crashed one {len(crashed_rows)}: the same batches must be delivered again")
    if not run_to_end(ex, BOUND):
        return f"the job resumed after a crash in its sink did not finish in {BOUND} batches"
    if max(b for b, _ in table.calls) <= crashed_id:
        return f"no batch was committed after the crash at batch id {crashed_id}: the scenario tests nothing"
    result = collect_results(ex)[0]
    found = conformance_problem("the job resumed after a crash in its sink", scenario, result)
    if found is not None:
        return found
    last = ex.state[0].committed.history[-1]
    recorded = read_delivered(directory).get(0)
    if recorded != last:
        return f"sink.json records batch {recorded} as delivered; the job's last committed batch is {last}"
    found = _columns_problem(table.calls)
    if found is not None:
        return found
    want = Counter(result.outputs)
    got = table.rows()
    if got != want:
        extra, missing = sorted(got - want, key=repr), sorted(want - got, key=repr)
        return (f"the sink's table (the last write of every batch id) differs from the committed outputs: "
                f"{sum((got - want).values())} extra (e.g. {extra[:2]}), {sum((want - got).values())} missing "
                f"(e.g. {missing[:2]}): every committed output is delivered exactly once")
    return None


def _columns_problem(calls: list[tuple[int, list[tuple[Any, ...]]]]) -> str | None:
    """Promise 5 of the module docstring."""
    for batch_id, rows in calls:
        wrong = [row for row in rows if (row[0], row[1]) != (0, batch_id)]
        if wrong:
            return (f"the delivery under batch id {batch_id} holds {len(wrong)} of {len(rows)} rows with (job, batch) "
                    f"other than (0, {batch_id}), e.g. {wrong[0]}: ``batch`` is the delivery's batch id, the last "
                    "committed executor batch it contains (spark_impl.reconfig.sinks)")
    return None


def _attached_problem(directory: str) -> str | None:
    """Promise 6 of the module docstring."""
    job = scenario_job(scenario_from_json(chain_json(2, TUPLES, at=AT), "sink-attached"))
    ex = Executor(LocalSpark(), [job], "fries", directory, partitions=2)
    for _ in range(UNDELIVERED):
        ex.step()
    table = _Table()
    table.crash_at = None
    ex = Executor(LocalSpark(), [job], "fries", directory, partitions=2, resume=True,
                  sink=CallbackSink(table, key_type="long", value_type="long"))
    history = ex.state[0].committed.history
    if len(history) < 2:
        return f"after {UNDELIVERED} batches the job committed only batches {history}: promise 6 tests nothing"
    ids = [batch_id for batch_id, _ in table.calls]
    if ids != [history[-1]]:
        return (f"a sink given to an executor resumed on batches {history}, committed and never delivered, received "
                f"batch ids {ids} at construction; expected one delivery of them all under batch id {history[-1]}")
    want = Counter(collect_results(ex)[0].outputs)
    got = table.rows()
    if got != want:
        return (f"the one delivery of the committed batches {history} holds {sum(got.values())} outputs, "
                f"{sum((got - want).values())} of them not committed and {sum((want - got).values())} committed ones "
                "missing: it holds the outputs of every batch committed since the last delivery")
    return _columns_problem(table.calls)


def test_a_resume_after_a_crash_between_a_sink_write_and_its_record_delivers_the_same_batch_again(
        tmp_path: Path) -> None:
    """Promises 1-5 of the module docstring."""
    assert _run(str(tmp_path)) is None


def test_a_sink_given_on_resume_receives_every_undelivered_committed_batch_in_one_delivery(tmp_path: Path) -> None:
    """Promise 6 of the module docstring."""
    assert _attached_problem(str(tmp_path)) is None
