"""The O+ suite's further checks beyond the engine-vs-oracle loop: seeded faults and handovers.

Not here: the differential loop itself (:mod:`conformance.oplus.suite`).
"""
