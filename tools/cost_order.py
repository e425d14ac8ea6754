"""Which test files are relevant to a changed module (:func:`mirror_tests`) and which need Spark: the bug and mutation runners run the Spark-free ones
first, then the default suite, then the ones that start a Spark session, so that a slip the
cheap side catches costs seconds and one only Spark shows costs one suite run, not both. The
order changes the time of a verdict, never the verdict: a slip counts as caught if any of them
fails."""

from __future__ import annotations

import re
from pathlib import Path

#: A test function taking the session-wide ``spark`` fixture (tests/conftest.py).
_SPARK_FIXTURE = re.compile(r"def test_\w+\([^)]*\bspark\b")


def needs_spark(tree: Path, test_file: str) -> bool:
    """``test_file`` (relative to ``tree``) starts a Spark session: its name says so
    (``test_spark_*``, ``test_conformance_*``) or a test takes the ``spark`` fixture."""
    name = Path(test_file).name
    if name.startswith(("test_spark_", "test_conformance_")):
        return True
    text = (tree / test_file).read_text(encoding="utf-8", errors="replace")
    return bool(_SPARK_FIXTURE.search(text))


def split_by_spark(tree: Path, files: list[str]) -> tuple[list[str], list[str]]:
    """(Spark-free files, files that start Spark), each in the given order."""
    heavy = [f for f in files if needs_spark(tree, f)]
    return [f for f in files if f not in heavy], heavy


def mirror_tests(tree: Path, module: str) -> list[str]:
    """The test files of ``tests/`` that mirror ``module`` (``spark_impl/dgs/x.py`` ->
    ``tests/spark_impl/dgs/``; a module at the top of ``spark_impl/`` -> the test files at the
    top of ``tests/spark_impl/``): the promise tests of the module's package."""
    folder = tree / "tests" / Path(module).parent
    return sorted(str(p.relative_to(tree)) for p in folder.glob("test_*.py")) if folder.is_dir() else []
