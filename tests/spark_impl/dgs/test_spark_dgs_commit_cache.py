"""The live DGS query keeps its newest commit in memory (``DgsStreamingRun.last``: it is the
only writer, so a batch lists nothing on an object store). A batch that dies before its commit
must leave that commit as it is on the store: the mailboxes the batch filled are its own copy.
(Before the copy, a batch killed before its commit left its received events in the remembered
commit's mailbox.) No Spark: the batch releases nothing, so it never reaches a Spark job."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from spec.dgs.loader import load_program

from spark_impl.dgs.streaming import DgsStreamingRun, DriverKilled, LiveJob
from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.dgs.streaming_store import Commit, Store
from spark_impl.dgs.tasks import Layout
from spark_impl.dgs.topology import topology
from support.paths import TESTS

COUNTER = os.path.join(str(TESTS), "support", "dgs_live_programs.py:WordCounter")


class _Rows:
    """A micro-batch's DataFrame as ``_batch`` reads it: ``select(column).collect()``."""

    def __init__(self, rows: list[str]) -> None:
        self.rows = rows

    def select(self, column: str) -> "_Rows":
        return self

    def collect(self) -> list[tuple[str]]:
        return [(r,) for r in self.rows]


def test_a_batch_killed_before_its_commit_leaves_the_remembered_commit_unchanged(tmp_path: Path) -> None:
    program = load_program(COUNTER)
    plan = keyed_plan(program, ("s0", "s1"), 2)
    layout = Layout((COUNTER,), (topology(program, plan),))
    run = DgsStreamingRun(None, Store(str(tmp_path / "dgs")), layout, [program], [LiveJob(COUNTER, plan)], None,
                          False, crash_at="before-commit")
    run.commit(Commit([(COUNTER, plan.to_json(), 0)], mailboxes=[Mailbox()]))
    # s1 has sent nothing yet, so the event waits in the mailbox: no Spark job runs
    rows = _Rows([json.dumps({"stream": "s0", "ts": 1, "event": ["i", "alice"]})])
    with pytest.raises(DriverKilled):
        run.handle(rows, 0, "value")
    remembered: Any = run.committed()
    assert remembered.batch == -1 and remembered.mailboxes[0].buffered == []
    stored = Store(str(tmp_path / "dgs")).read()
    assert stored is not None and stored.mailboxes[0].buffered == [] and stored.batch == -1
