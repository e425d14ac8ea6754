"""The O+ family of the differential suite (every run equals the sequential reference, STRETCH).

* :mod:`.cases` (random scenarios, shrink moves) and :mod:`.edges` (cases at the operators'
  edges: window ends, purges, join bands, rescales);
* :mod:`.oracles` - outputs, emission round and instance, engine;
* :mod:`.engines` - one module per way into the engine under test;
* :mod:`.checks` - the suite's further checks (seeded faults, the live front end's contracts and
  commits, handovers, model promises, state shapes, the stand-in runs);
* :mod:`.suite` - orchestration only.

Imports nothing from the other families.
"""
