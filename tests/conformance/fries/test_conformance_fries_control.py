"""The FCM channel's task side (``spark_impl.reconfig.control.ControlReader``) and the suite's
check of it (:mod:`conformance.fries.checks.control`), without Spark."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from conformance.fries.checks import control as fries_control_check
from spark_impl.reconfig.control import ControlEntry, ControlReader, control_log, write_control


def _entry(j: int) -> ControlEntry:
    return ControlEntry(0, j, 1, float(j), j + 1, 0.0, 0.0, 0)


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


def test_the_control_check_passes_on_the_executor() -> None:
    assert fries_control_check.control_problem() is None


def test_the_control_check_names_a_reader_that_ignores_pruned_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """control.py ``start``: ``raw is None and seq > 0`` -> ``and not seq > 0`` (a pruned start
    record gives an empty view) - no run of the suite starts on a pruned record."""
    original = ControlReader.start

    def start(self: ControlReader, seq: int) -> None:
        raw = self.log.read(seq) if seq > 0 else None
        self._view(seq, raw)

    monkeypatch.setattr(ControlReader, "start", start)
    found = fries_control_check.control_problem()
    assert found is not None and "pruned" in found
    monkeypatch.setattr(ControlReader, "start", original)
    assert fries_control_check.control_problem() is None


def test_the_control_check_names_a_reader_that_refuses_a_record_being_written(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("spark_impl.reconfig.control.SETTLE_S", 0.0)
    found = fries_control_check.control_problem()
    assert found is not None and "truncated control record" in found


def test_a_reader_that_started_on_no_record_follows_three_records(tmp_path: Path) -> None:
    """The same bug for a task whose batch was planned before any control record (seq 0)."""
    reader = ControlReader(str(tmp_path))
    reader.start(0)
    for j in (1, 2, 3):
        write_control(control_log(str(tmp_path)), [_entry(j)])
    reader.poll(force=True)
    entry = reader.entry(0)
    assert entry is not None and entry.j == 3


def test_the_control_check_names_a_reader_that_retries_a_torn_record_for_ever(monkeypatch: pytest.MonkeyPatch) -> None:
    """control.py ``time.monotonic() > deadline`` -> ``==``: a record that stays truncated is
    read again for ever (never reached by a run: records are whole on a local disk)."""
    from spark_impl.records import CorruptStateError

    def read_settled(self: ControlReader, seq: int) -> object:
        for _ in range(800):  # "for ever" (4 s > the check's 3 s), bounded so the thread ends
            try:
                return self.log.read(seq)
            except CorruptStateError as error:
                if not error.why.startswith("truncated"):
                    raise
                time.sleep(0.005)
        return None

    monkeypatch.setattr(ControlReader, "_read_settled", read_settled)
    found = fries_control_check.control_problem()
    assert found is not None and "stays truncated" in found


def test_the_control_check_names_a_reader_on_no_record_that_misses_the_first_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """control.py 121 ``while self.log.exists(self.seq + 1)`` ->
    ``self.seq + 0``: a reader that started on no record (seq 0) looks for record 0, so the
    job's first request (record 1) reaches it only once a second record exists."""
    original = ControlReader.poll

    def poll(self: ControlReader, force: bool = False) -> None:
        if self.seq == 0 and not self.log.exists(2):  # what the changed reader does on a view of no record
            return
        original(self, force)

    monkeypatch.setattr(ControlReader, "poll", poll)
    found = fries_control_check.control_problem()
    assert found is not None and "misses the job's first request" in found


def test_the_control_check_names_a_delay_hook_that_ignores_up_to_hi(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real bug (fixed): the "no delay" shortcut tested ``fcm_lo`` instead of
    ``fcm_hi``, so ``fcm_delay = [0, hi]`` delivered every FCM at once."""
    from spark_impl.reconfig.control import ControlEntry

    original = ControlEntry.delay_s

    def delay_s(self: ControlEntry, obj: str) -> float:
        return 0.0 if self.fcm_lo <= 0 else original(self, obj)

    monkeypatch.setattr(ControlEntry, "delay_s", delay_s)
    found = fries_control_check.control_problem()
    assert found is not None and "[0, 50] ms" in found


@pytest.mark.parametrize("old, new, words", [
    # the throttle never lets a plain poll through; a forced poll within poll_s reads nothing
    ("if not force and now", "if not force or now", "a forced poll within the reader's throttle"),
    # the throttle inverted: a plain poll reads only within poll_s of the last check
    ("now - self._checked < self.poll_s", "now - self._checked > self.poll_s", "a plain poll right after"),
    # one record per poll: the newest of two new records is missed
    ("while self.log.exists(self.seq + 1):", "if self.log.exists(self.seq + 1):", "after two new records"),
])
def test_the_control_check_names_a_broken_poll_throttle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, old: str,
                                                        new: str, words: str) -> None:
    """The suite's runs and the checks above poll with ``force=True`` only, so these need
    their own check (control.py ``ControlReader.poll``)."""
    from support.source_rewrite import rewritten_method

    monkeypatch.setattr(ControlReader, "poll", rewritten_method(ControlReader, "poll", old, new))
    found = fries_control_check._throttle_problem(str(tmp_path))
    assert found is not None and words in found, found
    assert fries_control_check.control_problem() is not None
