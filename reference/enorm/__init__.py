"""Reference implementation of Enorm's compute/consolidate with partial windows, efficient
consolidation (§6.1) and instant migration of key groups; verified against :mod:`spec.enorm`."""
