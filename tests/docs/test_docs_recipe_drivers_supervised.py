"""Every recipe driver of the docs ends as docs/production/operating.md ("A driver that stops
cleanly and says why it ended") says a production driver does: in ``with supervised(start) as
run:`` (``spark_impl.lifecycle``: signal handlers, a batch-boundary stop, one line and an exit
code), with the query started inside ``start`` (so a start-up bad input is one line and exit 2,
not a traceback), never in ``run.query.awaitTermination()``, the long py4j call that Ctrl-C interrupts into
tracebacks and that waits on in a way no supervisor can read.

A recipe driver is a script block (``# <name>.py: ...``, :mod:`support.doc_blocks`) that starts
a live query (``start_query``, ``start_oplus_query``, ``start_dgs_query``). The slow tests of
each page run the drivers themselves (tests/test_docs_production_fries.py,
tests/test_docs_production_oplus.py, tests/test_docs_spark_recipes.py).
"""

from __future__ import annotations

import ast
import glob
import os

import pytest

from support.doc_blocks import doc_scripts

DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs")
STARTS = {"start_query", "start_oplus_query", "start_dgs_query"}


def _drivers() -> list[tuple[str, str, str]]:
    pages = [os.path.join(DOCS, "spark.md"), *sorted(glob.glob(os.path.join(DOCS, "production", "*.md")))]
    found = []
    for page in pages:
        for name, code in doc_scripts(page).items():
            calls = {n.func.id for n in ast.walk(ast.parse(code)) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Name)}
            if calls & STARTS:
                found.append((os.path.relpath(page, DOCS), name, code))
    return found


DRIVERS = _drivers()


def test_the_docs_have_the_recipe_drivers_this_checks() -> None:
    names = {(page, name) for page, name, _ in DRIVERS}
    assert {("production/fries.md", "fries_job.py"), ("production/oplus.md", "oplus_late_driver.py"),
            ("production/operating.md", "fries_service.py"), ("spark.md", "oplus_driver.py")} <= names, names


@pytest.mark.parametrize("page,name,code", DRIVERS, ids=[f"{p}:{n}" for p, n, _ in DRIVERS])
def test_a_recipe_driver_ends_in_supervised_and_never_awaits_the_query_itself(page: str, name: str, code: str) -> None:
    tree = ast.parse(code)
    last = tree.body[-1]
    assert isinstance(last, ast.With) and any(
        isinstance(item.context_expr, ast.Call) and isinstance(item.context_expr.func, ast.Name)
        and item.context_expr.func.id == "supervised" for item in last.items), (
        f"{page} {name}: its last statement is not `with supervised(start) as run:`")
    awaits = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "awaitTermination"]
    assert not awaits, f"{page} {name}: awaitTermination on line(s) {awaits}"


@pytest.mark.parametrize("page,name,code", DRIVERS, ids=[f"{p}:{n}" for p, n, _ in DRIVERS])
def test_a_recipe_driver_starts_its_query_inside_the_function_it_hands_to_supervised(page: str, name: str,
                                                                                    code: str) -> None:
    tree = ast.parse(code)
    last = tree.body[-1]
    assert isinstance(last, ast.With)
    handed = [arg.id for item in last.items if isinstance(item.context_expr, ast.Call)
              for arg in item.context_expr.args if isinstance(arg, ast.Name)]
    starters = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                and any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in STARTS
                        for n in ast.walk(node))}
    outside = [n.lineno for node in tree.body if not isinstance(node, ast.FunctionDef) for n in ast.walk(node)
               if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in STARTS]
    assert handed and set(handed) <= starters and not outside, (
        f"{page} {name}: the query is not started inside the function handed to supervised "
        f"(handed {handed}, functions that start {sorted(starters)}, start calls outside on lines {outside})")
