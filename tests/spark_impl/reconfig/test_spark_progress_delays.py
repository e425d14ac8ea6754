"""The Fries progress record's delay history under a Retention (spark_impl.reconfig.progress,
retention): older delays are folded into a summary, so the commit record a long-running job
writes stops growing after a few requests (a 2,000-batch soak without the summary: the record grew until
its 1,000-entry bound, disk 1.43x), while the summary still covers every request's delay.
No Spark: the records are written by the progress log itself."""

from __future__ import annotations

import random
from pathlib import Path

from spark_impl.reconfig.progress import DelaySummary, Progress, read_progress, write_progress
from spark_impl.reconfig.retention import Retention, trim_requests
from spark_impl.records import RecordLog
from spark_impl.store import open_store

REQUESTS = 400  # a 2,000-batch soak's requests (one every 5 batches)


def _record_bytes(directory: str) -> int:
    log = RecordLog(open_store(directory), "progress")
    data = open_store(directory).read(log.name(log.sequences()[-1]))
    assert data is not None
    return len(data)


def test_progress_record_is_flat_after_a_few_requests_and_summarizes_every_delay(tmp_path: Path) -> None:
    rng = random.Random(14)
    prog = Progress(offset=123_456, made=REQUESTS, history=[1, 2])
    sizes, delays = [], []
    for j in range(1, REQUESTS + 1):
        delay = rng.uniform(0.5, 4000.0)  # full float precision, as the driver measures it
        prog.delays[j] = delay
        delays.append(delay)
        trim_requests(prog, {1, 2}, Retention().delays)  # what collect_garbage does after each batch
        write_progress(str(tmp_path), [prog], 5 * j)
        sizes.append(_record_bytes(str(tmp_path)))
    # the soak measures its start after 10% of the batches: 40 requests in; the end over the last 10%
    start, end = sizes[REQUESTS // 10 - 1], max(sizes[-REQUESTS // 10:])
    assert end <= 1.05 * start, (start, end)  # before the fold (1,000 kept): ~8x
    assert len(prog.delays) == Retention().delays
    assert sorted(prog.delays) == list(range(REQUESTS - Retention().delays + 1, REQUESTS + 1))
    last = read_progress(str(tmp_path))
    assert last is not None
    stats = last[1][0].delay_stats()  # read back from the record, as a restarted driver sees it
    assert stats.count == REQUESTS and stats.last == REQUESTS
    assert abs(stats.total_ms - sum(delays)) < 0.01 * REQUESTS and stats.max_ms == max(delays)
    assert stats.mean_ms is not None and abs(stats.mean_ms - sum(delays) / REQUESTS) < 0.01


def test_without_folding_nothing_changes_and_old_records_still_parse() -> None:
    prog = Progress(delays={1: 5.0, 2: 7.5})
    prog.fold_delays(2)
    assert prog.delays == {1: 5.0, 2: 7.5} and prog.earlier == DelaySummary()
    assert prog.delay_stats() == DelaySummary(2, 12.5, 7.5, 2)
    raw = prog.to_json()
    del raw["earlier"]  # a record written before the summary existed
    assert Progress.from_json(raw) == prog
    prog.fold_delays(1)
    assert prog.delays == {2: 7.5} and prog.earlier == DelaySummary(1, 5.0, 5.0, 1)
    assert Progress.from_json(prog.to_json()) == prog
    assert Progress().delay_stats().mean_ms is None
