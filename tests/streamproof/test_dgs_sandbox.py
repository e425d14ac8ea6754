"""``check-dgs`` runs the user's code in a sandbox: every way a hostile or broken
program can misbehave ends as exit 0 / 1 / 2 with one stderr line, valid ``--json`` and within
the time limits - never a hang, a traceback, an exit code chosen by the program, or exit 3.

Each test writes a small user program to ``tmp_path``; the limits are small so the whole file
runs in well under a minute."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamproof.main import main
from support.dgs_helpers import simple_program
from streamproof.sandbox import runner

FAST = ["--examples", "5", "--call-timeout", "2", "--timeout", "20", "--prove-budget", "0"]  # Z3 first: tests/proofs/test_dgs_prove_budget.py


def program(tmp_path: Path, *, imports: str = "", depends: str = "pass", update: str = "pass",
            events: str = 'st.sampled_from(["a", "b"])', extra: str = "") -> str:
    """dgs_helpers' program ``P`` whose ``depends`` and ``update`` first run the statements
    given (then answer ``x == y`` and ``s + 1``), after ``imports`` at module level."""
    text = (
        f"import sys, time\n{imports}\n"
        + simple_program(depends="_depends(x, y)", update="_update(s, e)")
        .replace('return st.sampled_from(["a", "b"])', f"return {events}")
        + f"\ndef _depends(x, y):\n    {depends}\n    return x == y\n"
        + f"\ndef _update(s, e):\n    {update}\n    return s + 1\n"
        + extra
    )
    path = tmp_path / "prog.py"
    path.write_text(text)
    return f"{path}:P"


def check(capsys: pytest.CaptureFixture[str], target: str, *argv: str) -> tuple[int, str, str]:
    code = main(["check-dgs", target, *FAST, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def bad_input(capsys: pytest.CaptureFixture[str], target: str, *argv: str, also_json: bool = False) -> str:
    """Exit 2, one stderr line, nothing on stdout (also with --json if asked); the line."""
    code, out, err = check(capsys, target, *argv)
    assert code == 2, (code, out, err)
    assert len(err.splitlines()) == 1 and err.startswith("streamproof check-dgs: error: "), err
    assert out == ""
    if also_json:
        code, out, err_json = check(capsys, target, "--json", *argv)
        assert (code, out) == (2, "") and len(err_json.splitlines()) == 1, (code, out, err_json)
    return err


# --- infinite loops and slow programs: the time limits ---------------------------------------


def test_infinite_loop_in_update_hits_the_call_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    started = time.monotonic()
    code, out, err = check(capsys, program(tmp_path, update="while True: pass"), "--call-timeout", "0.5")
    assert time.monotonic() - started < 30  # about 2 s on a quiet machine
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "P.update: did not return within 0.5 s" in err and "--call-timeout" in err
    assert "the program was at prog.py:" in err and "in _update" in err  # from a stack dump of the child


def test_infinite_loop_in_depends_at_load_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = check(capsys, program(tmp_path, depends="while True: pass"), "--call-timeout", "0.5")
    assert code == 2 and "P.depends: did not return within 0.5 s" in err


def test_infinite_loop_at_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = check(capsys, program(tmp_path, imports="while True: pass"), "--call-timeout", "0.5")
    assert code == 2 and "importing" in err and "prog.py: did not finish within 0.5 s" in err


def test_a_loop_in_c_code_is_stopped_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A signal could not interrupt this (it never returns to the interpreter loop); a kill can."""
    code, _, err = check(capsys, program(tmp_path, update="sum(range(10 ** 13))"), "--call-timeout", "0.5")
    assert code == 2 and "P.update: did not return" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_slow_program_hits_the_total_limit_with_a_progress_bar_on_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Says where the time went; on a terminal a progress bar was drawn, then erased."""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    started = time.monotonic()
    code = main(["check-dgs", program(tmp_path, update="time.sleep(0.3)"), "--examples", "20", "--timeout", "4"])
    assert time.monotonic() - started < 30  # about 4.5 s on a quiet machine
    assert code == 2
    drawn = terminal.getvalue()
    assert "\rcheck-dgs " in drawn and "calls, in " in drawn and "/4 s" in drawn
    bar, _, error = drawn.rpartition("\r")
    assert bar.strip() == "" or bar.endswith(" " * 10)  # the last \r-line blanked the bar
    assert error.startswith("streamproof check-dgs: error: the check did not finish within 4 s (the total limit")
    assert "time went to: P.update" in error and len(error.splitlines()) == 1


def test_memory_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    grow = "x = []\n    while True: x.append(bytearray(10 ** 7))"
    err = bad_input(capsys, program(tmp_path, update=grow), "--memory-limit", "400")
    assert "P.update: raised MemoryError" in err


# --- BaseException and exits raised by the user's code ---------------------------------------


@pytest.mark.parametrize(
    ("statement", "shown"),
    [
        ("sys.exit(7)", "SystemExit: 7"),
        ('raise GeneratorExit("stop")', "GeneratorExit: stop"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ('raise BaseException("custom")', "BaseException: custom"),
    ],
)
def test_base_exceptions_in_update_are_the_programs_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], statement: str, shown: str
) -> None:
    err = bad_input(capsys, program(tmp_path, update=statement), also_json=statement.startswith("sys"))
    assert f"P.update: raised {shown}" in err and "called with" in err


def test_sys_exit_at_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, imports="sys.exit(9)"), also_json=True)
    assert "importing" in err and "raised SystemExit: 9" in err


def test_os_exit_in_update_is_the_programs_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, update="import os; os._exit(5)"))
    assert "P.update: the program's process exited with status 5" in err


@pytest.mark.parametrize("depth", ["10 ** 6", "sys.getrecursionlimit() - 15"])
def test_recursion_error_is_the_programs_fault_not_non_determinism(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: str
) -> None:
    """Near the limit a RecursionError depends on the stack depth of the call, so hypothesis's
    replay passed and the program was called "not deterministic"."""
    extra = "\ndef deep(n):\n    return 0 if n <= 0 else 1 + deep(n - 1)\n"
    err = bad_input(capsys, program(tmp_path, update=f"deep({depth})", extra=extra))
    assert "P.update: raised RecursionError" in err and "not deterministic" not in err


# --- the program's output never reaches our stdout -------------------------------------------


def test_prints_are_captured_and_json_stays_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = program(tmp_path, imports='print("hello at import")',
                     update='if not hasattr(P, "said"): P.said = print("in update", e) or print("oops", file=sys.stderr)')
    code, out, err = check(capsys, target, "--json")
    assert code == 0 and err == ""
    document = json.loads(out)
    assert document["consistent"] is True
    assert "hello at import" in document["output"]["stdout"] and "in update" in document["output"]["stdout"]
    assert "oops" in document["output"]["stderr"]
    code, out, _ = check(capsys, target)
    assert code == 0 and "the program printed on stdout:\n  | hello at import\n  | in update" in out
    assert "the program printed on stderr:\n  | oops" in out


def test_an_error_line_shows_what_the_program_printed_last(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, update='print("about to exit"); sys.exit(3)'))
    assert "about to exit" in err


# --- exceptions that used to end as exit 3 ---------------------------------------------------


def test_events_strategy_that_raises_while_drawing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, events='st.integers().map(lambda x: 1 / 0)'), also_json=True)
    assert "P.events() strategy" in err and "ZeroDivisionError" in err


def test_events_strategy_with_invalid_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, events='st.integers(min_value="x")'))
    assert "P.events() strategy" in err and "InvalidArgument" in err


def test_exception_whose_str_raises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = "\nclass Weird(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
    err = bad_input(capsys, program(tmp_path, update="raise Weird()", extra=extra))
    assert "P.update: raised Weird" in err and "its str() raised RuntimeError" in err


def test_property_tags_that_raises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = "\nclass Q(P):\n    @property\n    def tags(self):\n        raise ValueError('no tags')\nQ = Q()\n"
    err = bad_input(capsys, program(tmp_path, extra=extra).replace(":P", ":Q"))
    assert "reading member 'tags' raised ValueError: no tags" in err


def test_getattr_that_raises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = "\nclass R:\n    def __getattr__(self, name):\n        raise RuntimeError('boom ' + name)\nR = R()\n"
    err = bad_input(capsys, program(tmp_path, extra=extra).replace(":P", ":R"))
    assert "reading member" in err and "RuntimeError: boom" in err


def test_user_dunder_raising_inside_the_checker_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tag() returns an object whose __hash__ raises: the checker's own ``in`` test meets it
    (outside any callback). The user's fault, located in the user's file."""
    extra = ("\nclass Odd:\n    def __hash__(self): raise LookupError('no hash')\n"
             "P.tag = staticmethod(lambda e: Odd())\n")
    err = bad_input(capsys, program(tmp_path, extra=extra))
    assert "raised LookupError: no hash at prog.py:" in err


RICH = '''
from hypothesis import strategies as st

class T:
    tags = frozenset({"a"})
    tag = staticmethod(lambda e: e)
    depends = staticmethod(lambda x, y: True)
    init = staticmethod(lambda: 0)
    events = staticmethod(lambda: st.just("a"))
    initial = INITIAL
    state_types = {"T": TYPE, "P": {"update": lambda s, e: s, "out": lambda s, e: []}}
    forks = {"f": {"from": FROM, "to": TO, "fn": lambda s, l, r: (s, 0)}}
    joins = {"j": {"from": ("P", "P"), "to": "T", "fn": lambda a, b: a + b}}
'''


@pytest.mark.parametrize(
    ("edit", "shown"),
    [
        ({"INITIAL": '["T"]'}, "T.initial: ['T'] is not one of the state types"),
        ({"FROM": '["T"]'}, "T.forks['f']['from']: ['T'] is not one of the state types"),
        ({"TO": '[{}, "P"]'}, "T.forks['f']['to']: {} is not one of the state types"),
        ({"TYPE": '{"out": lambda s, e: []}'}, "T.state_types['T']: missing member 'update'"),
        ({"EXTRA": 'T.splits = [([["a"]], [])]'}, "T.splits[0]: unknown tags [['a']]"),
        ({"EXTRA": 'T.state_types[1] = T.state_types["P"]'}, "a state type's name must be a non-empty string"),
    ],
)
def test_malformed_rich_declarations(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     edit: dict[str, str], shown: str) -> None:
    text = RICH + "EXTRA\n"
    defaults = {"INITIAL": '"T"', "FROM": '"T"', "TO": '("P", "P")',
                "TYPE": '{"update": lambda s, e: s, "out": lambda s, e: []}', "EXTRA": ""}
    for key, value in {**defaults, **edit}.items():
        text = text.replace(key, value)
    (tmp_path / "rich.py").write_text(text)
    assert shown in bad_input(capsys, f"{tmp_path / 'rich.py'}:T")


# --- one line, bounded arguments, same treatment of None -------------------------------------


def test_multi_line_messages_become_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, imports='raise ValueError("first\\nsecond\\r\\nthird")'))
    assert "first | second | third" in err
    err = bad_input(capsys, program(tmp_path, depends='raise ValueError("one\\ntwo")'))
    assert "P.depends" in err and "one | two" in err


def test_huge_examples_count_is_rejected(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    err = bad_input(capsys, program(tmp_path), "--examples", "99999999999999999999999")
    assert "--examples must be between 1 and 1,000,000" in err


@pytest.mark.parametrize("flag", ["--timeout", "--call-timeout"])
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_time_limits_must_be_positive(capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, value: str) -> None:
    code = main(["check-dgs", program(tmp_path), flag, value])
    assert code == 2 and f"{flag} must be a positive number" in capsys.readouterr().err


def test_state_eq_returning_none_is_bad_input_like_depends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = "\nP.state_eq = staticmethod(lambda a, b: None)\n"
    err = bad_input(capsys, program(tmp_path, extra=extra))
    assert "P.state_eq: returned None" in err and "expected True or False" in err


def test_no_usable_fork_is_vacuous(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (RICH.replace("INITIAL", '"T"').replace("FROM", '"T"').replace("TO", '("P", "P")')
            .replace("TYPE", '{"update": lambda s, e: s, "out": lambda s, e: []}')
            .replace('"to": "T", "fn"', '"to": "P", "fn"'))  # the join no longer matches the fork
    (tmp_path / "rich.py").write_text(text)
    code, out, _ = check(capsys, f"{tmp_path / 'rich.py'}:T")
    assert code == 0
    assert "C1 holds vacuously: the program has no usable fork" in out and "C2 holds vacuously" in out
    assert "C3 holds vacuously: every two tags depend on each other" in out
    code, out, _ = check(capsys, f"{tmp_path / 'rich.py'}:T", "--json")
    conditions = json.loads(out)["conditions"]
    assert all(conditions[c]["vacuous"] is True and conditions[c]["status"] == "holds" for c in ("C1", "C2", "C3"))


# --- a real Ctrl-C still means "interrupted" --------------------------------------------------


def test_ctrl_c_on_our_process_exits_130_and_leaves_no_process(tmp_path: Path) -> None:
    target = program(tmp_path, update="time.sleep(0.2)")
    cli = subprocess.Popen(
        [sys.executable, "-m", "streamproof.main", "check-dgs", target, "--examples", "1000"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    children: list[int] = []
    deadline = time.monotonic() + 20
    while not children and time.monotonic() < deadline:
        time.sleep(0.2)
        found = subprocess.run(["pgrep", "-P", str(cli.pid)], capture_output=True, text=True).stdout
        children = [int(pid) for pid in found.split()]
    assert children, "the sandboxed child never started"
    time.sleep(1.0)
    cli.send_signal(signal.SIGINT)
    out, err = cli.communicate(timeout=20)
    assert cli.returncode == 130, (out, err)
    assert err.strip() == "streamproof check-dgs: interrupted" and out == ""
    for pid in children:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_endless_printing_is_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(runner, "MAX_OUTPUT", 1_000_000)
    err = bad_input(capsys, program(tmp_path, imports='while True: print("x" * 1000)'))
    assert "the program printed more than 1 MB" in err and "importing" in err


def test_long_output_is_cut_to_its_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, program(tmp_path, imports='for i in range(20000): print("line", i)'), "--json")
    output = json.loads(out)["output"]
    assert code == 0 and output["truncated"] is True
    assert output["stdout"].endswith("line 19999\n") and len(output["stdout"]) <= 4000


@pytest.mark.parametrize("content", [b"\x00\xff\xfe binary", None])
def test_files_that_are_not_python_programs(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            content: bytes | None) -> None:
    if content is None:
        err = bad_input(capsys, "/dev/zero:P")
        assert "/dev/zero: is not a regular file" in err
    else:
        (tmp_path / "bin.py").write_bytes(content)
        err = bad_input(capsys, f"{tmp_path / 'bin.py'}:P")
        assert "syntax error: source code string cannot contain null bytes" in err and "None" not in err


@pytest.mark.parametrize("dunder", ["__repr__", "__eq__"])
def test_a_loop_in_a_dunder_on_the_checkers_path_hits_the_call_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dunder: str
) -> None:
    """A state whose __repr__ / __eq__ never returns, called by the checker outside any
    callback: two stack dumps of the child show the user's code running, and the per-call limit
    applies (it used to wait for the total limit, 600 s by default)."""
    extra = (f"\nclass S(int):\n    def {dunder}(self, *other):\n        while True: pass\n"
             "    __hash__ = int.__hash__\n"
             "P.init = staticmethod(lambda: S(0))\nP.update = staticmethod(lambda s, e: S(s + 1))\n"
             "P.join = staticmethod(lambda a, b: S(a + b))\nP.fork = staticmethod(lambda s, l, r: (s, S(1)))\n")
    started = time.monotonic()
    err = bad_input(capsys, program(tmp_path, extra=extra), "--call-timeout", "1", "--timeout", "60")
    assert time.monotonic() - started < 30  # about 3 s on a quiet machine
    assert "the program's code: did not return within 1 s" in err and "outside any callback" in err
    assert "the program was at prog.py:" in err and f"in {dunder}" in err


@pytest.mark.parametrize(("tag", "shown"), [("[e]", "['a']"), ("e", "data(...)")])
def test_bad_input_wrapped_in_a_hypothesis_exception_group(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           tag: str, shown: str) -> None:
    """An unhashable tag, or an event that is hypothesis's own data object: bad input even when
    it reaches us inside hypothesis's FlakyFailure (it used to be exit 3)."""
    events = "st.data()" if shown == "data(...)" else 'st.sampled_from(["a", "b"])'
    target = program(tmp_path, events=events, extra=f"\nP.tag = staticmethod(lambda e: {tag})\n")
    err = bad_input(capsys, target)
    assert f"P.tag: returned {shown}" in err and "not one of the program's tags" in err


def test_too_many_tags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = bad_input(capsys, program(tmp_path, extra="\nP.tags = frozenset(range(10 ** 5))\n"))
    assert "P.tags: 100,000 tags; at most 1,000 are supported" in err


def test_many_quick_calls_do_not_add_up_to_a_call_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Loading tabulates depends on every pair of tags: 250,000 quick calls take longer than
    the 0.3 s per-call limit in total, but no single call is slow."""
    extra = "\nP.tags = frozenset(range(500))\nP.tag = staticmethod(lambda e: 0)\n"
    code, out, err = check(capsys, program(tmp_path, extra=extra), "--call-timeout", "0.3", "--examples", "2")
    assert code == 0, err


def test_prove_runs_in_the_sandbox_and_a_loop_on_symbolic_values_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--prove calls update on Z3-backed symbolic values; those calls are the prover's time
    (Z3 solves inside them), yet the program's own loop there is still stopped by the per-call
    limit, from stack dumps."""
    update = "if type(s) is not int:\n        while True: pass"
    err = bad_input(capsys, program(tmp_path, update=update), "--prove", "--call-timeout", "1")
    assert "P.update: did not return within 1 s" in err and "run on symbolic values by --prove" in err


def test_a_program_that_takes_away_our_stack_signal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The program resets SIGUSR1 (which streamproof sends for a stack dump) to its default
    action, so our probe kills it: still the program's fault, not an internal error."""
    extra = ("\nimport signal\nclass S(int):\n    def __repr__(self):\n"
             "        signal.signal(signal.SIGUSR1, signal.SIG_DFL)\n        while True: pass\n"
             "    __hash__ = int.__hash__\n"
             "P.init = staticmethod(lambda: S(0))\nP.update = staticmethod(lambda s, e: S(s + 1))\n"
             "P.join = staticmethod(lambda a, b: S(a + b))\nP.fork = staticmethod(lambda s, l, r: (s, S(1)))\n")
    err = bad_input(capsys, program(tmp_path, extra=extra), "--call-timeout", "1")
    assert "killed by signal 10 (SIGUSR1: the program replaced the handler" in err


def test_a_loop_in_the_events_strategys_own_function_hits_the_call_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Draws are not timed as calls (hypothesis builds its tables inside the first st.text()
    draw), but the program's filter function stuck in a draw is."""
    err = bad_input(capsys, program(tmp_path, events="st.integers().filter(lambda x: time.sleep(100))"),
                    "--call-timeout", "1")
    assert "P.events() strategy: did not return within 1 s" in err and "drawing an event" in err


def test_huge_integers_in_the_programs_states(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Python refuses to print integers of more than 4,300 digits by default (it was exit 3)."""
    extra = "\nP.init = staticmethod(lambda: 10 ** 20000)\nP.fork = staticmethod(lambda s, l, r: (s, 1))\n"
    code, out, err = check(capsys, program(tmp_path, extra=extra), "--json")
    assert code == 1, err
    assert "<an integer of about 2000" in json.dumps(json.loads(out))
