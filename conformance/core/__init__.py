"""The suite-independent core of the harness; it imports nothing else from ``conformance``.

Here: the result types every suite reports (:mod:`.results`), drawing cases reproducibly
(:mod:`.cases`), crash and hang isolation (:mod:`.crashes`, :mod:`.watchdog`), greedy shrinking
(:mod:`.shrink`), the saved-case file format (:mod:`.saved_case`), the output matcher
(:mod:`.matcher`), the shared SparkSession (:mod:`.session`), the refusal helper
(:mod:`.refusals`) and the progress bar (:mod:`.progress`).

Not here: anything that knows a family (Fries, DGS, O+), an engine or an oracle.
"""
