"""The O+ suite's further checks beyond the engine-vs-oracle loop: the seeded faults.

Not here: the differential loop itself (:mod:`conformance.oplus.suite`).
"""
