"""DGS example programs shipped with streamproof (see docs/dgs.md).

Each module is a plain user program: it imports only the standard library and
``hypothesis.strategies`` - never streamproof - exactly like a user's file given to
``streamproof check-dgs FILE.py:NAME``.

Consistent: ``key_counter.py:KeyCounter`` (DGS Fig. 1), ``windowing.py:EventWindow``
(§4.1 event-based windowing), ``page_view.py:PageViewJoin`` (§4.1 page-view join),
``fraud_detection.py:FraudDetection`` (§4.1), ``windowing_typed.py:TypedWindow`` (the richer
multi-state-type form).

Deliberately inconsistent (used by the tests), each next to the program it breaks:
``key_counter.py:DuplicatingCounter`` (fork copies counts to both sides: C1, C2),
``key_counter.py:IndependentResetCounter`` (declares ``r(k)`` independent of ``i(k)``: C1, C3),
``windowing.py:MaxWindow`` (join takes the max: C1, C2), ``windowing.py:HalvingWindow``
(the literal §4.4 fork that always halves the sum: C1), ``fraud_detection.py:ForgetfulFraud``
(fork resets the right side's model: C1 on the right wire only).
"""
