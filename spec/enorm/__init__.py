"""Enorm (paper 002): partial windows (panes) computed once and consolidated into every
overlapping window, efficient consolidation (§6.1) and instant migration of key groups.

* :mod:`spec.enorm.panes` - windows as unions of panes, compute/consolidate over a merge
  monoid, and the direct (pane-free) window result they must equal;
* :mod:`spec.enorm.consolidation` - building complete windows from the fewest partials
  (smaller complete windows or panes), by exhaustive search;
* :mod:`spec.enorm.migration` - key groups, assignments changing at modification
  punctuations, and what consolidate must produce whatever the assignment history.
"""
