"""The ways into the DGS engines under test, one module per way in: the reference plan executor
(:mod:`.reference`), spark_impl's batch executor (:mod:`.batch`) and its Structured Streaming
front end (:mod:`.live`, with the re-plans it makes mid-stream: :mod:`.replan`).

Not here: oracles (:mod:`conformance.dgs.oracles`) and suite orchestration.
"""
