"""Where things are, for tests at any depth of the mirrored ``tests/`` tree.

A test module's own ``__file__`` says nothing stable about the repository once tests live in
folders that mirror the sources, so tests name the repository root, the ``tests/`` folder and
the helpers' folder through these constants instead.
"""

from __future__ import annotations

from pathlib import Path

#: the ``tests/`` folder (its ``support/`` package is importable as ``support``)
TESTS = Path(__file__).resolve().parent.parent
#: the repository root (``docs/``, ``examples/``, the packages)
ROOT = TESTS.parent
#: the shared helpers, ``tests/support/``
SUPPORT = TESTS / "support"
