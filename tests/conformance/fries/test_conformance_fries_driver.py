"""The Fries driver's own promises on a pure-Python Spark (:mod:`conformance.fries.checks.driver`):
they hold on the executor, and each one-line bug of ``driver.py`` that the Spark runs cannot see is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.fries.checks import driver as fries_driver_check
from spark_impl.reconfig import driver


def test_the_driver_check_passes_on_the_executor() -> None:
    assert fries_driver_check.driver_problem() is None


@pytest.mark.parametrize("name, old, new, words", [
    # the rollback of a failed transformation reloads the first commit's state (offset: the last's)
    ("_absorb", "kept\n            self._base[s] = st.live.history[-1]",
     "kept\n            self._base[s] = st.live.history[0]", "the job rolled back after commits [1, 2, 3]: "),
    # the reported delay: the first switch, in seconds, the heads' last switch
    ("_absorb", "(max(applied)", "(min(applied)", "reported delays"),
    ("_absorb", "- a.issued) * 1000.0", "- a.issued)", "reported delays"),
    ("_absorb", "for o in a.reconfigured]", "for o in a.heads]", "reported delays"),
    # submit: made at once while a batch runs, queued between batches
    ("submit", "if self.running:", "if not self.running:", "R1, submitted between batches, was made at once"),
    ("submit", "if self.running:", "if False:", "R3, submitted while batch"),
    # user requests block commits until done
    ("submit", "self._make(s, request, self.g, user=True)", "self._make(s, request, self.g)",
     "R3, a user request, was made with Active.user False"),
    ("_plan", "self._user_made.add(s)", "pass", "R1, a user request, was made with Active.user False"),
    ("step", "self._user_made.clear()", "pass", "R2, a planned request, was made with Active.user True"),
    ("_absorb", "(a.user or not set(a.heads)", "(not set(a.heads)", "epoch scheduler: batch 2 was committed"),
    # validation dry-runs the first commit's states
    ("_committed_states", "history[-1]", "history[0]", "the dry run uses the last committed state"),
    # a resume after commits reuses the crashed batch's number
    ("__init__", "max(last, self._last_batch_on_disk()) + 1", "last + 1", "the next batch is 3, not 4"),
    # default partitions
    ("__init__", "max(1, int(self.sc.defaultParallelism))", "min(1, int(self.sc.defaultParallelism))",
     "defaultParallelism 2 with no partitions argument runs on 1 partitions, not 2"),
    ("__init__", "max(1, int(self.sc.defaultParallelism))", "int(self.sc.defaultParallelism)",
     "defaultParallelism 0 with no partitions argument runs on 0 partitions, not 1"),
])
def test_the_driver_check_names_a_broken_promise(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str,
                                                 words: str) -> None:
    from support.source_rewrite import rewritten_method

    monkeypatch.setattr(driver.Executor, name, rewritten_method(driver.Executor, name, old, new))
    found = fries_driver_check.driver_problem()
    assert found is not None and words in found, found


def test_the_failing_transformation_is_the_identity_until_armed() -> None:
    """The rollback part's request passes the driver's dry run (unarmed) and raises in tasks."""
    assert fries_driver_check._fails_in_tasks(7) == 7
    fries_driver_check._armed.set()
    try:
        with pytest.raises(RuntimeError, match="fails only inside a task"):
            fries_driver_check._fails_in_tasks(7)
    finally:
        fries_driver_check._armed.clear()


def test_a_users_request_lost_to_a_planned_one_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real bug (fixed in the driver): a user's ``submit`` while the batch that
    makes a planned request ran, before the driver made it, was accepted and made as R1, then
    overwritten by the planned request made as R2 - the user's request was lost."""
    from support.source_rewrite import rewritten_method

    monkeypatch.setattr(driver.Executor, "submit", rewritten_method(driver.Executor, "submit", " or s in self._making", ""))
    found = fries_driver_check.driver_problem()
    assert found is not None and "while batch 1 was making the planned R1 was answered None" in found


@pytest.mark.parametrize("new", ["if plan.g == entry.epoch_batch:", "if plan.g <= entry.epoch_batch:"])
def test_an_epoch_switch_lost_to_a_restart_is_named(monkeypatch: pytest.MonkeyPatch, new: str, tmp_path: Path) -> None:
    """``plan.g >= entry.epoch_batch`` -> ``==`` or
    ``<=`` (the Spark run times out): after a restart in the switch batch the objects never switch."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import task

    monkeypatch.setattr(task._Stage, "_object", rewritten_method(task._Stage, "_object", "if plan.g >= entry.epoch_batch:", new))
    assert fries_driver_check.driver_problem() is not None
    found = fries_driver_check._epoch_restart_problem(str(tmp_path))
    assert found is not None and "an epoch job restarted in the batch of its switch" in found and "did not finish" in found
