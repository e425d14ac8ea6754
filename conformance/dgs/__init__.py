"""The DGS family of the differential suite (every run equals ``spec(sort(u))``, DGS Thm 3.5).

* :mod:`.cases` - generators, shrink moves and the case codec;
* :mod:`.oracles` - engine, outputs, processed, state;
* :mod:`.engines` - one module per way into the engine under test;
* :mod:`.checks` - the suite's further checks (one-worker plans, a user error, plans, release
  order, the stand-in runs, the live front end's contracts);
* :mod:`.suite` - orchestration only.

Imports nothing from the other families.
"""
