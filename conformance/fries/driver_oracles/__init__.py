"""The Fries suite's oracles that judge ``spark_impl`` on the driver, without a Spark job, where a
run's outputs cannot show a departure: the executor's MCS against the spec's for drawn shapes
(:mod:`.mcs`, Fries Alg. 1-4 and §7.2) and the stable hash and routing against their documented
definition and published vectors (:mod:`.stable_hash`). Both run before the cases when the
engine is ``spark``.

Not here: the oracles judging a run (:mod:`conformance.fries.oracles`), the differential loop
(:mod:`conformance.fries.suite`).
"""
