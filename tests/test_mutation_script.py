"""benchmarks/mutation.py's pure helpers: which mutants are equivalent by construction
(inside an annotation, never evaluated under postponed evaluation), which statement a line
belongs to (what coverage records), and the score table."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_script", ROOT / "benchmarks" / "mutation.py")
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
