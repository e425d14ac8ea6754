"""``prepare`` of tools/mutation.py restricted to ``spark_impl/dgs`` and ``spark_impl/oplus``
(the DGS and O+ part of the mutation score; the live front ends ``streaming*.py`` are left
out: :func:`in_scope`).

Same snapshot (``git archive HEAD``), same cosmic-ray mutants and ids, same coverage
measurement, but only the mutants of the two packages and only the ``dgs`` and ``oplus``
suites' coverage (the fries suite never executes these packages; skipping its coverage run
saves ~10 minutes). Then use tools/mutation.py's ``run`` / ``summary`` / ``one`` on the
same run directory as usual::

    python tools/mutation_dgs_oplus.py --run /tmp/mutation-dgs-oplus [--no-coverage]
    python tools/mutation.py run --run /tmp/mutation-dgs-oplus --sample 40 --seed 0
    python tools/mutation.py summary --run /tmp/mutation-dgs-oplus
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutation  # noqa: E402 - tools/mutation.py, next to this script

PACKAGES = ("spark_impl/dgs/", "spark_impl/oplus/")
SUITES = ("dgs", "oplus")


def in_scope(module: str) -> bool:
    """The batch executors of the two packages: not the live front ends ``streaming*.py``
    (their conformance paths are not part of the default dgs / oplus suites)."""
    return module.startswith(PACKAGES) and not Path(module).name.startswith("streaming")


def prepare(run: Path, measure: bool = True) -> None:
    """Snapshot, the two packages' mutants, and the dgs / oplus suites' coverage (``measure``
    False: no coverage run, every mutant goes to its own package's suite)."""
    run.mkdir(parents=True, exist_ok=True)
    commit = mutation.snapshot(run)
    mutants = [m for m in mutation.enumerate_mutants(run / "tree") if in_scope(m["module"])]
    (run / "mutants.json").write_text(json.dumps({"commit": commit, "mutants": mutants}), encoding="utf-8")
    print(f"snapshot of {commit[:10]}: {len(mutants)} mutants in spark_impl/dgs and spark_impl/oplus", flush=True)
    covered: dict[str, dict[str, list[int]]] = {"fries": {}}
    if not measure:  # every line counts as executed by its own package's suite: no mutant is
        for suite in SUITES:  # skipped as "not covered" (an unexecuted one costs a run, and survives)
            covered[suite] = {m["module"]: list(range(1, 10_000)) for m in mutants
                              if mutation.own_check(m["module"]) == suite}
        (run / "coverage.json").write_text(json.dumps(covered), encoding="utf-8")
        return
    for suite in SUITES:
        out = run / f"coverage-{suite}.json"
        status, seconds, tail = mutation.run_child(run, ["child-check", "--suite", suite, "--coverage-out", str(out)],
                                                   3600)
        print(f"coverage of {suite}: {status} in {seconds:.0f} s", flush=True)
        if status != "pass":
            raise SystemExit(f"the unmutated {suite} check does not pass ({status}):\n{tail}")
        covered[suite] = json.loads(out.read_text(encoding="utf-8"))
    (run / "coverage.json").write_text(json.dumps(covered), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, default=Path("/tmp/mutation-dgs-oplus"))
    parser.add_argument("--no-coverage", action="store_true",
                        help="skip the coverage runs: every mutant runs its own package's suite")
    args = parser.parse_args()
    prepare(args.run, measure=not args.no_coverage)
    return 0


if __name__ == "__main__":
    sys.exit(main())
