"""tools/mutation.py's pure helpers: which mutants are equivalent by construction
(inside an annotation, never evaluated under postponed evaluation), which statement a line
belongs to (what coverage records), and the score table."""

from __future__ import annotations

import importlib.util
import json
import sys
import subprocess
import tarfile
from pathlib import Path
from types import ModuleType
from typing import Sequence
from io import BytesIO
from support.paths import ROOT
import pytest
from conformance.core import crashes
from conformance.dgs import oracles as dgs_oracles, suite as dgs_suite
from conformance.oplus import suite as oplus_suite



def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "tools" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_script"] = module
    spec.loader.exec_module(module)
    return module


SOURCE = '''from __future__ import annotations


def f(a: int | None, b: list[int] = []) -> str | None:
    x: dict[str, int | None] = {}
    if (a is not None
            and a > 1):
        return str(a | 1)
    return None
'''


def test_annotations_are_recognised_and_only_with_postponed_evaluation() -> None:
    m = _script()
    assert m.in_annotation(SOURCE, 4, 13)            # int | None of a
    assert m.in_annotation(SOURCE, 4, 47)            # str | None of the return
    assert m.in_annotation(SOURCE, 5, 20)            # int | None in x's annotation
    assert not m.in_annotation(SOURCE, 8, 19)        # a | 1 is code
    assert not m.in_annotation(SOURCE.replace("from __future__ import annotations\n", ""), 4, 13)


def test_continuation_lines_belong_to_their_statement() -> None:
    lines = _script().statement_lines(SOURCE)
    assert lines[7] == 6 and lines[6] == 6 and lines[8] == 8


def test_scope_and_summary(tmp_path: Path) -> None:
    m = _script()
    assert m.in_scope("spark_impl/reconfig/task.py") and not m.in_scope("spark_impl/workloads/fraud.py")
    (tmp_path / "mutants.json").write_text(json.dumps({"commit": "0" * 40, "mutants": [{"id": "a"}] * 5}))
    records = [{"id": "a", "module": "spark_impl/x.py", "line": 1, "outcome": "killed"},
               {"id": "b", "module": "spark_impl/x.py", "line": 2, "outcome": "survived"},
               {"id": "c", "module": "spark_impl/x.py", "line": 3, "outcome": "survived"},
               {"id": "d", "module": "spark_impl/x.py", "line": 4, "outcome": "equivalent (annotation)"},
               {"id": "e", "module": "spark_impl/x.py", "line": 5, "outcome": "killed (timeout)"}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (tmp_path / "equivalent.txt").write_text("c  # argued in docs\n")
    table = m.summary(tmp_path)
    assert "**Score: 2/3 non-equivalent mutants killed (66.7%).**" in table
    assert "`b` line 2: survived `" in table and "`c` line 3: survived (equivalent)" in table


def test_stratified_sample_is_proportional_interleaved_and_skips_annotations() -> None:
    m = _script()
    assert m.stratum("spark_impl/reconfig/driver.py") == "reconfig" and m.stratum("spark_impl/lru.py") == "lru"
    assert m.stratum("spark_impl/oplus/streaming_log.py") == "oplus-live" != m.stratum("spark_impl/oplus/feed.py")
    assert m.stratum("spark_impl/reconfig/streaming.py") == "reconfig"
    assert m.allocate({"a": 90, "b": 8, "c": 2}, 20, 2) == {"a": 15, "b": 3, "c": 2}  # 2 each, then 14 by largest remainder
    assert sum(m.allocate({"a": 51, "b": 30, "c": 19}, 10, 0).values()) == 10
    assert m.allocate({"a": 1, "b": 3}, 50, 2) == {"a": 1, "b": 3}  # never more than a stratum holds
    population = [{"id": f"{d}{i}", "module": f"spark_impl/{d}/x.py", "annotation": i % 10 == 0}
                  for d, n in (("reconfig", 300), ("dgs", 60), ("oplus", 40)) for i in range(n)]
    population += [{"id": "lru0", "module": "spark_impl/lru.py"}, {"id": "lru1", "module": "spark_impl/lru.py"},
                   {"id": "lru2", "module": "spark_impl/lru.py"}]
    drawn = m.stratified_sample(population, 40, seed=1)
    assert drawn == m.stratified_sample(population, 40, seed=1) and len({d["id"] for d in drawn}) == 40
    assert not any(d.get("annotation") for d in drawn)
    counts = {k: sum(1 for d in drawn if m.stratum(d["module"]) == k) for k in ("reconfig", "dgs", "oplus", "lru")}
    assert counts["lru"] == 2 and counts["reconfig"] > counts["dgs"] > counts["oplus"] >= 2
    first = {m.stratum(d["module"]) for d in drawn[:20]}
    assert first == {"reconfig", "dgs", "oplus", "lru"}  # interleaved: the first half holds every stratum


def test_wilson_interval_and_weighted_score() -> None:
    m = _script()
    low, high = m.wilson(76, 80)
    assert 0.87 < low < 0.88 and 0.98 < high < 0.99
    assert m.wilson(0, 0) == (0.0, 1.0)
    population = [{"module": "spark_impl/reconfig/a.py"}] * 90 + [{"module": "spark_impl/lru.py"}] * 10
    records = [{"id": "r1", "module": "spark_impl/reconfig/a.py", "outcome": "killed"},
               {"id": "r2", "module": "spark_impl/reconfig/a.py", "outcome": "killed"},
               {"id": "l1", "module": "spark_impl/lru.py", "outcome": "survived"},
               {"id": "l2", "module": "spark_impl/lru.py", "outcome": "survived"}]
    assert m.weighted_line(records, population, set()).endswith(": 90.0%.")
    assert m.weighted_line(records, population, {"l1", "l2"}).endswith(": 100.0%.")


def test_tests_only_runs_are_kept_apart_from_the_suite_verdict(tmp_path: Path) -> None:
    m = _script()
    (tmp_path / "mutants.json").write_text(json.dumps({"commit": "0" * 40, "mutants": [{"id": "a"}] * 3}))
    records = [{"id": "a", "module": "spark_impl/x.py", "line": 1, "outcome": "survived"},
               {"id": "a", "module": "spark_impl/x.py", "line": 1, "outcome": "killed by tests", "tests_only": ["t"],
                "killed_by": "t"},
               {"id": "b", "module": "spark_impl/x.py", "line": 2, "outcome": "killed"},
               {"id": "b", "module": "spark_impl/x.py", "line": 2, "outcome": "survived", "tests_only": ["t"]},
               {"id": "c", "module": "spark_impl/x.py", "line": 3, "outcome": "survived"},
               {"id": "c", "module": "spark_impl/x.py", "line": 3, "outcome": "survived"}]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    found = {r["id"]: (r["outcome"], r["suite_outcome"]) for r in m.latest(tmp_path / "results.jsonl")}
    assert found == {"a": ("killed by tests", "survived"), "b": ("killed", "killed"), "c": ("survived", "survived")}
    table = m.summary(tmp_path)
    assert "Suite alone: 1/3 (33.3%), 95% interval (Wilson) 6.1-79.2%; suite + tests: 2/3" in table
    assert "* `a` line 1: t `" in table
    assert "| x | 3 | 1 | 1 | 1 | 0 | 0 |" in table  # per part: suite kills and tests' kills apart


def test_child_fail_fast_patches_stop_at_the_first_failure() -> None:
    m = _script()
    saved = [(mod, name, getattr(mod, name)) for mod, name in (
        (dgs_oracles, "verdicts"), (dgs_suite, "shrink_and_save"), (oplus_suite, "shrink_spark"),
        (oplus_suite, "shrink_reference"), (crashes.Guard, "_isolate"))]
    try:
        m.stop_at_first_failure()
        m.no_isolation()
        with pytest.raises(SystemExit):
            getattr(oplus_suite, "shrink_spark")()
        calls: list[int] = []

        def engine(items: Sequence[int]) -> list[int]:
            calls.append(len(items))
            if 3 in items:
                raise ValueError("boom")
            return list(items)

        guard: crashes.Guard[int, int] = crashes.Guard(engine, timeout_s=30)
        found = guard([1, 2, 3, 4])
        assert calls == [4] and all(isinstance(r, crashes.Crash) for r in found)  # no bisection
        assert crashes.Guard(engine, timeout_s=30)([1, 2]) == [1, 2]
    finally:
        for mod, name, value in saved:
            setattr(mod, name, value)


def test_refresh_of_some_paths_only_and_never_the_mutated_package(tmp_path: Path) -> None:
    m = _script()
    commit = m.refresh(tmp_path, ["conformance/fries/driver_oracles/mcs.py"])
    assert sorted(str(p.relative_to(tmp_path / "tree")) for p in (tmp_path / "tree").rglob("*.py")) == [
        "conformance/fries/driver_oracles/mcs.py"]
    assert (tmp_path / "suite-commit.txt").read_text().split() == [commit, "conformance/fries/driver_oracles/mcs.py"]
    assert m._suite_of(tmp_path / "suite-commit.txt") == f"{commit[:10]} (conformance/fries/driver_oracles/mcs.py)"
    with pytest.raises(SystemExit):
        m.refresh(tmp_path, ["spark_impl/keys.py"])


def test_mutated_files_names_what_differs_from_the_snapshot_commit(tmp_path: Path) -> None:
    m = _script()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    archive = subprocess.run(["git", "archive", "--format=tar", commit, "spark_impl"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(tmp_path / "tree", filter="data")
    (tmp_path / "mutants.json").write_text(json.dumps({"commit": commit, "mutants": []}))
    assert m.mutated_files(tmp_path) == []
    lru = tmp_path / "tree" / "spark_impl" / "lru.py"
    lru.write_text(lru.read_text().replace("maxsize < 1", "maxsize <= 1"))
    assert m.mutated_files(tmp_path) == ["spark_impl/lru.py"]


def test_carry_finds_the_same_change_in_a_changed_module() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    from mutation_carry import counterpart  # noqa: PLC0415 - tools/ is no package: importable once on sys.path

    def change_of(source: str, operator: str, occurrence: int) -> str | None:  # "<": the n-th line holding one
        lines = [line for line in source.splitlines() if "<" in line]
        return f"{lines[occurrence]} -> >" if occurrence < len(lines) else None

    old = "a = 1 < 2\nb = 3 < 4\n"
    new = "a = 1 < 2\nz = 0 < 9\nb = 3 < 4\n"
    mutant = {"id": "m.py:Lt:1", "module": "m.py", "operator": "Lt", "occurrence": 1, "line": 2}
    catalogue = [{"id": f"m.py:Lt:{i}", "module": "m.py", "operator": "Lt", "occurrence": i, "line": i + 1}
                 for i in range(3)]
    assert counterpart(mutant, old, new, catalogue, change_of)["id"] == "m.py:Lt:2"  # b's line moved down
    assert counterpart(mutant, old, old, catalogue, change_of)["id"] == "m.py:Lt:1"  # unchanged: same id
    assert counterpart(mutant, old, "a = 1 < 2\n", catalogue, change_of) is None    # b's line is gone
    assert counterpart(mutant, old, None, catalogue, change_of) is None             # the module is gone


def test_fail_fast_runs_this_checkouts_tools_so_any_commit_can_be_judged() -> None:
    """tools/independent_bugs.py ``fail_fast_argv``: the child is this checkout's mutation.py by
    absolute path, never a path inside the snapshot (a commit's snapshot may have no tools/)."""
    sys.path.insert(0, str(ROOT / "tools"))
    from independent_bugs import fail_fast_argv  # noqa: PLC0415 - tools/ is no package: importable once on sys.path

    argv = fail_fast_argv("dgs")
    script = Path(argv[1])
    assert script.is_absolute() and script == ROOT / "tools" / "mutation.py" and script.exists()
    assert argv[2:] == ["child-check", "--suite", "dgs"]


def test_tests_that_start_spark_are_told_from_the_spark_free_ones() -> None:
    """tools/cost_order.py: a file is costly if its name says so (``test_spark_*``,
    ``test_conformance_*``) or a test takes the ``spark`` fixture; the split keeps the order and
    loses no file, so the runners' verdict (any file fails) is the same in either order."""
    sys.path.insert(0, str(ROOT / "tools"))
    from cost_order import split_by_spark  # noqa: PLC0415 - tools/ is no package: importable once on sys.path

    files = ["tests/spark_impl/test_lru_cache.py", "tests/spark_impl/test_nemesis_findings.py",
             "tests/spark_impl/reconfig/test_spark_reconfig.py", "tests/conformance/test_conformance_spark.py",
             "tests/spark_impl/reconfig/test_fries_refusals.py"]
    light, heavy = split_by_spark(ROOT, files)
    assert sorted(light + heavy) == sorted(files)
    assert [f for f in files if f in light] == light and [f for f in files if f in heavy] == heavy
    assert "tests/spark_impl/test_lru_cache.py" in light and "tests/spark_impl/test_nemesis_findings.py" in heavy
    assert {"tests/spark_impl/reconfig/test_spark_reconfig.py", "tests/conformance/test_conformance_spark.py"} <= set(heavy)
    assert "tests/spark_impl/reconfig/test_fries_refusals.py" in light  # speaks of Spark, starts none
