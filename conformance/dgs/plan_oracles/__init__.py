"""The DGS suite's oracles of the driver's plans, which differential comparison cannot see (a
wrong plan is wrong for the reference and for Spark alike; a wrong order shows in outputs only
when the two events do not commute): :mod:`.release_order` (oracle ``order``, DGS Thm 3.5) and
:mod:`.plans` (oracle ``plan``, DGS Def. 3.1 and 3.2).

Not here: the oracles of a run (:mod:`conformance.dgs.oracles`), the differential loop
(:mod:`conformance.dgs.suite`).
"""
