"""The code rules no linter checks (docs/code-rules.md), checked on the source tree itself;
what each rule is and how it is checked: :mod:`support.repository_rules`. The second half
plants a violation of each rule in an empty tree and checks that it is found."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import repository_rules
from support.repository_rules import (
    CIRCLES_NOT_YET_COVERED,
    CODE,
    IDENTITY_NOT_YET_COVERED,
    MAX_LINES,
    MODULE_SIZE_NOT_YET_COVERED,
    PACKAGES,
    PRIVATE_IMPORTS_NOT_YET_COVERED,
    PROCESS_WORDS_NOT_YET_COVERED,
    SPEC_DEFINITIONS_NOT_YET_REACHED,
    TEXT,
    circles_in,
    covered,
    imports_of_test_modules,
    long_modules,
    misused_identity,
    private_imports,
    process_words,
    spec_definitions_not_reached,
)


# --- the rules ---------------------------------------------------------------------------


def test_no_import_circle_even_through_function_level_or_type_checking_imports() -> None:
    assert circles_in(covered(PACKAGES, CIRCLES_NOT_YET_COVERED)) == []


def test_no_private_name_is_imported_from_another_module() -> None:
    found = private_imports(covered(CODE, PRIVATE_IMPORTS_NOT_YET_COVERED))
    assert not found, "\n".join(map(str, found))


def test_no_module_is_over_500_lines() -> None:
    found = long_modules(covered(CODE, MODULE_SIZE_NOT_YET_COVERED))
    assert not found, "\n".join(map(str, found))


def test_the_product_speaks_of_the_product_not_of_its_development() -> None:
    found = process_words(covered(TEXT, PROCESS_WORDS_NOT_YET_COVERED))
    assert not found, "\n".join(map(str, found))


def test_is_compares_only_none_booleans_sentinels_and_enum_members() -> None:
    found = misused_identity(covered(CODE, IDENTITY_NOT_YET_COVERED))
    assert not found, "\n".join(map(str, found))


def test_every_public_spec_definition_is_reached_by_a_test_or_an_oracle() -> None:
    assert spec_definitions_not_reached() == set(SPEC_DEFINITIONS_NOT_YET_REACHED)


def test_no_test_module_imports_another_test_module() -> None:
    found = imports_of_test_modules()
    assert not found, "\n".join(map(str, found))


# --- the checks find what they look for ------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty repository the checks read instead of this one."""
    monkeypatch.setattr(repository_rules, "ROOT", tmp_path)
    return tmp_path


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_circle_through_a_function_level_import_is_found(tree: Path) -> None:
    _write(tree, "spec/__init__.py", "")
    _write(tree, "spec/a.py", "from spec.b import B\nA = 1\n")
    _write(tree, "spec/b.py", "B = 2\n\ndef f() -> int:\n    from spec.a import A\n    return A\n")
    _write(tree, "spec/c.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import spec.a\n")
    assert circles_in(["spec"]) == [["spec.a", "spec.b"]]


def test_a_circle_through_a_package_init_is_found(tree: Path) -> None:
    _write(tree, "reference/__init__.py", "")
    _write(tree, "reference/sim/__init__.py", "from reference.sim.engine import run\n")
    _write(tree, "reference/sim/engine.py", "from reference.plugins.base import Base\nrun = 1\n")
    _write(tree, "reference/sim/messages.py", "Data = 1\n")
    _write(tree, "reference/plugins/__init__.py", "")
    _write(tree, "reference/plugins/base.py", "from reference.sim.messages import Data\nBase = 1\n")
    assert circles_in(["reference"]) == [["reference.plugins.base", "reference.sim", "reference.sim.engine"]]


def test_a_private_name_imported_or_read_across_modules_is_found(tree: Path) -> None:
    _write(tree, "spec/__init__.py", "")
    _write(tree, "spec/a.py", "_hidden = 1\n")
    _write(tree, "spec/b.py", "from spec.a import _hidden\n")
    _write(tree, "spec/c.py", "from spec import a\nx = a._hidden\n")
    _write(tree, "spec/d.py", "from spec.a import _hidden as _h  # noqa\n")
    found = sorted(str(f) for f in private_imports(["spec"]))
    assert found == ["spec/b.py:1: from spec.a import _hidden", "spec/c.py:2: spec.a._hidden",
                     "spec/d.py:1: from spec.a import _hidden"]


def test_a_long_module_and_a_process_word_are_found(tree: Path) -> None:
    _write(tree, "spec/long.py", "x = 1\n" * (MAX_LINES + 1))
    _write(tree, "docs/guide.md", "Fixed in issue 12.\nThe DGS coordinator releases events.\n")
    assert [str(f) for f in long_modules(["spec"])] == [f"spec/long.py: {MAX_LINES + 1} lines"]
    assert [str(f) for f in process_words(["docs"])] == ["docs/guide.md:1: 'issue 12'"]


def test_mutation_terms_are_allowed_only_in_the_mutation_testing_tooling(tree: Path) -> None:
    # the planted words are assembled here, so that this file itself states none of them
    changed, kept, numbered = "mu" + "tant", "surv" + "ivors", "ses" + "sion 3"
    _write(tree, "tools/mutation.py", f'"""Mutation testing: apply every {changed}, list the {kept}."""\n# {numbered}\n')
    _write(tree, "tests/tools/test_mutation_script.py", f'"""Which {changed}s are equivalent."""\n')
    _write(tree, "tests/test_other.py", f'"""Kills a {changed}."""\n')
    found = [str(f) for f in process_words(["tools", "tests"])]
    assert found == [f"tools/mutation.py:2: '{numbered}'", f"tests/test_other.py:1: '{changed}'"]


def test_is_with_a_value_is_found_and_with_a_sentinel_is_not(tree: Path) -> None:
    _write(tree, "spec/cmp.py", "def f(a, b):\n    return a is b, a is None, a is MISSING, type(a) is int, "
                                "a.kind is Kind.BLOCKING\n")
    assert [str(f) for f in misused_identity(["spec"])] == ["spec/cmp.py:2: a is b"]


def test_a_spec_definition_nothing_reaches_is_found(tree: Path) -> None:
    _write(tree, "spec/defs.py", "def used() -> int:\n    return helper()\n\ndef helper() -> int:\n    return 1\n\n"
                                 "def dead() -> int:\n    return 2\n")
    _write(tree, "tests/test_defs.py", "from spec.defs import used\n")
    assert spec_definitions_not_reached() == {"spec/defs.py:dead"}


def test_a_test_module_imported_by_another_test_or_a_helper_is_found(tree: Path) -> None:
    _write(tree, "tests/test_a.py", "def helper() -> int:\n    return 1\n")
    _write(tree, "tests/test_b.py", "from test_a import helper\n\ndef test_b() -> None:\n    import test_a\n")
    _write(tree, "tests/spark_impl/test_c.py", "from support.h import x\nfrom support import h\n")
    _write(tree, "tests/support/h.py", "from tests import test_a\nx = 1\n")
    found = sorted(str(f) for f in imports_of_test_modules())
    assert found == ["tests/support/h.py:1: imports tests.test_a", "tests/test_b.py:1: imports test_a",
                     "tests/test_b.py:4: imports test_a"]


