"""docs/production/operating.md, "Status": a Fries request accepted but not committed when its
driver stopped is ``lost`` in the status read from the checkpoint alone - also when the driver
was killed after it made the request (the control record is written) and before anything else
of the request reached storage (no request file, no commit)."""

from __future__ import annotations

import time
from pathlib import Path

from spark_impl.reconfig.control import ControlEntry, control_log, write_control
from spark_impl.status import read_status


def test_a_request_made_then_lost_to_a_kill_before_its_request_file_is_listed_as_lost(tmp_path: Path) -> None:
    executor = tmp_path / "executor"
    executor.mkdir()
    write_control(control_log(str(executor)), [ControlEntry(0, 1, 0, time.time(), 0, 0.0, 0.0, 0)])
    status = read_status(str(tmp_path))
    assert status.front_end == "fries" and status.committed_batch == -1
    assert [(r.request, r.state) for r in status.requests] == [("R1", "lost")], status.requests


def test_a_checkpoint_without_requests_lists_none(tmp_path: Path) -> None:
    (tmp_path / "executor").mkdir()
    assert read_status(str(tmp_path)).requests == ()
