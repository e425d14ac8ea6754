"""The hostile-input suite: random mutations of valid inputs, fed to every
reference-only command in-process, must keep docs/cli.md's contract - exit 0, 1 or 2, one
stderr line on exit 2, ``--json`` output that parses, an answer within the per-case limit
(:mod:`support.hostile_cli`). A few cases run through a real subprocess (real stdio encoding).
Mutations: :mod:`support.hostile_mutations`. ``check-dgs`` is swept with a few hostile programs
here; its sandbox is tested in depth by tests/streamproof/test_dgs_sandbox.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conformance.oplus.cases import oplus_scenarios
from support.hostile_cli import Outcome, assert_contract, export_vectors, leaves_nothing, run
from support.hostile_mutations import mutated
from support.paths import ROOT

LIMIT = 15.0  # seconds per case
EXAMPLES = int(os.environ.get("HOSTILE_EXAMPLES", "0"))
"""``HOSTILE_EXAMPLES=N`` runs N random (not derandomized) examples per fuzz test."""
FUZZ = settings(max_examples=EXAMPLES or 60, deadline=None, derandomize=not EXAMPLES,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SCHEDULES = [
    {"logs": {"A": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}],
              "B": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}]}},
    {"logs": {"A": [{"txn": "t1"}, {"txn": "R", "update": True}],
              "B": [{"txn": "R", "update": True}, {"txn": "t1"}]}},
]
DAG = {"operators": [{"name": "S", "kind": "source"}, {"name": "J", "kind": "one-to-many"},
                     {"name": "M1", "kind": "one-to-one"},
                     {"name": "M2", "kind": "one-to-one", "unique": False},
                     {"name": "U", "kind": "one-to-one"}],
       "edges": [["S", "J"], ["J", "M1"], ["J", "M2"], ["M1", "U"], ["M2", "U"]]}
SCENARIOS = [
    {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 2,
     "inputs": [[{"ts": 1, "key": "a", "value": 3}, {"watermark": 4},
                 {"ts": 5, "key": "b", "value": 1}], [{"ts": 2, "key": "b", "value": 5}]],
     "reconfigurations": [{"watermark": 3, "parallelism": 3}]},
    {"operator": "paircount", "WA": 1, "WS": 3, "parallelism": 2, "params": {"duplication": "high"},
     "inputs": [[{"ts": 1, "text": "a b c"}, {"ts": 2, "text": "#x b"}]]},
    {"operator": "scalejoin", "WA": 1, "WS": 5, "parallelism": 2, "params": {"keys": 3, "band": 2},
     "inputs": [[{"ts": 1, "x": 1, "y": 2}, {"ts": 4, "x": 0, "y": 0}],
                [{"ts": 2, "a": 2, "b": 3}]]},
    {"operator": "forward", "WA": 1, "WS": 1, "parallelism": 1, "params": {"keys": 2},
     "inputs": [[{"ts": 1, "value": 1}], [{"ts": 1, "value": 2}]]},
    {"operator": "longest-tweet", "WA": 3, "WS": 3, "WT": "single", "parallelism": 1,
     "inputs": [[{"ts": 0, "text": "#a b"}, {"ts": 7, "text": "#a #b"}]]},
]


def _write(directory: Path, text: str, name: str = "input.json") -> str:
    path = directory / name
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    return str(path)


def _check(outcome: Outcome) -> None:
    assert_contract(outcome)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


@FUZZ
@given(st.sampled_from(SCHEDULES).flatmap(lambda s: mutated(json.dumps(s))), st.booleans())
def test_check_schedule_keeps_the_contract(work: Path, text: str, as_json: bool) -> None:
    argv = ["check-schedule", _write(work, text)] + (["--json"] if as_json else [])
    _check(run(argv, LIMIT))


@FUZZ
@given(mutated(json.dumps(DAG)),
       st.sampled_from([["--reconfigure", "M1,M2"], ["--reconfigure", "U"],
                        ["--operator", "J", "--no-prune"], ["--reconfigure", "M1", "--one-to-one"]]),
       st.booleans())
def test_mcs_keeps_the_contract(work: Path, text: str, names: list[str], as_json: bool) -> None:
    argv = ["mcs", _write(work, text), *names] + (["--json"] if as_json else [])
    _check(run(argv, LIMIT))


@FUZZ
@given(st.one_of(st.sampled_from(SCENARIOS), oplus_scenarios()).flatmap(
    lambda s: mutated(json.dumps(s))), st.sampled_from(["sequential", "sn", "vsn"]), st.booleans())
def test_oplus_keeps_the_contract(work: Path, text: str, mode: str, as_json: bool) -> None:
    argv = ["oplus", _write(work, text), "--mode", mode] + (["--json"] if as_json else [])
    _check(run(argv, LIMIT))


@pytest.fixture(scope="module")
def vectors_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_vectors(tmp_path_factory.mktemp("vectors"))


@settings(FUZZ, max_examples=EXAMPLES or 30)
@given(st.data())
def test_vectors_check_keeps_the_contract(vectors_dir: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(["index.json", "fries/0000.json", "oplus/0000.json"]))
    original = (vectors_dir / name).read_text()
    text = data.draw(mutated(original))
    try:
        _write(vectors_dir, text, name)
        outcome = run(["vectors", "check", str(vectors_dir), "--engine", "reference",
                       "--json"], LIMIT)
    finally:
        (vectors_dir / name).write_text(original)
    _check(outcome)


KLINK_VALUES = ["0", "-1", "1", "3", "11", "1e12", "1e308", "nan", "inf", "-inf", "x", "",
                "9" * 30, "1" + "0" * 400, "10.5", "\ud800", "1\n2"]


@settings(FUZZ, max_examples=EXAMPLES or 40)
@given(st.lists(st.tuples(st.sampled_from(["--queries", "--cores", "--horizon", "--seed",
                                            "--delays"]),
                          st.sampled_from(KLINK_VALUES + ["uniform", "zipf"])), max_size=3),
       st.booleans())
def test_simulate_klink_keeps_the_contract(pairs: list[tuple[str, str]], as_json: bool) -> None:
    argv = ["simulate", "klink", "--queries", "2", "--horizon", "11"]
    for flag, value in pairs:
        argv += [flag, value]
    _check(run(argv + (["--json"] if as_json else []), LIMIT))


@pytest.mark.parametrize("argv", [
    ["prove", "--max-operators", "1000000", "--only", "Lemma 5.5"],
    ["prove", "--max-operators", "9" * 5000],
    ["prove", "--max-operators", "0"],
    ["prove", "--timeout", "nan"],
    ["prove", "--timeout", "-1"],
    ["prove", "--only", "\ud800\n"],
    ["prove", "--max-operators", "2", "--only", "Lemma 5.5", "--json"],
    ["prove", "--max-operators", "1", "--only", "Lemma 5.5", "--timeout", "1e300"],
])
def test_prove_keeps_the_contract(argv: list[str]) -> None:
    _check(run(argv, LIMIT))


HOSTILE_PROGRAMS = {
    "binary": b"\x00\xff\xfe" * 100,
    "syntax": b"def f(:\n",
    "not a program": b"PROGRAM = 42\n",
    "colliding state types": (  # 1 and "1" were silently merged into one state type
        b"from hypothesis import strategies as st\n"
        b"class P:\n"
        b"    tags = frozenset({'a'})\n"
        b"    def depends(self, x, y): return True\n"
        b"    def init(self): return 0\n"
        b"    state_types = {1: {'update': lambda s, e: s, 'out': lambda s, e: []},\n"
        b"                   '1': {'update': lambda s, e: s, 'out': lambda s, e: []}}\n"
        b"    initial = '1'\n"
        b"    forks = {}\n"
        b"    joins = {}\n"
        b"    def tag(self, e): return 'a'\n"
        b"    def events(self): return st.integers()\n"
        b"PROGRAM = P()\n"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PROGRAMS))
def test_check_dgs_sweep(tmp_path: Path, name: str) -> None:
    path = tmp_path / "program.py"
    path.write_bytes(HOSTILE_PROGRAMS[name])
    outcome = run(["check-dgs", f"{path}:PROGRAM", "--examples", "5", "--json"], 60)
    _check(outcome)
    assert outcome.code == 2 and "line None" not in outcome.err, outcome.describe()


FUSE_JOB = json.loads((ROOT / "examples" / "fusion"
                       / "fraud_job.json").read_text())
DGS_EXAMPLES = ROOT / "reference" / "dgs" / "examples"


@FUZZ
@given(mutated(json.dumps(FUSE_JOB)), st.sampled_from(["comm", "pa"]), st.booleans())
def test_fuse_keeps_the_contract(work: Path, text: str, score: str, as_json: bool) -> None:
    argv = ["fuse", _write(work, text), "--score", score] + (["--json"] if as_json else [])
    _check(run(argv, LIMIT))


@settings(FUZZ, max_examples=EXAMPLES or 8)
@given(mutated((DGS_EXAMPLES / "streams" / "windowing.json").read_text()), st.booleans())
def test_dgs_plan_streams_keep_the_contract(work: Path, text: str, as_json: bool) -> None:
    argv = ["dgs-plan", f"{DGS_EXAMPLES / 'windowing.py'}:EventWindow", "--streams",
            _write(work, text, "streams.json")] + (["--json"] if as_json else [])
    _check(run(argv, 60))


@pytest.mark.parametrize("name", sorted(HOSTILE_PROGRAMS))
def test_dgs_plan_sweep(tmp_path: Path, name: str) -> None:
    path = tmp_path / "program.py"
    path.write_bytes(HOSTILE_PROGRAMS[name])
    streams = DGS_EXAMPLES / "streams" / "windowing.json"
    outcome = run(["dgs-plan", f"{path}:PROGRAM", "--streams", str(streams), "--json"], 60)
    _check(outcome)
    assert outcome.code == 2, outcome.describe()


def _subprocess(argv: list[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "streamproof.main", *argv], input=stdin,
                          capture_output=True, timeout=60, env=env, check=False)


@pytest.mark.parametrize("make", [
    lambda d: ["check-schedule", _write(d, '{"logs": {"A": [{"txn": "\\ud800"}]}}')],
    lambda d: ["mcs", _write(d, "[" * 5000 + "]" * 5000), "--reconfigure", "A"],
    lambda d: ["oplus", _write(d, json.dumps({**SCENARIOS[0], "WS": 10**12}))],
    lambda d: [],
    lambda d: ["simulate"],
    lambda d: ["mcs", str(d / "new\nline.json"), "--reconfigure", "A"],
])
def test_real_processes_keep_the_contract(tmp_path: Path, make: Callable[[Path], list[str]]) -> None:
    argv = make(tmp_path)
    done = _subprocess(argv)
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode in (0, 1, 2), err
    if done.returncode == 2:
        assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err


def test_real_process_json_output_parses(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps({**SCENARIOS[0], "inputs": [[{"ts": 1, "key": "\ud800",
                                                                     "value": 1}]]}))
    done = _subprocess(["oplus", path, "--mode", "vsn", "--json"])
    assert done.returncode == 0, done.stderr
    rows: Any = json.loads(done.stdout)
    assert rows[0]["key"] == "\ud800"


TOKENS = ["--json", "--mode", "sn", "vsn", "--reconfigure", "M1,M2", ",", " ", "--operator",
          "--engine", "reference", "--seed", "-1", "9" * 5000, "", "\ud800", "-", "--",
          "--no-prune", "--one-to-one", "check", "x\ny", "--mode=vsn", "--reconfigure=U"]


@settings(FUZZ, max_examples=EXAMPLES or 60)
@given(st.sampled_from(["mcs", "check-schedule", "oplus", "vectors"]),
       st.lists(st.sampled_from(TOKENS + ["@dag", "@schedule", "@scenario", "@vectors"]),
                max_size=6))
def test_random_arguments_keep_the_contract(work: Path, vectors_dir: Path, command: str,
                                            tokens: list[str]) -> None:
    files = {"@dag": _write(work, json.dumps(DAG), "dag.json"),
             "@schedule": _write(work, json.dumps(SCHEDULES[1]), "schedule.json"),
             "@scenario": _write(work, json.dumps(SCENARIOS[0]), "scenario.json"),
             "@vectors": str(vectors_dir)}
    _check(run([command, *(files.get(t, t) for t in tokens)], LIMIT))


# --- the commands added later: dgs-plan flags and programs, conformance output paths and
# --job, soak / bench / nemesis / prove / modelcheck argument validation (docs/cli.md: exit 0,
# 1 or 2 with one stderr line, valid --json, an answer in time, nothing left running or behind)

DGS_PLAN_VALUES = {
    "--workers": ["0", "1", "2", "1025", "-1", "1" + "0" * 400],
    "--sync-cost": ["0", "10", "1e9", "1e10", "1e308", "nan", "inf", "-1"],
    "--seed": ["0", "-1", "9" * 30],
    "--call-timeout": ["0", "-1", "nan", "inf", "1e308", "5"],
    "--timeout": ["0", "nan", "1e-9", "1e308", "60"],
    "--memory-limit": ["0", "255", "4096", "9" * 30],
}


@settings(FUZZ, max_examples=EXAMPLES or 10)
@given(st.lists(st.tuples(st.sampled_from(sorted(DGS_PLAN_VALUES)), st.integers(0, 7)), max_size=3),
       st.booleans(), st.booleans())
def test_dgs_plan_flags_keep_the_contract(tmp_path_factory: pytest.TempPathFactory, pairs: list[tuple[str, int]],
                                          optimize: bool, as_json: bool) -> None:
    argv = ["dgs-plan", f"{DGS_EXAMPLES / 'windowing.py'}:EventWindow", "--streams",
            str(DGS_EXAMPLES / "streams" / "windowing.json")]
    for flag, pick in pairs:
        values = DGS_PLAN_VALUES[flag]
        argv += [flag, values[pick % len(values)]]
    argv += (["--optimize"] if optimize else []) + (["--json"] if as_json else [])
    with leaves_nothing(tmp_path_factory.mktemp("tmp")):
        _check(run(argv, 60))


FIGHTING_PROGRAMS = {
    "forks and sleeps": "import os, time\nif os.fork() == 0:\n    time.sleep(60)\n    os._exit(0)\n",
    "new session": "import subprocess\nsubprocess.Popen(['sleep', '60'], start_new_session=True)\n",
    "signals its parent": "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n",
    "ignores SIGUSR1 and loops": "import signal\nsignal.signal(signal.SIGUSR1, signal.SIG_IGN)\nwhile True:\n    pass\n",
    "background sleep": "import subprocess\nsubprocess.Popen(['sleep', '60'])\n",
    "exits": "import os\nos._exit(0)\n",
}


@pytest.mark.parametrize("name", sorted(FIGHTING_PROGRAMS))
@pytest.mark.parametrize("command", ["dgs-plan", "check-dgs"])
def test_sandbox_fights_leave_nothing(tmp_path: Path, name: str, command: str) -> None:
    """A program that forks, starts a session, signals streamproof, hides from the stack probe
    or exits at import: exit 0, 1 or 2 with one line, nothing left running or behind."""
    path = tmp_path / "program.py"
    path.write_bytes(FIGHTING_PROGRAMS[name].encode() + HOSTILE_PROGRAMS["colliding state types"].split(b"PROGRAM = P()")[0]
                     .replace(b"    state_types = {1:", b"    state_types = {'1':") + b"PROGRAM = P()\n")
    extra = ["--examples", "3"] if command == "check-dgs" else ["--streams", str(DGS_EXAMPLES / "streams" / "windowing.json")]
    temp = tmp_path / "tmp"
    temp.mkdir()
    with leaves_nothing(temp):
        _check(run([command, f"{path}:PROGRAM", *extra, "--call-timeout", "1", "--timeout", "30", "--json"], 60))


def _output_path(work: Path, kind: str) -> str:
    afile = work / "a-file"
    afile.write_text("x")
    return {"file": str(afile), "dev-null": "/dev/null", "below-file": str(afile / "d"), "empty": "",
            "nul": "a\0b", "proc": "/proc/streamproof-no"}[kind]


@settings(FUZZ, max_examples=EXAMPLES or 12)
@given(st.sampled_from(["--report", "--save-dir"]),
       st.sampled_from(["file", "dev-null", "below-file", "empty", "nul", "proc"]),
       st.sampled_from([[], ["--job", ""], ["--job", ":"], ["--job", "x.py"], ["--job", "x.py:1bad"]]),
       st.booleans())
def test_conformance_output_paths_and_jobs_keep_the_contract(work: Path, flag: str, kind: str, job: list[str],
                                                             as_json: bool) -> None:
    """Each of these is bad input, refused at once (the run never starts)."""
    argv = ["conformance", "--suite", "dgs", "--cases", "1", "--engine", "reference", flag,
            _output_path(work, kind), *job] + (["--json"] if as_json else [])
    outcome = run(argv, LIMIT)
    _check(outcome)
    assert outcome.code == 2, outcome.describe()


BAD_RUN_VALUES = {
    "soak": {"--batches": ["9", "1000000000000", "1" + "0" * 400], "--rows-per-batch": ["0", "10000000"],
             "--keys": ["0", "1" + "0" * 30], "--every": ["0", "100000000"], "--scheduler": ["bogus"],
             "--front-end": ["bogus"]},
    "bench": {"--events": ["0", "1000000000000000", "nan"], "--batch-size": ["-1", "1" + "0" * 400],
              "--cost-ms": ["inf", "1e300", "0"]},
    "nemesis": {"--minutes": ["0", "nan", "1e9"], "--cases": ["0", "51", "1" + "0" * 400], "--jobs": ["", "x"],
                "--faults": ["bogus", ","]},
    "prove": {"--timeout": ["0", "nan", "1e306", "-1"], "--max-operators": ["0", "13", "9" * 400],
              "--only": ["no such claim \ud800"]},
    "modelcheck": {"--max-operators": ["2", "5", "6", "1" + "0" * 400], "--tuples": ["0", "4", "9" * 40]},
    "conformance": {"--cases": ["-1", "1000000000"], "--batch-size": ["0", "1000000000"],
                    "--shrink-budget": ["-1", "1" + "0" * 30], "--job": ["", ":", "nope.py:job"],
                    "--suite": ["bogus"]},
}
GOOD_RUN_VALUES = {"--batches": "10", "--events": "100", "--minutes": "1", "--cases": "1", "--seed": "3",
                   "--json": None, "--scheduler": "fries", "--tuples": "1"}


@settings(FUZZ, max_examples=EXAMPLES or 40)
@given(st.data())
def test_refused_run_arguments_keep_the_contract(data: st.DataObject) -> None:
    """Every long-running command with at least one argument out of its stated bound: exit 2
    with one line naming a flag, within seconds - no Spark, no cluster, no proof started."""
    command = data.draw(st.sampled_from(sorted(BAD_RUN_VALUES)))
    bad = BAD_RUN_VALUES[command]
    flag = data.draw(st.sampled_from(sorted(bad)))
    argv = [command] + (["throughput"] if command == "bench" else [])
    extras = data.draw(st.lists(st.sampled_from(sorted(GOOD_RUN_VALUES)), max_size=2, unique=True))
    for extra in extras:
        value = GOOD_RUN_VALUES[extra]
        argv += [extra] if value is None else [extra, value]
    argv += [flag, data.draw(st.sampled_from(bad[flag]))]
    outcome = run(argv, LIMIT)
    _check(outcome)
    assert outcome.code == 2 and outcome.err.count("\n") == 1, outcome.describe()
