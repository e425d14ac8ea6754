"""The suite-independent core of the harness; it imports nothing else from ``conformance``.

Here: the result types every suite reports (:mod:`.results`), drawing cases reproducibly
(:mod:`.cases`), crash and hang isolation (:mod:`.crashes`, :mod:`.watchdog`), greedy shrinking
(:mod:`.shrink`), the saved-case file format (:mod:`.saved_case`), the output matcher
(:mod:`.matcher`), the shared SparkSession (:mod:`.session`), the product's and Spark's log
levels while the suite runs (:mod:`.product_logs`, :mod:`.spark_logs`), the refusal helper
(:mod:`.refusals`), the progress bar (:mod:`.progress`), the one verdict type every oracle
returns (:mod:`.verdict`), the ``Engine``, ``Oracle`` and ``Suite`` protocols the families
fill (:mod:`.protocols`) and the options of a run (:mod:`.run_config`).

Not here: any family's cases, engines or oracles (Fries, DGS, O+).
"""
