"""Enorm operator fusion (Enorm §4.3, §4.4, Table 1, Alg. 1; DEBS 2016).

* :mod:`spec.fusion.job` - operators with partition attributes PA(O) and cardinality PA^c(O),
  the map / compute / consolidate kinds and their properties (Table 1), jobs as DAGs with
  the output rate of every edge;
* :mod:`spec.fusion.components` - components, the validity of a fusion (§4.4.1 conditions 1
  and 2), PA(C), maximum parallelism PA^c(C), flexible / stateless components, and the
  inter-component traffic that fusion minimizes;
* :mod:`spec.fusion.greedy` - Alg. 1 (greedy automatic fusion) literally, with the two scores
  of §4.4.1 (output rate, "score = COMM"; common partition attributes, "score = PA").

Partial windows and migration are ``spec.enorm`` (another area); this package is only fusion.
"""
