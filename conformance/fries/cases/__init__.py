"""The Fries suite's cases: hypothesis generators of scenarios (:mod:`.scenarios`), targeted
timing, stream and alignment shapes (:mod:`.timing`, :mod:`.streams`, :mod:`.alignment`), the
suite's sections and the transformations every drawn case goes through (:mod:`.sections`), the
shrink moves (:mod:`.moves`) and the scenario JSON codec (:mod:`.codec`).

Not here: running or judging a case (engines, oracles, the suite).
"""
