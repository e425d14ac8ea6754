"""``streamproof mcs DAG.json --reconfigure A,B [--operator NAME] [--no-prune] [--json]``.

Prints the minimal covering sub-DAG Fries synchronises a reconfiguration on (Fries Def. 5.4,
Alg. 1-4): its components with their head operators. ``--json`` prints the contract
``{"components": [[names], ...]}`` (each component sorted, components sorted by first name).
Pruning (Alg. 4) is on by default; ``--no-prune`` turns both rules off, the two
``--no-prune-*`` options one rule each. Formats: docs/fries.md.

Naming the reconfigured operators: ``--reconfigure A,B`` splits on commas and strips spaces
(the contract); it may be repeated. ``--operator NAME`` (repeatable) names one operator
literally, for names that contain a comma or start or end with a space. Both may be mixed;
at least one is needed.
"""

from __future__ import annotations

import argparse

from spec.errors import InputError, cut
from spec.jsonio import load_json
from streamproof.output import print_json

SHOWN = 5
"""Operators named in an unknown-operator error (each cut to 40 characters)."""


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``mcs`` sub-command."""
    parser = subparsers.add_parser(
        "mcs",
        help="minimal covering sub-DAG of a reconfiguration (Fries Alg. 1-4)",
        description="Compute the MCS components Fries synchronises a reconfiguration on.",
    )
    parser.add_argument("dag", metavar="DAG.json", help="the dataflow (see docs/fries.md)")
    parser.add_argument("--reconfigure", action="append", default=[], metavar="A,B",
                        help="comma-separated names of the reconfigured operators (may be "
                        "repeated)")
    parser.add_argument("--operator", action="append", default=[], metavar="NAME",
                        help="one reconfigured operator, named literally (for names with a "
                        "comma or surrounding spaces; may be repeated)")
    parser.add_argument("--no-prune", action="store_true",
                        help="turn off both pruning rules of Alg. 4")
    parser.add_argument("--no-prune-edgewise", action="store_true",
                        help="turn off the edge-wise one-to-one pruning rule")
    parser.add_argument("--no-prune-uniqueness", action="store_true",
                        help="turn off the uniqueness pruning rule")
    parser.add_argument("--one-to-one", action="store_true",
                        help="Alg. 2 only: no one-to-many ancestors (unsafe with one-to-many "
                        "operators; for comparison)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def parse_names(text: str) -> list[str]:
    """``"A, B"`` -> ``["A", "B"]``; empty names are an InputError."""
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise InputError(f"empty operator name in {cut(repr(text))}", "--reconfigure")
    return names


def reconfigured(args: argparse.Namespace) -> list[str]:
    """The reconfigured operators named by ``--reconfigure`` and ``--operator``."""
    literal: list[str] = list(args.operator)
    names = [name for text in args.reconfigure for name in parse_names(text)] + literal
    if not names:
        raise InputError("name the reconfigured operators with --reconfigure A,B or "
                         "--operator NAME", "--reconfigure")
    return names


def _listed(names: list[str]) -> str:
    shown = ", ".join(cut(repr(n), 40) for n in names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN:,} more" if len(names) > SHOWN else "")


def run(args: argparse.Namespace) -> int:
    """Compute and print the MCS; 0 on success, 2 (InputError) on bad input."""
    from reference.fries.mcs import fries_mcs  # noqa: PLC0415 - loaded when the command runs, not by --help
    from spec.fries.dataflow import Dataflow  # noqa: PLC0415 - loaded when the command runs, not by --help

    names = reconfigured(args)
    flow = Dataflow.from_json(load_json(args.dag), args.dag)
    unknown = [n for n in dict.fromkeys(names) if n not in flow]
    if unknown:
        known = _listed(list(flow.names)) if flow.names else "no operators"
        raise InputError(
            f"unknown reconfigured operator{'s' if len(unknown) > 1 else ''} "
            f"{_listed(unknown)} ({cut(args.dag, 80)} has {known})", "--reconfigure")
    mcs = fries_mcs(
        flow, names,
        prune_edgewise=not (args.no_prune or args.no_prune_edgewise),
        prune_uniqueness=not (args.no_prune or args.no_prune_uniqueness),
        one_to_many=not args.one_to_one,
    )
    if args.json:
        print_json(mcs.to_json())
        return 0
    pruning = "off" if args.no_prune else (
        f"edge-wise {'off' if args.no_prune_edgewise else 'on'}, "
        f"uniqueness {'off' if args.no_prune_uniqueness else 'on'}")
    count = len(mcs.components)
    print(f"MCS for reconfiguring {', '.join(sorted(set(names)))} "
          f"(pruning: {pruning}): {count} component{'s' if count != 1 else ''}")
    for number, component in enumerate(mcs.components, 1):
        edges = sorted(e for e in mcs.edges if e[0] in component)
        print(f"  component {number}: {', '.join(sorted(component))}")
        print(f"    heads (receive the FCM): {', '.join(sorted(mcs.heads(component)))}")
        print(f"    edges (carry the epoch marker): "
              f"{', '.join(f'{a} -> {b}' for a, b in edges) or 'none'}")
    added = sorted(mcs.seeds - set(names))
    if added:
        print(f"  earliest one-to-many ancestors synchronised from: {', '.join(added)}")
    return 0
