"""The Fries suite's further checks beyond the engine-vs-oracle loop: Spark-free checks of
``spark_impl``'s Fries internals (driver, control channel, record logs, storage, sources, keys,
refusals, the pure-Python stand-in runs), run by :mod:`.contracts`, and the MCS check.

Not here: the differential loop itself (:mod:`conformance.fries.suite`).
"""
