"""The DGS family of the differential suite (every run equals ``spec(sort(u))``, DGS Thm 3.5).

* :mod:`.cases` - generators, shrink moves and the case codec;
* :mod:`.oracles` - engine, outputs, processed, state;
* :mod:`.engines` - one module per way into the engine under test;
* :mod:`.plan_oracles` - the oracles of the driver's plans (release order, plans);
* :mod:`.suite` - orchestration only.

Imports nothing from the other families.
"""
