"""The O+ family of the differential suite: cases (:mod:`.cases`, :mod:`.edges`), oracles
(:mod:`.oracles`), engines (:mod:`.engines`), further checks (:mod:`.checks`) and the suite
(:mod:`.suite`).

Imports nothing from the other families.
"""
