"""The FCM channel's task side against its contract, without Spark.

:mod:`spark_impl.reconfig.control`: the driver appends a record to the control log whenever a
request is made, re-made or completes (the two newest are kept); a task's
:class:`~spark_impl.reconfig.control.ControlReader` starts on the record its batch plan names
(or the newest, if that one was pruned) and, polling between tuples, reads every newer record
once it appears - a truncated one (visible while written, on HDFS and ``file://``) again until
it settles, a damaged one refused at once. What an object sees of a request is the newest
record's entry, and the FCM reaches it at ``issued + delay(obj)`` (a seeded draw in
``[lo, hi]`` ms, the same in every process).

The suite's runs publish a few records per batch, so the branches for pruned records and torn
reads are never taken, and a reader left behind shows only when a member misses a request in
a rare interleaving. The tests drive one reader through each case on a temporary
checkpoint. A real bug found this way: after three
records written while a task ran, the reader never moved again (its next record was pruned);
fixed in ``ControlReader.poll``.

The throttle: a task "checks whether the *next* record exists at most every
``Store.poll_s`` seconds (1 ms locally ...) *between two tuples* and reads it when it appears",
and a forced poll (a tuple of a newer version arrived) reads at once. The cases above poll only
with ``force=True``, so :func:`_throttle_problem` also polls plainly: with a long throttle (60 s) a
plain poll right after a view reads nothing new and a forced one reads the new record; with the
store's own ``poll_s``, a plain poll a little more than ``poll_s`` after the last check reads it;
two records written since the view are both read by one poll (the newest is seen). A throttle
never lifted, one inverted (reading only when *less* than ``poll_s`` passed) or a poll that reads
one record each time only delays a request by a poll or a batch in the suite's runs: every
oracle passes.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.core.watchdog import call_with_timeout
from spark_impl.reconfig import control
from spark_impl.reconfig.control import control_log, write_control, ControlEntry, ControlReader
from spark_impl.records import CorruptStateError


def _entry(j: int, s: int = 0) -> Any:
    return ControlEntry(s, j, 1, 1000.0 + j, j + 1, 5.0, 50.0, 7)


def _seen(reader: Any) -> int | None:
    entry = reader.entry(0)
    return None if entry is None else int(entry.j)


class _PrunedOnRead:
    """A control log whose next record is pruned between ``exists`` and ``read`` once."""

    def __init__(self, log: Any, gone: int) -> None:
        self.log, self.gone = log, gone

    def __getattr__(self, name: str) -> Any:
        return getattr(self.log, name)

    def exists(self, seq: int) -> bool:
        return seq == self.gone or bool(self.log.exists(seq))

    def read(self, seq: int) -> Any:
        if seq == self.gone:
            self.gone = -1
            return None
        return self.log.read(seq)


def _reader_problem(root: str) -> str | None:
    log = control_log(root)
    reader = ControlReader(root)
    reader.start(0)
    if reader.by_scenario:
        return f"a reader started on record 0 (none yet) sees {reader.by_scenario}"
    first = write_control(log, [_entry(1)])
    write_control(log, [_entry(2)])
    reader.start(first)  # the batch plan's record, although a newer one exists
    if _seen(reader) != 1 or reader.seq != first:
        return (f"a reader started on record {first} (request 1; record {first + 1} is newer) sees request "
                f"{_seen(reader)} (record {reader.seq}): a task starts on its batch plan's record")
    reader.poll(force=True)
    if _seen(reader) != 2:
        return f"after one new record a forced poll sees request {_seen(reader)}, not 2"
    for j in (3, 4, 5):  # three records while the task runs: keep=2 prunes its next one
        newest = write_control(log, [_entry(j)])
    if not log.exists(newest - 1) or log.exists(newest - 2):
        kept = [q for q in range(1, newest + 1) if log.exists(q)]
        return f"the control log keeps records {kept} of 1..{newest}; the driver keeps the two newest"
    reader.poll(force=True)
    if _seen(reader) != 5 or reader.seq != newest:
        return (f"after three new records (the next one pruned) a forced poll sees request {_seen(reader)} "
                f"(record {reader.seq}), not 5 (record {newest}): the reader is left behind for good")
    fresh = ControlReader(root)
    fresh.start(0)  # a batch planned before any record: no request, even though records exist now
    if fresh.by_scenario:
        return f"a reader started on record 0 sees {fresh.by_scenario} (records 1..{newest} exist): not its plan's view"
    empty = os.path.join(root, "from-none")
    fresh = ControlReader(empty)
    fresh.start(0)
    for j in (1, 2, 3):  # three records while the task runs: record 1 is pruned
        write_control(control_log(empty), [_entry(j)])
    fresh.poll(force=True)
    if _seen(fresh) != 3:
        return f"a reader started on no record polls request {_seen(fresh)} after three records (1 pruned), not 3"
    one = os.path.join(root, "from-none-one")
    fresh = ControlReader(one)
    fresh.start(0)
    first_one = write_control(control_log(one), [_entry(1)])  # the first request, made while the task runs
    fresh.poll(force=True)
    if _seen(fresh) != 1 or fresh.seq != first_one:
        return (f"a reader started on no record polls request {_seen(fresh)} (record {fresh.seq}) after the first "
                f"record {first_one} was written, not request 1: it misses the job's first request")
    late: Any = ControlReader(root)
    for pruned in (first, first + 1):  # pruned: the newest instead
        late.start(pruned)
        if _seen(late) != 5 or late.seq != newest:
            return (f"a reader started on the pruned record {pruned} sees request {_seen(late)} (record {late.seq}), "
                    "not the newest 5")
    newest = write_control(log, [_entry(6)])
    write_control(log, [_entry(7)])
    late.log = _PrunedOnRead(log, newest)
    late.poll(force=True)
    if _seen(late) != 7:
        return f"a record pruned between exists and read left the reader on request {_seen(late)}, not the newest 7"
    return None


def _torn_problem(root: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """A truncated next record is read again until it is whole; a damaged one is refused."""
    log = control_log(root)
    reader = ControlReader(root)
    reader.start(write_control(log, [_entry(1)]))
    scratch = os.path.join(root, "scratch")
    other = control_log(scratch)
    other.append({"requests": [_entry(2).to_json()]}, keep=2)
    other.append({"requests": [_entry(2).to_json()]}, keep=2)
    whole = open(other.store.path(other.name(2)), "rb").read()
    target = log.store.path(log.name(reader.seq + 1))
    with open(target, "wb") as handle:
        handle.write(whole[: len(whole) - 5])

    def finish() -> None:
        time.sleep(0.05)
        with open(target, "wb") as out:
            out.write(whole)

    writer = threading.Thread(target=finish)
    writer.start()
    try:
        reader.poll(force=True)
    except CorruptStateError as error:
        return f"a truncated control record (still being written) was refused at once: {error}"
    finally:
        writer.join()
    if _seen(reader) != 2:
        return f"after a truncated record settled the reader sees request {_seen(reader)}, not 2"
    damaged = bytearray(whole)
    damaged[-2] ^= 0xFF
    with open(log.store.path(log.name(reader.seq + 1)), "wb") as handle:
        handle.write(bytes(damaged))
    began = time.monotonic()
    try:
        reader.poll(force=True)
    except CorruptStateError:
        if time.monotonic() - began > 1.0:
            return "a damaged control record was refused only after the settling time (retried as if truncated)"
    else:
        return "a damaged control record (checksum mismatch) was read instead of refused"
    return _never_settles(reader, whole[: len(whole) - 5], monkeypatch)


def _never_settles(reader: Any, torn: bytes, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """A record that stays truncated is refused once ``SETTLE_S`` passed (here shortened to
    50 ms), not read again for ever."""
    with open(reader.log.store.path(reader.log.name(reader.seq + 1)), "wb") as handle:
        handle.write(torn)
    def poll() -> str:
        try:
            reader.poll(force=True)
            return "read"
        except CorruptStateError:
            return "refused"

    monkeypatch.setattr(control, "SETTLE_S", 0.05)
    finished, outcome = call_with_timeout(poll, 3.0, interrupt=True)  # an endless re-read is stopped
    if not finished or outcome != "refused":
        what = "read" if finished else "still being read again after 3 s"
        return f"a control record that stays truncated was {what}, not refused after the settling time"
    return None


def _throttle_problem(root: str) -> str | None:
    """Plain polls between tuples and the ``poll_s`` throttle (module docstring)."""
    log = control_log(root)
    reader = ControlReader(root)
    poll_s = reader.poll_s
    reader.start(write_control(log, [_entry(1)]))
    reader.poll_s = 60.0  # a long throttle: the next plain poll comes well within it
    write_control(log, [_entry(2)])
    reader.poll()
    if _seen(reader) != 1:
        return (f"a plain poll right after the reader's view (throttle 60 s) read request {_seen(reader)}: a task "
                "checks for the next control record at most every poll_s seconds")
    reader.poll(force=True)
    if _seen(reader) != 2:
        return (f"a forced poll within the reader's throttle (60 s) sees request {_seen(reader)}, not the new 2: a "
                "forced poll reads at once")
    reader.poll_s = poll_s
    write_control(log, [_entry(3)])
    time.sleep(poll_s + 0.005)
    reader.poll()
    if _seen(reader) != 3:
        return (f"a plain poll {poll_s + 0.005:.3f} s after the last check (poll_s {poll_s} s) sees request "
                f"{_seen(reader)}, not the new 3: a task reads the next control record once poll_s passed")
    write_control(log, [_entry(4)])
    newest = write_control(log, [_entry(5)])
    reader.poll(force=True)
    if _seen(reader) != 5 or reader.seq != newest:
        return (f"after two new records one forced poll sees request {_seen(reader)} (record {reader.seq}), not the "
                f"newest 5 (record {newest}): a poll reads every record that appeared")
    return None


def _entry_problem() -> str | None:
    """Seeded FCM delays within ``[lo, hi]``, the same twice, visible exactly from issue + delay;
    no delay when ``hi`` is 0, draws when only ``lo`` is; the JSON form reads back equal."""
    entry = _entry(3)
    delays = {obj: entry.delay_s(obj) for obj in ("A", "A#1", "B#0", "C")}
    for obj, d in delays.items():
        if not 0.005 <= d <= 0.05 or entry.delay_s(obj) != d:
            return f"the FCM delay of {obj} is {d} s, not a fixed draw in [5, 50] ms"
        if not entry.visible_to(obj, entry.issued + d) or entry.visible_to(obj, entry.issued + d - 1e-4):
            return f"the FCM of {obj} is not visible exactly from issued + {d} s"
    if len(set(delays.values())) < 2:
        return f"every object gets the same FCM delay {delays}: the draw ignores the object"
    for obj, d in delays.items():
        if not entry.visible_to(obj, entry.issued + d + 1.0):
            return f"the FCM of {obj} is not visible a second after issued + {d} s"
    if replace(entry, fcm_lo=0.0, fcm_hi=0.0).delay_s("A") != 0.0:
        return "an FCM delay hook of [0, 0] ms still delays"
    # [0, hi]: the natural way to ask for "up to hi ms" (a
    # "no delay" shortcut that tested lo delivered every such FCM at once)
    up_to = {obj: replace(entry, fcm_lo=0.0, fcm_hi=50.0).delay_s(obj) for obj in ("A", "A#1", "B#0", "C")}
    if not all(0.0 <= d <= 0.05 for d in up_to.values()) or max(up_to.values()) == 0.0:
        return f"an FCM delay hook of [0, 50] ms delays by {up_to} s, not seeded draws in [0, 50] ms"
    fixed = replace(entry, fcm_lo=40.0, fcm_hi=40.0).delay_s("A")
    if fixed != 0.04:
        return f"an FCM delay hook of [40, 40] ms delays by {fixed} s, not 0.04 s"
    if ControlEntry.from_json(entry.to_json()) != entry:
        return f"a control entry read back from JSON differs: {ControlEntry.from_json(entry.to_json())}"
    return None


def test_a_control_entrys_fcm_delays_are_seeded_draws_visible_from_issue_plus_delay() -> None:
    """Seeded FCM delays within ``[lo, hi]``, the same twice, visible exactly from issue +
    delay; no delay when ``hi`` is 0, draws when only ``lo`` is; the JSON form reads back equal."""
    assert _entry_problem() is None


def test_a_reader_starts_on_its_plans_record_and_follows_every_newer_one(tmp_path: Path) -> None:
    """A reader starts on the record its batch plan names (or the newest, if that one was
    pruned) and reads every newer record once it appears, also one pruned meanwhile."""
    assert _reader_problem(str(tmp_path)) is None


def test_a_truncated_record_is_read_again_until_it_settles_and_a_damaged_one_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _torn_problem(str(tmp_path), monkeypatch) is None


def test_a_plain_poll_is_throttled_to_poll_s_and_a_forced_one_reads_at_once(tmp_path: Path) -> None:
    assert _throttle_problem(str(tmp_path)) is None


def test_a_reader_follows_three_records_written_while_its_task_runs(tmp_path: Path) -> None:
    """Regression (a real bug): the driver keeps the two newest control records, so
    after three records written since a task's view the reader's *next* record is gone; poll
    checked only ``exists(seq + 1)`` and stayed on its old view for the rest of the task (a
    component member forced to poll by a new-version tuple then still saw no request). Failed
    before the fix in ``ControlReader.poll`` (the reader stayed on request 1)."""
    log = control_log(str(tmp_path))
    reader = ControlReader(str(tmp_path))
    reader.start(write_control(log, [_entry(1)]))
    for j in (2, 3, 4):
        newest = write_control(log, [_entry(j)])
    reader.poll(force=True)
    entry = reader.entry(0)
    assert entry is not None and entry.j == 4 and reader.seq == newest


def test_a_reader_that_started_on_no_record_follows_three_records(tmp_path: Path) -> None:
    """The same bug for a task whose batch was planned before any control record (seq 0)."""
    reader = ControlReader(str(tmp_path))
    reader.start(0)
    for j in (1, 2, 3):
        write_control(control_log(str(tmp_path)), [_entry(j)])
    reader.poll(force=True)
    entry = reader.entry(0)
    assert entry is not None and entry.j == 3
