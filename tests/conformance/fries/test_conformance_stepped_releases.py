"""The stepped path's announcement check (:class:`conformance.fries.engines.stepped.Releases`):
a request is made while its batch's tasks are running (``driver``: "the batch's requests are
then made while its tuples are being processed"), checked on hand-built task-start markers."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from spark_impl.store import open_store
from conformance.fries.engines.stepped import Releases
from spark_impl.reconfig.task import started_name


def test_a_request_made_without_or_before_its_batchs_task_start_is_named(tmp_path: Path) -> None:
    """A batch that makes a request and marks no task start (the driver's wait times out and
    the request lands after the batch's tuples: a legal run, but not the mid-batch request the
    suite relies on), or a request made before its batch's first task started, is named."""
    store = open_store(str(tmp_path))
    active = SimpleNamespace(j=1, user=False, epoch_batch=4, issued=1000.0)
    ex = SimpleNamespace(g=4, partitions=2, store=store, state=[SimpleNamespace(live=SimpleNamespace(active=active))])
    releases = Releases()
    releases.announced(ex, {})
    assert "no task of that batch marked its start" in releases.problems[0]
    store.write_once(started_name(3, 1, 1), b"")
    marker = store.path(started_name(3, 1, 1))
    os.utime(marker, (999.0, 999.0))
    releases = Releases()
    releases.announced(ex, {})
    assert releases.problems == {}
    os.utime(marker, (1001.0, 1001.0))
    releases.announced(ex, {})
    assert "before the first task of its batch 3 started" in releases.problems[0]


