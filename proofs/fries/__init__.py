"""Fries (PVLDB 16(2)) lemmas and theorems on symbolic DAGs."""
