"""``streamproof fuse JOB.json [--score comm|pa] [--json]``: Enorm's automatic fusion (Alg. 1).

Reads a job (operators with kinds and partition attributes, attribute domains, edge rates;
format in :mod:`spec.fusion.job_json` and docs/klink.md), fuses it with the efficient Alg. 1 of
:mod:`reference.fusion.greedy` and prints the components: their operators, the partition
attributes they share (``PA(C)``), how far each can be parallelized (``PA^c(C)``), whether it
is stateless / flexible (Table 1), and the inter-component traffic fusion leaves. The result is
checked against §4.4.1's validity conditions before it is printed (a failure there would be a
streamproof bug, exit 3). ``--json`` prints::

    {"score": "comm", "components": [{"operators": [...], "pa": [...],
      "max_parallelism": 5000 | null, "stateless": bool, "flexible": bool}, ...],
     "total_traffic": x, "inter_component_traffic": y, "inter_component_percent": z}

``max_parallelism`` is ``null`` when unbounded. Exit 0 on success, 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from spec.jsonio import load_json
from streamproof.output import print_json


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``fuse`` sub-command."""
    parser = subparsers.add_parser(
        "fuse",
        help="Enorm's automatic operator fusion (Alg. 1) of a job",
        description="Fuse a job's operators into components (Enorm Alg. 1) and print them.",
    )
    parser.add_argument("job", metavar="JOB.json", help="the job (see docs/klink.md)")
    parser.add_argument("--score", choices=("comm", "pa"), default="comm",
                        help="comm: fuse the heaviest edge first (the paper's default); "
                        "pa: the most shared partition attributes first (default: comm)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def fusion_report(job: Any, components: list[frozenset[str]], score: str) -> dict[str, Any]:
    """The ``--json`` document for ``components`` of ``job``."""
    from spec.fusion.components import (  # noqa: PLC0415 - loaded when the command runs, not by --help
        component_pa,
        inter_component_percent,
        inter_component_traffic,
        is_flexible,
        is_stateless,
        max_parallelism,
    )

    order = {name: k for k, name in enumerate(job.names)}
    rows = []
    for component in components:
        width = max_parallelism(job, component)
        rows.append({
            "operators": sorted(component, key=order.__getitem__),
            "pa": sorted(component_pa(job, component)),
            "max_parallelism": None if width == math.inf else int(width),
            "stateless": is_stateless(job, component),
            "flexible": is_flexible(job, component),
        })
    return {
        "score": score,
        "components": rows,
        "total_traffic": job.total_traffic(),
        "inter_component_traffic": inter_component_traffic(job, components),
        "inter_component_percent": inter_component_percent(job, components),
    }


def run(args: argparse.Namespace) -> int:
    """Fuse and print; 0 on success, 2 (InputError) on bad input."""
    from reference.fusion.greedy import automatic_fusion  # noqa: PLC0415 - loaded when the command runs, not by --help
    from spec.fusion.components import is_valid_fusion  # noqa: PLC0415 - loaded when the command runs, not by --help
    from spec.fusion.job_json import job_from_json  # noqa: PLC0415 - loaded when the command runs, not by --help

    job = job_from_json(load_json(args.job), args.job)
    components = automatic_fusion(job, args.score)
    if not is_valid_fusion(job, components):
        raise AssertionError("Alg. 1 produced an invalid fusion (a streamproof bug)")
    report = fusion_report(job, components, args.score)
    if args.json:
        print_json(report)
        return 0
    count = len(components)
    print(f"{len(job.names)} operators fused into {count} component{'s' if count != 1 else ''} "
          f"(score {args.score}); {report['inter_component_percent']:.1f}% of the traffic "
          f"({report['inter_component_traffic']:g} of {report['total_traffic']:g} tuples/s) "
          f"crosses components")
    for number, row in enumerate(report["components"], 1):
        width = row["max_parallelism"]
        kind = ("stateless" if row["stateless"] else "stateful") + ", " + (
            "flexible" if row["flexible"] else "rigid")
        print(f"  component {number}: {', '.join(row['operators'])}")
        print(f"    partitioned on {{{', '.join(row['pa'])}}}, up to "
              f"{'unbounded' if width is None else width} node{'s' if width != 1 else ''}; "
              f"{kind}")
    return 0
