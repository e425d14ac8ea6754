"""The Fries suite's cases: hypothesis generators of scenarios (:mod:`.scenarios`), targeted
timing, stream and alignment shapes (:mod:`.timing`, :mod:`.streams`, :mod:`.alignment`), the
shrink moves (:mod:`.moves`) and the scenario JSON codec (:mod:`.codec`).

Not here: running or judging a case (engines, oracles, the suite).
"""
