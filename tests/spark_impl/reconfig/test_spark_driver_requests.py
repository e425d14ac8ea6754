"""The Fries executor's driver makes and commits requests as docs/spark.md promises.

Promises no differential run can see, because every run they allow is also a legal run of a
correct executor; each is read here from the driver's own records, with no timing involved:

* a Fries request synchronises the objects of its minimal covering sub-DAG only (the heads
  and the members that align), an epoch request every reconfigured object on its own
  (docs/spark.md, "Schedulers");
* no batch commits while a request still has heads without their FCM (Fries §7.3), and a
  batch's request is made while that batch's tuples are processed (after its first operator
  task started), which is what makes mid-batch races possible (``spark_impl.reconfig.driver``);
* the first attempt of a request is attempt 1 (the stepped engine's adversarial FCM seed is
  drawn for attempts 1 and 2, "attempt + 1" after a restart);
* a completed request's reported delay is a duration of the run, and each batch's Spark job
  is built once (the job for the next batch is built ahead and used).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from spec.fries.scenario import scenario_from_json
from spark_impl.reconfig import Executor, scenario_job
from spark_impl.reconfig.api import collect_results
from spark_impl.reconfig.layout import roles
from spark_impl.reconfig.mcs import object_components
from spark_impl.reconfig.progress import read_progress

pytestmark = pytest.mark.spark


def _probe(tuples: int, at: int = 2, fcm_delay: tuple[float, float] = (0.0, 0.0)) -> dict[str, Any]:
    """A probe-shaped scenario ``S -> X (2 workers) -> Y``, one request at ``at`` updating X
    and Y (X's objects are the component's heads, Y's object a member)."""
    return {
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                                   {"name": "Y", "kind": "one-to-one"}], "edges": [["S", "X"], ["X", "Y"]]},
        "functions": {"X": {"op": "map", "mul": 1, "add": 1}, "Y": {"op": "map", "mul": 2, "add": 0}},
        "parallelism": {"X": 2},
        "sources": {"S": [{"key": k, "value": k} for k in range(tuples)]},
        "reconfigurations": [{"at": at, "updates": {o: {"function": {"op": "map", "mul": 3, "add": 0},
                                                       "state": {"mul": 1, "add": 0}} for o in ("X", "Y")}}],
        "timing": {"fcm_delay": list(fcm_delay)}}


def test_fries_requests_synchronise_the_mcs_objects_only_and_epoch_requests_every_object(
        spark: Any, tmp_path: Path) -> None:
    """Reconfiguring X and Y of ``S -> X (2 workers) -> Y``: under Fries the heads are X#0 and
    X#1 and Y#0 is a member that aligns; under epoch every reconfigured object acts alone."""
    job = scenario_job(scenario_from_json(_probe(4)))
    request = job.planned[0].request
    workers = {name: job.objects(name) for name in job.dataflow.names}
    mcs = object_components(job.dataflow, workers, request.operators)
    mcs_heads = sorted(o for o, r in mcs.items() if r.head)
    everyone = sorted(o for op in ("X", "Y") for o in job.objects(op))
    assert mcs_heads != everyone  # Y's object is a member that aligns, not a head
    made = {}
    for scheduler in ("fries", "epoch"):
        executor = Executor(spark, [job], scheduler, str(tmp_path / scheduler))
        executor._make(0, request, executor.g)
        active = executor.state[0].live.active
        assert active is not None
        made[scheduler] = (active.heads, active.required)
    assert made["fries"] == (mcs_heads, sorted(mcs))
    assert made["epoch"] == ([], sorted(roles(job, 0, request, False)))
    assert sorted(roles(job, 0, request, False)) == everyone


def test_no_commit_before_every_head_has_its_fcm_and_a_request_lands_while_its_batch_runs(
        spark: Any, tmp_path: Path) -> None:
    """No FCM is ever delivered (its delays are 10^8-10^9 ms): the request made in the first
    batch is attempt 1, was made after the batch's first operator task started, and no batch
    commits while it is active, in memory or in the progress record."""
    job = scenario_job(scenario_from_json(_probe(12, at=2, fcm_delay=(1e8, 1e9))), batch_size=2)
    executor = Executor(spark, [job], "fries", str(tmp_path / "run"))
    executor.step()  # ingests tuples 0-1 = ``at``: makes R1 while the batch runs
    active = executor.state[0].live.active
    assert active is not None and active.heads == ["X#0", "X#1"] and not active.switched
    assert active.attempt == 1 and active.j == 1
    made_in = active.epoch_batch - 1
    # the first level's start markers (spark_impl.reconfig.task.mark_started) of that batch
    starts = [m.stat().st_mtime for m in (tmp_path / "run" / "batches" / f"g{made_in:07d}").glob("started-L1-p*")]
    assert starts and min(starts) <= active.issued  # coarse file clocks only round mtimes down
    for _ in range(2):
        executor.step()
    assert executor.state[0].live.active is not None and executor.state[0].live.offset == 6
    assert executor.state[0].committed.active is None and executor.state[0].committed.made == 0
    restored = read_progress(executor.directory)
    assert restored is not None and restored[1][0].active is None


def test_a_reported_reconfiguration_delay_is_a_duration_of_the_run_and_each_batch_job_is_built_once(
        spark: Any, tmp_path: Path) -> None:
    """The delay of a completed request lies within [0, the run's wall time]; the job built
    ahead for the next batch is the one that batch uses (no batch's job is built twice)."""
    job = scenario_job(scenario_from_json(_probe(8, at=2, fcm_delay=(0.0, 5.0))), batch_size=2)
    executor = Executor(spark, [job], "fries", str(tmp_path / "run"))
    build, built = executor._job, []

    def counted(g: int) -> Any:
        built.append(g)
        return build(g)

    executor._job = counted  # type: ignore[method-assign]
    start = time.time()
    executor.run(max_batches=40)
    assert len(built) >= executor.g - 1 and built == sorted(set(built))  # no batch's job built twice
    wall_ms = (time.time() - start) * 1000.0
    (result,) = collect_results(executor)
    assert len(result.delays_ms) == 1 and 0.0 <= result.delays_ms[0] <= wall_ms
