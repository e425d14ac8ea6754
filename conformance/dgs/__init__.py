"""The DGS family of the differential suite: cases (:mod:`.cases`), engines (:mod:`.engines`),
oracles, further checks (:mod:`.checks`) and the suite (:mod:`.suite`).

Imports nothing from the other families.
"""
