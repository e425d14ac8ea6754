"""``streamproof simulate SIMULATOR ...``: run one of the simulators.

Each simulator is a module of :mod:`streamproof.simulators` defining
``register(subparsers)``; it is discovered by name, so adding a simulator (a new positional
after ``simulate``) never touches this file. ``streamproof simulate`` alone is a one-line
usage error naming the simulators (exit 2).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any

import streamproof.simulators as simulators_package
from spec.errors import InputError


def register(subparsers: Any) -> None:
    """Add ``simulate`` and one nested positional per simulator module."""
    parser = subparsers.add_parser(
        "simulate",
        help="run a simulator (klink: scheduling policies for windowed queries)",
        description="Run one of streamproof's deterministic simulators.",
    )
    nested = parser.add_subparsers(dest="simulator", metavar="SIMULATOR", parser_class=type(parser))
    for info in sorted(pkgutil.iter_modules(simulators_package.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{simulators_package.__name__}.{info.name}").register(nested)

    def missing(args: argparse.Namespace) -> int:
        raise InputError(f"expected a SIMULATOR ({', '.join(nested.choices)}; see "
                         f"'{parser.prog} --help')")

    parser.set_defaults(handler=missing)
