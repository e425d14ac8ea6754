"""The Fries executor after a driver killed while it wrote a commit record (the newest
``progress/`` record left torn, as on a local disk without rename, ``file://`` or HDFS), with
``resume=True``: the restart resumes from the previous commit, never reads the uncommitted
batch's task files (one of them is torn too) and its output equals an uninterrupted run's,
every tuple once (spark_impl.records module docstring)."""

from __future__ import annotations

import json
import os
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spark_impl import records
from spark_impl.reconfig import Executor, collect_results, run_scenarios, scenario_job
from spark_impl.reconfig.storage import batch_dir
from spark_impl.store import Store

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.spark_checks import problems, random_scenario  # noqa: E402

pytestmark = pytest.mark.spark


class Killed(Exception):
    """The driver died mid-write."""


def test_a_crash_while_writing_the_commit_record_resumes_from_the_previous_commit(
        spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = random_scenario(random.Random(99), costly=False)
    (expected,) = run_scenarios(spark, [scenario], "fries", batch_size=5)
    ckpt = str(tmp_path / "ckpt")
    first = Executor(spark, [scenario_job(scenario, batch_size=5)], "fries", ckpt)
    first.step()
    first.step()
    write = records.write_json_record

    def killed(store: Store, name: str, value: Any) -> None:
        if not name.startswith("progress/"):
            return write(store, name, value)
        whole = records.frame(json.dumps(value).encode())
        store.write_once(name, whole[:len(whole) // 2])  # what a killed writer leaves
        raise Killed(name)

    monkeypatch.setattr(records, "write_json_record", killed)
    with pytest.raises(Killed):
        first.step()  # batch 3's tasks ran; its commit record is torn
    monkeypatch.setattr(records, "write_json_record", write)
    progress = sorted(os.listdir(tmp_path / "ckpt" / "progress"))
    assert progress[-1] == "00000000000000000003.rec", progress
    uncommitted = batch_dir(ckpt, 3)
    part = sorted(os.listdir(uncommitted))[0]
    with open(os.path.join(uncommitted, part), "r+b") as handle:  # a torn task file of that batch
        handle.truncate(10)

    second = Executor(spark, [scenario_job(scenario, batch_size=5)], "fries", ckpt, resume=True)
    assert second.g == 4  # batch 3 ran: its number is not reused
    second.run()
    (resumed,) = collect_results(second)
    assert Counter(resumed.outputs) == Counter(expected.outputs)
    assert resumed.states == expected.states and problems(scenario, resumed) == []
    names = os.listdir(tmp_path / "ckpt" / "progress")
    assert "00000000000000000003.rec.torn" in names and "00000000000000000003.rec" not in names
