"""The O+ suite's further checks beyond the engine-vs-oracle loop: seeded faults, the live front
end's contracts and commit bookkeeping, handovers, model promises, state shapes and the live
handler on the pure-Python stand-in.

Not here: the differential loop itself (:mod:`conformance.oplus.suite`).
"""
