"""Regression tests for what ``streamproof nemesis`` found, in the default
run (the shared local SparkSession; the cluster runs are in tests/conformance/cluster/test_nemesis_cluster.py).

Finding 1: the O+ and DGS executors cut their state's lineage with ``localCheckpoint``, so
the state lived only in executors' block managers; after ``kill -9`` of an executor the next
round failed with ``CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND`` (nemesis seed 5, ``--jobs oplus,dgs``).
Here the executor loss is simulated by dropping the RDD's cached blocks (what a dead
executor takes with it); with a checkpoint directory set, the state must still be readable.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterator

import pytest
from spark_impl.lineage import cut_lineage


@pytest.fixture
def checkpoint_dir(spark: Any, tmp_path: Any) -> Iterator[str]:
    """The shared session with a checkpoint directory for one test, unset afterwards (the
    Scala setter: PySpark has no way to unset it, and other tests expect none)."""
    sc = spark.sparkContext
    sc.setCheckpointDir(str(tmp_path))
    yield str(tmp_path)
    getattr(sc._jsc.sc(), "checkpointDir_$eq")(sc._jvm.scala.Option.empty())


@pytest.mark.parametrize("module", ["spark_impl.oplus.driver", "spark_impl.dgs.driver"])
def test_materialized_state_survives_the_loss_of_its_blocks(spark: Any, checkpoint_dir: str, module: str) -> None:
    materialize = getattr(importlib.import_module(module), "_materialize")
    state = materialize(spark.sparkContext.parallelize(range(6), 3).map(lambda x: x * 10))
    state.unpersist(blocking=True)  # the blocks a killed executor held are gone
    assert sorted(state.collect()) == [0, 10, 20, 30, 40, 50]
    assert state.getCheckpointFile() is not None and state.getCheckpointFile().startswith("file:")


def test_without_a_checkpoint_directory_the_local_checkpoint_is_kept(spark: Any) -> None:
    assert not spark.sparkContext.getCheckpointDir()
    state = cut_lineage(spark.sparkContext.parallelize(range(4), 2))
    assert state.count() == 4 and state.getCheckpointFile() is None
    state.unpersist()
