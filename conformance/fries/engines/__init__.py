"""The ways into the Fries engines under test, one module per way in: the reference simulator
(:mod:`.reference`), spark_impl's executor (:mod:`.batch`) through its entry paths
(:mod:`.paths`: the harness-driven ``Executor.step`` path :mod:`.stepped`, the sink path
:mod:`.sink`, one Structured Streaming query :mod:`.live_query`), the Structured Streaming front
end as an engine of its own (:mod:`.live`), and the catalogue of engines by name
(:mod:`.catalogue`).

Not here: oracles (:mod:`conformance.fries.oracles`) and suite orchestration.
"""
