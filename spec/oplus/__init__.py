"""STRETCH's generalized windowed operator O+ (paper 004, §2-5), as an executable document.

Modules, in reading order:

* :mod:`spec.oplus.windows` - window instances [l*WA, l*WA + WS), earliest/latest window of a
  tuple, THE expiry rule (``l + WS <= W``) and output timestamps (the right boundary);
* :mod:`spec.oplus.model` - tuples, window sets, the operator O+(WA, WS, I, f_MK, WT, S, f_mu,
  f_U, f_O, f_S) with the defaults of Table I;
* :mod:`spec.oplus.watermarks` - Def. 2 (watermark), Def. 3 (ready tuples, implicit
  watermarks), explicit watermarks, and the delivery contract of the tuple buffer (Def. 6);
* :mod:`spec.oplus.semantics` - the declarative meaning of O+ and correctness (Def. 1);
* :mod:`spec.oplus.instances` - A, J, A+, J+ defined directly, for Theorem 2;
* :mod:`spec.oplus.scenario` - the language-neutral scenario format and operator catalogue
  (the contract shared with ``spark_impl.oplus``).

Interpretation choices are listed in each module and in ``docs/oplus.md``.
"""
