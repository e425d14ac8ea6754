"""streamproof's executable specification.

Every module here states definitions from one of the five papers as small, declarative,
obviously-right Python, citing the paper's numbering (e.g. "Fries Def. 4.8"). Nothing here
is optimised: ``reference/`` holds the efficient implementations, verified against this
package by property tests.

Papers: Fries (``spec.fries``), DGS (``spec.dgs``), STRETCH O+ (``spec.oplus``),
Enorm (``spec.enorm``), Klink (``spec.klink``).
"""
