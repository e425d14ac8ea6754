"""The source side of the mutation tool: which modules are mutated, every cosmic-ray mutation
of them, where annotations and statements are (a mutation inside an annotation is equivalent
by construction), and writing one mutation into a snapshot."""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path
from typing import Any

#: What is mutated: the executor, and the durable-state layer every front end
#: writes through (``records.py``, ``store.py``). ``spark_impl/workloads`` (the demo's and the
#: benchmarks' job definitions), ``session.py`` (SparkSession settings) and ``lineage.py``
#: (reliable checkpoints only on a cluster with a checkpoint directory; ``local[*]`` never takes
#: that branch: the cluster tests' business) are outside the suite's purpose.
SCOPE = ("spark_impl/reconfig", "spark_impl/dgs", "spark_impl/oplus", "spark_impl/faults.py",
         "spark_impl/sink.py", "spark_impl/keys.py", "spark_impl/lru.py", "spark_impl/records.py",
         "spark_impl/store.py")


def in_scope(path: str) -> bool:
    """Is ``path`` (relative) part of :data:`SCOPE`?"""
    return any(path == s or path.startswith(s + "/") for s in SCOPE)


def enumerate_mutants(tree: Path) -> list[dict[str, Any]]:
    """Every cosmic-ray mutant of the scope: id, module, operator, occurrence, line."""
    from cosmic_ray.commands.init import init  # type: ignore[import-untyped]  # noqa: PLC0415 - cosmic_ray: an optional dependency, imported where it is used
    from cosmic_ray.work_db import WorkDB  # type: ignore[import-untyped]  # noqa: PLC0415 - cosmic_ray: an optional dependency, imported where it is used

    modules = sorted(p for p in (tree / "spark_impl").rglob("*.py") if in_scope(str(p.relative_to(tree))))
    db = WorkDB(tempfile.mktemp(suffix=".sqlite"), WorkDB.Mode.create)
    init(modules, db, {})
    mutants = []
    sources: dict[str, str] = {}
    for item in db.work_items:
        (m,) = item.mutations
        rel = str(Path(m.module_path).relative_to(tree))
        source = sources.setdefault(rel, Path(m.module_path).read_text(encoding="utf-8"))
        mutants.append({"id": f"{rel}:{m.operator_name}:{m.occurrence}", "module": rel,
                        "operator": m.operator_name, "occurrence": m.occurrence, "line": m.start_pos[0],
                        "annotation": in_annotation(source, m.start_pos[0], m.start_pos[1])})
    db.close()
    return mutants


def annotation_spans(source: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(start, end) positions (line, column) of every annotation in ``source``."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        found: list[ast.expr | None] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(node.returns)
        elif isinstance(node, ast.arg):
            found.append(node.annotation)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
        for expr in found:
            if expr is not None:
                spans.append(((expr.lineno, expr.col_offset), (expr.end_lineno or expr.lineno, expr.end_col_offset or 0)))
    return spans


def in_annotation(source: str, line: int, column: int) -> bool:
    """Is position (line, column) inside an annotation? Every module of the scope starts with
    ``from __future__ import annotations``: annotations are never evaluated, so a mutant there
    (``str | None`` -> ``str - None``) is equivalent by construction."""
    if "from __future__ import annotations" not in source:
        return False
    return any(start <= (line, column) < end for start, end in annotation_spans(source))


def statement_lines(source: str) -> dict[int, int]:
    """Line -> first line of the innermost statement containing it (what coverage records)."""
    mapping: dict[int, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                if line not in mapping or node.lineno > mapping[line]:
                    mapping[line] = node.lineno
    return mapping


def apply(tree: Path, mutant: dict[str, Any]) -> tuple[str, str] | None:
    """Write the mutant into the snapshot; (original, mutated) source, None if impossible."""
    import cosmic_ray.plugins  # type: ignore[import-untyped]  # noqa: PLC0415 - cosmic_ray: an optional dependency, imported where it is used
    from cosmic_ray.mutating import mutate_code  # type: ignore[import-untyped]  # noqa: PLC0415 - cosmic_ray: an optional dependency, imported where it is used

    path = tree / mutant["module"]
    original = path.read_text(encoding="utf-8")
    mutated = mutate_code(original, cosmic_ray.plugins.get_operator(mutant["operator"])(), mutant["occurrence"])
    if mutated is None:
        return None
    path.write_text(mutated, encoding="utf-8")
    return original, mutated
