"""The ways into the engines under test for the Fries suite, one module per way in: the engine
catalogue (:mod:`.catalogue`), the executor's entry paths (:mod:`.paths`), the harness-driven
``Executor.step`` path (:mod:`.stepped`), the sink path (:mod:`.sink`) and the Structured
Streaming front end (:mod:`.live`).

Not here: oracles (:mod:`conformance.fries.oracles`) and suite orchestration.
"""
