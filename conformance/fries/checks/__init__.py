"""The Fries suite's further checks beyond the engine-vs-oracle loop: the MCS of drawn shapes
against the spec's (:mod:`.mcs`) and the Spark-free checks of ``spark_impl``'s Fries internals
run by :mod:`.contracts` (driver, control channel, record logs, storage, sources, keys,
refusals, the live front end, runs on the pure-Python Spark stand-in; the jobs they build and
judge: :mod:`.chains`).

Not here: the differential loop itself (:mod:`conformance.fries.suite`).
"""
