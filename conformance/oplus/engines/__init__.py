"""The ways into the O+ engines under test, one module per way in: the reference SN and elastic
VSN executions (:mod:`.reference`), spark_impl's batch executor (:mod:`.batch`) and its
Structured Streaming front end (:mod:`.live`).

Not here: oracles (:mod:`conformance.oplus.oracles`) and suite orchestration.
"""
