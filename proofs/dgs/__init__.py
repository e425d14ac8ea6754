"""Symbolic proofs of DGS consistency (C1-C3, DGS Def. 2.3) for users' fork/join programs."""
