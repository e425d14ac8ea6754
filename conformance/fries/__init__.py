"""The Fries family of the differential suite (serializable reconfigurations, Fries Alg. 1-4).

* :mod:`.cases` - generators, targeted sections, shrink moves and the scenario codec;
* :mod:`.outcome` - one run of one scenario in engine-neutral form (what the oracles read);
* :mod:`.oracles` - schedule, placement, serializable (C1), FIFO channels (C2), outputs (C3),
  exactly-once, states, and spark_impl's MCS against the spec's;
* :mod:`.retention` - the storage oracle: record logs pruned, retention kept;
* :mod:`.engines` - one module per way into the engine under test;
* :mod:`.driver_oracles` - oracles judged on the driver without a Spark job: the MCS of drawn
  shapes against the spec's, the stable hash and routing against their documented definition;
* :mod:`.config` and :mod:`.suite` - the run's configuration and the orchestration.

Imports nothing from the other families.
"""
