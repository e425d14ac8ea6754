"""Cutting an RDD's lineage so that it survives the loss of an executor.

The round-based executors (O+, DGS) keep their state in an RDD whose lineage they cut every
round. ``localCheckpoint`` keeps the only copy in the executors' block managers: when an
executor dies (kill -9, a lost worker, a heartbeat timeout) its blocks are gone and the next
round fails with ``CHECKPOINT_RDD_BLOCK_ID_NOT_FOUND`` - found by ``streamproof nemesis`` on
the local standalone cluster. When the SparkContext has a checkpoint directory
(``sc.setCheckpointDir``, storage every executor and the driver share, as on any cluster),
:func:`cut_lineage` checkpoints reliably there instead: the state is written to files, read
back from them after an executor loss. Without one (``local[*]``: one JVM, nothing to lose
alone) it keeps the cheaper local checkpoint.
"""

from __future__ import annotations

from typing import Any


def cut_lineage(rdd: Any) -> Any:
    """Mark ``rdd`` cached and checkpointed (reliably when the context has a checkpoint
    directory, module docstring); the next action materializes it. ``persist`` first: PySpark
    pipelines Python functions into their parent unless the RDD is marked cached, which would
    bypass the checkpoint."""
    rdd.persist()
    if rdd.context.getCheckpointDir():
        rdd.checkpoint()
    else:
        rdd.localCheckpoint()
    return rdd
