"""The ``streaming`` path of :mod:`conformance.fries.frontends`: one Fries scenario through the
Structured Streaming front end (``spark_impl.reconfig.streaming.start_query``).

The scenario's single source becomes small JSON-lines files read by a file-source query, one
file per trigger, oldest first (the files get strictly increasing modification times, so the
input log holds the tuples in the scenario's ingestion order, and ``S:i`` names the same tuple
on both sides; this is checked, a different order is a :class:`PathFailure`). Each planned
request is ``submit`` ted once the executor has ingested ``at`` tuples and the previous one
completed. When the query has processed everything, the executor must have ingested every
tuple of the input log (``foreachBatch`` steps it until it has; checked, else a
:class:`PathFailure`); the query is stopped and the executor stepped until no request is in
progress, then once more so the last batch is committed.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from spec.fries.scenario import Scenario, ingestion_order

from conformance.fries.frontends import PathFailure

_ROWS_PER_FILE = 3
_DEADLINE_S = 600.0


def run_streaming(spark: Any, scenario: Scenario, index: int, scheduler: str, *, faults: frozenset[str],
                  checkpoint_dir: str, restart_at: int | None = None) -> Any:
    """Run ``scenario`` as a streaming query; its ``RunResult`` (``scenario_index`` = ``index``)
    or a :class:`PathFailure`. ``restart_at``: once the executor has ingested that many tuples
    (and no request is in progress) the query is stopped and started again on the same
    checkpoint (a driver restart: Structured Streaming replays, the executor resumes)."""
    from dataclasses import replace

    from spark_impl.reconfig import collect_results, scenario_job
    from spark_impl.reconfig.streaming import start_query

    rows = [(t.key, t.value) for t in ingestion_order(scenario)]
    data = os.path.join(checkpoint_dir, "data")
    os.makedirs(data, exist_ok=True)
    stamp = time.time() - 10_000
    for number, offset in enumerate(range(0, len(rows), _ROWS_PER_FILE)):
        path = os.path.join(data, f"f{number:06d}.json")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("".join(json.dumps({"key": k, "value": v}) + "\n" for k, v in rows[offset: offset + _ROWS_PER_FILE]))
        os.utime(path, (stamp + number, stamp + number))
    job = scenario_job(scenario)
    requests = list(job.planned)
    stream = spark.readStream.schema("key long, value long").option("maxFilesPerTrigger", 1).json(data)
    # one tuple per executor batch and no settle steps: the handler's step budget (tuples
    # behind + settle + 2) is then exactly what ingesting its batch needs, so a handler that
    # stops early leaves tuples behind and the check below sees it
    def start() -> Any:
        return start_query(spark, replace(job, planned=()), stream, scheduler=scheduler,
                           checkpoint_dir=os.path.join(checkpoint_dir, "query"), faults=faults, batch_size=1,
                           settle_steps=0)

    run = start()
    deadline = time.monotonic() + _DEADLINE_S
    try:
        if restart_at is not None:
            while time.monotonic() < deadline and run.executor.state[0].live.offset < min(restart_at, len(rows)):
                time.sleep(0.005)
            run.stop()
            run = start()
        for planned in requests:
            while time.monotonic() < deadline:
                with run.executor.lock:
                    live = run.executor.state[0].live
                    ready = live.offset >= min(planned.at, len(rows)) and not run.in_progress()
                if ready or (run.source.count() >= len(rows) and not run.in_progress()):
                    break
                time.sleep(0.005)
            else:  # submitting now would be refused or land elsewhere: say why instead
                return PathFailure(index, f"the query did not reach request at={planned.at} within "
                                          f"{_DEADLINE_S:.0f} s (ingested {run.executor.state[0].live.offset} "
                                          f"of {len(rows)} tuples; an overloaded machine?)")
            run.submit(planned.request)
        run.query.processAllAvailable()
        behind = (run.executor.state[0].live.offset, run.source.count())
    finally:
        run.stop()
    if behind[0] < behind[1]:
        # foreachBatch steps the executor until it ingested every indexed tuple (no request
        # pauses ingestion here): after the last batch nothing may be left for a next trigger
        return PathFailure(index, f"after the query processed all its input the executor had ingested "
                                  f"{behind[0]} of the {behind[1]} tuples of the input log")
    executor = run.executor
    for _ in range(200):
        if not run.in_progress() and executor.state[0].live.offset >= run.source.count():
            break
        executor.step()
    executor.step()  # commit the last batch
    logged = [run.source.get(i)[2:] for i in range(run.source.count())]
    if logged != rows:
        return PathFailure(index, f"the streaming input log holds {logged} instead of {rows} (file order)")
    (result,) = collect_results(executor)
    return replace(result, scenario_index=index)
