"""Reference executors of STRETCH's O+: sequential, shared-nothing (Alg. 1-2) and virtual
shared-nothing with elastic reconfiguration (Alg. 3-6), the tuple buffer TB (Def. 6) and the
shipped operators (:mod:`reference.oplus.operators`). Verified against :mod:`spec.oplus`."""
