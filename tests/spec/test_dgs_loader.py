"""Loading user programs (spec.dgs.loader): both forms, and every bad-input case is one
InputError naming the problem."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from support.dgs_helpers import CONSISTENT, EXAMPLES, INCONSISTENT, example, simple_program, write_program
from spec.dgs.loader import load_program
from spec.dgs.program import UserCodeError
from spec.errors import InputError




def test_every_shipped_example_loads() -> None:
    for name in (*CONSISTENT, *INCONSISTENT):
        program = example(name)
        assert program.initial in program.state_types
        assert program.state_types[program.initial].pred == program.tags


def test_shipped_examples_import_only_hypothesis_and_the_standard_library() -> None:
    """They are documentation of user programs, which must not need streamproof."""
    project = {"spec", "reference", "proofs", "spark_impl", "conformance", "streamproof"}
    for path in EXAMPLES.glob("*.py"):
        if path.name == "__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                roots = {(node.module or "").split(".")[0]} if node.level == 0 else {"<relative>"}
            else:
                continue
            assert not roots & (project | {"<relative>"}), f"{path.name} imports {sorted(roots)}"
            assert roots <= set(sys.stdlib_module_names) | {"hypothesis"}, f"{path.name}: {sorted(roots)}"


def test_simple_form_has_one_state_type_fork_and_join(tmp_path: Path) -> None:
    program = load_program(write_program(tmp_path, simple_program(depends="x == y")) + ":P")
    assert list(program.state_types) == ["State"]
    assert list(program.forks) == ["fork"] and list(program.joins) == ["join"]
    assert program.depends("a", "a") and not program.depends("a", "b")


def test_rich_form_types_forks_and_joins() -> None:
    program = example("windowing_typed.py:TypedWindow")
    assert program.initial == "Total"
    assert program.state_types["Partial"].pred == frozenset({"value"})
    assert [(f.name, j.name) for f, j in program.fork_join_pairs("Total")] == [("split", "add")]


@pytest.mark.parametrize(
    "target, message",
    [
        ("missing.py:P", "no such file"),
        ("PROG:Nope", "has no member 'Nope'"),
        ("PROG", "expected FILE.py:NAME"),
    ],
)
def test_unloadable_targets(tmp_path: Path, target: str, message: str) -> None:
    path = write_program(tmp_path, simple_program(depends="True"))
    target = target.replace("PROG", path).replace("missing.py", str(tmp_path / "missing.py"))
    with pytest.raises(InputError, match=message):
        load_program(target)


def test_syntax_error_and_import_error_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="syntax error at line 1"):
        load_program(write_program(tmp_path, "def (:\n") + ":P")
    with pytest.raises(InputError, match="cannot load: ZeroDivisionError"):
        load_program(write_program(tmp_path, "x = 1 / 0\n", "other.py") + ":P")


def test_missing_member_is_named(tmp_path: Path) -> None:
    text = simple_program(depends="True").replace("    @staticmethod\n    def join(a, b): return a + b\n", "")
    with pytest.raises(InputError, match="missing member 'join'"):
        load_program(write_program(tmp_path, text) + ":P")


def test_asymmetric_depends_names_both_tags(tmp_path: Path) -> None:
    text = simple_program(depends='(x, y) == ("a", "b")')
    with pytest.raises(InputError, match=r"depends\('a', 'b'\) is True but depends\('b', 'a'\) is False"):
        load_program(write_program(tmp_path, text) + ":P")


@pytest.mark.parametrize("answer", ["None", "{x} & {y}", "1 if x == y else 0"])
def test_depends_must_answer_a_bool(tmp_path: Path, answer: str) -> None:
    """A forgotten ``return`` used to make every pair silently independent."""
    text = simple_program(depends=answer)
    with pytest.raises(UserCodeError, match=r"P\.depends: returned .* for \('a', 'a'\), expected True or False"):
        load_program(write_program(tmp_path, text) + ":P")


def test_events_must_be_a_strategy(tmp_path: Path) -> None:
    text = simple_program(depends="True").replace('return st.sampled_from(["a", "b"])', "return [1]")
    with pytest.raises(InputError, match="expected a hypothesis strategy"):
        load_program(write_program(tmp_path, text) + ":P")


def test_exception_in_user_code_names_the_function(tmp_path: Path) -> None:
    text = simple_program(depends="1 / 0")
    with pytest.raises(UserCodeError, match=r"P\.depends.*raised ZeroDivisionError"):
        load_program(write_program(tmp_path, text) + ":P")


def test_exception_in_events_says_it_had_no_arguments(tmp_path: Path) -> None:
    text = simple_program(depends="True").replace('return st.sampled_from(["a", "b"])', "return 1 / 0")
    with pytest.raises(UserCodeError, match=r"P\.events: raised ZeroDivisionError: .* \(called with no arguments\)$"):
        load_program(write_program(tmp_path, text) + ":P")


def test_splits_with_dependent_predicates_are_refused(tmp_path: Path) -> None:
    text = simple_program(depends="x == y") + '\nP.splits = [({"a"}, {"b"}), ({"a"}, {"a"})]\n'
    with pytest.raises(InputError, match=r"splits\[1\]: a fork given dependent predicates: left tag 'a'"):
        load_program(write_program(tmp_path, text) + ":P")


def test_fork_refuses_dependent_predicates() -> None:
    program = example("key_counter.py:KeyCounter")
    with pytest.raises(InputError, match="fork given dependent predicates"):
        program.fork("fork", {}, frozenset({("r", 0)}), frozenset({("i", 0)}))


def test_tag_outside_tags_is_user_error() -> None:
    program = example("key_counter.py:KeyCounter")
    with pytest.raises(UserCodeError, match="not one of the program's tags"):
        program.tag(("x", 9))


@pytest.mark.parametrize("returned", ['"ab"', '{"a": 1}'])
def test_out_must_return_a_list_not_a_string_or_dict(tmp_path: Path, returned: str) -> None:
    """A string used to be split silently into one output per character."""
    text = simple_program().replace("def out(s, e): return []", f"def out(s, e): return {returned}")
    program = load_program(write_program(tmp_path, text) + ":P")
    with pytest.raises(UserCodeError, match=r"P\.out: returned .*, expected a list"):
        program.out(program.initial, 0, "a")
