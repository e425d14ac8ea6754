"""The DGS suite's further checks beyond the engine-vs-oracle loop: one-worker plans, a user error
in a task, plan building and validation, the driver's release order, the pure-Python stand-in
runs and the live front end's contracts.

Not here: the differential loop itself (:mod:`conformance.dgs.suite`).
"""
