"""An explicit-state model checker of the Fries protocol (Fries Alg. 2-4, the epoch scheduler
EBR and the naive FCM scheduler): every small dataflow, every interleaving of one
reconfiguration with source tuples, FIFO channel deliveries, FCM deliveries, epoch markers
and alignment, breadth first; every complete schedule is checked for conflict-serializability
by the reference checker. It mechanizes the reduction the Z3 rows of ``streamproof prove``
argue by hand ("every interleaving reduces to tuples entering the MCS through different
entries"); see docs/proofs.md, section "Model checking the protocol".

It lives in ``proofs/`` (not ``reference/``) because it is a proof tool: it quantifies over
every DAG and every interleaving up to a bound, and it imports the reference model (the MCS
of :mod:`reference.fries.mcs`, the checker of :mod:`reference.fries.serializability`), which
``reference/`` must not do to itself in the layering.

Modules: :mod:`.configs` (the dataflows, up to isomorphism), :mod:`.control` (what each
scheduler does: FCM targets, alignment inputs, marker outputs), :mod:`.system` (the
transition system), :mod:`.search` (breadth-first search of one configuration),
:mod:`.run` (every configuration, per scheduler).
"""
