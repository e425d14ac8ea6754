"""docs/spark.md's live recipes, run as a user would run them ("a user can follow
docs/spark.md to run an O+ windowed job and a DGS job on a live stream with string keys,
rescale/reconfigure it while it runs, kill and restart the driver, and read the exactly-once
results from Parquet").

The files are the doc's code blocks whose first line is ``# <name>.py: ...``, copied as they
are. Default run (no Spark): every recipe file is there, compiles, imports only names that
exist, and the DGS program file loads. Slow, one test per recipe: the driver script in its own
process (its own SparkSession), files landing while it runs, a reconfiguration / rescale /
re-plan requested while it runs, the driver killed with SIGKILL (process group: JVM and Python
workers too) in the middle of the stream, more files, the driver started again on the same
``BASE``, then the reader script; its rows are compared with the sequential semantics.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

import pytest

from support.doc_blocks import assert_compiles_and_imports_exist, doc_scripts
from support.paths import ROOT
from conformance.oplus.engines.reference import reference_rows
from spark_impl.dgs.streaming_store import Store
from spark_impl.dgs.topology import topology
from spark_impl.oplus.streaming_jobs import route_key
from spark_impl.oplus.streaming_log import Log
from spec.dgs.loader import load_program
from spec.dgs.plan import plan_from_json
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json

DOC = os.path.join(str(ROOT), "docs", "spark.md")
RECIPES = {"fries": ("fries_driver.py", "fries_read.py"), "oplus": ("oplus_driver.py", "oplus_read.py"),
           "dgs": ("dgs_driver.py", "dgs_read.py", "word_counter.py")}
USERS = ("ann", "bob", "cy", "dé", "e f")  # string keys, one not ASCII, one with a space
WAIT_S = 900.0


def recipe_files() -> dict[str, str]:
    """``{file name: code}`` of every recipe block of docs/spark.md (a name twice is an error)."""
    return doc_scripts(DOC)


def test_every_recipe_file_is_in_the_doc_compiles_and_imports_what_exists() -> None:
    files = recipe_files()
    for names in RECIPES.values():
        for name in names:
            assert name in files, f"docs/spark.md has no block '# {name}: ...'"
    for name, code in files.items():
        assert_compiles_and_imports_exist(name, code)


def test_the_dgs_recipes_program_file_is_a_valid_consistent_program(tmp_path: Any) -> None:
    path = tmp_path / "word_counter.py"
    path.write_text(recipe_files()["word_counter.py"], encoding="utf-8")
    program = load_program(f"{path}:WordCounter")
    state = program.update(program.initial, program.init(), ("i", "dé"))
    assert program.out(program.initial, state, ("r", "dé")) == [("dé", 1)]


# --- running the recipes -------------------------------------------------------------------


@dataclass
class Recipe:
    """One recipe's files written to ``root/recipe``, its ``BASE`` at ``root/base``."""

    root: str
    names: tuple[str, ...]
    landed: int = 0
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def __post_init__(self) -> None:
        os.makedirs(os.path.join(self.root, "recipe"))
        os.makedirs(os.path.join(self.base, "in"))
        files = recipe_files()
        for name in self.names:
            with open(os.path.join(self.root, "recipe", name), "w", encoding="utf-8") as handle:
                handle.write(files[name])
        self.t0 = int(time.time()) - 10_000

    @property
    def base(self) -> str:
        return os.path.join(self.root, "base")

    def land(self, rows: list[dict[str, Any]]) -> None:
        """The next input file: written aside, renamed in, modification times in landing order."""
        tmp = os.path.join(self.root, f".land-{self.landed}")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        os.utime(tmp, (self.t0 + self.landed, self.t0 + self.landed))
        os.replace(tmp, os.path.join(self.base, "in", f"part-{self.landed:04d}.json"))
        self.landed += 1

    def start(self, script: str, *args: str) -> subprocess.Popen[bytes]:
        """``python script BASE args...`` in its own process group, output to files."""
        number = len(self.procs)
        out = open(os.path.join(self.root, f"driver-{number}.out"), "wb")
        err = open(os.path.join(self.root, f"driver-{number}.err"), "wb")
        proc = subprocess.Popen([sys.executable, os.path.join(self.root, "recipe", script), self.base, *args],
                                stdout=out, stderr=err, start_new_session=True, cwd=self.root)
        out.close()
        err.close()
        self.procs.append(proc)
        return proc

    def output(self, proc: subprocess.Popen[bytes]) -> str:
        with open(os.path.join(self.root, f"driver-{self.procs.index(proc)}.out"), encoding="utf-8") as handle:
            return handle.read()

    def wait(self, proc: subprocess.Popen[bytes], what: str, done: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not done():
            if proc.poll() is not None:
                raise AssertionError(f"the driver exited ({proc.returncode}) before {what}:\n{self.tail(proc)}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} in {WAIT_S:.0f} s:\n{self.tail(proc)}")
            time.sleep(0.2)

    def tail(self, proc: subprocess.Popen[bytes]) -> str:
        with open(os.path.join(self.root, f"driver-{self.procs.index(proc)}.err"), encoding="utf-8",
                  errors="replace") as handle:
            return handle.read()[-3000:]

    def committed(self, batch: int) -> bool:
        """Structured Streaming committed micro-batch ``batch`` (one file per batch)."""
        return os.path.exists(os.path.join(self.base, "ckpt", "query", "commits", str(batch)))

    def feed(self, proc: subprocess.Popen[bytes], files: list[list[dict[str, Any]]]) -> None:
        """Land each file once the previous one is committed (a live stream)."""
        for rows in files:
            self.land(rows)
            self.wait(proc, f"commit of batch {self.landed - 1}", lambda: self.committed(self.landed - 1))

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL the driver's process group (its JVM and Python workers too)."""
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()

    def two_drivers(self, script: str, arg: str, files: list[list[dict[str, Any]]], steps: list[tuple[str, int]],
                    rng: random.Random, check: Callable[[], None] = lambda: None) -> int:
        """The user's session: ``files[0]`` lands; ``python script BASE arg``; per step
        ``(marker, upto)``, once the driver printed ``marker``, files up to ``upto`` land one
        by one (each after the previous is committed); ``check()``; the next file lands and the
        driver is SIGKILLed at a random moment while it takes it; one more file lands;
        ``python script BASE`` (no argument) takes the rest; then it is killed too. Returns the
        index of the file landed at the kill."""
        self.land(files[0])
        first = self.start(script, arg)
        for marker, upto in steps:
            self.wait(first, repr(marker), lambda marker=marker: marker in self.output(first))
            self.feed(first, files[self.landed:upto])
        check()
        killed_at = self.landed
        self.land(files[killed_at])
        time.sleep(rng.uniform(0.0, 2.5))
        self.kill(first)
        self.land(files[killed_at + 1])
        second = self.start(script)
        self.feed(second, files[self.landed:])
        self.kill(second)
        return killed_at

    def read(self, script: str) -> list[dict[str, Any]]:
        """The reader's JSON lines."""
        done = subprocess.run([sys.executable, os.path.join(self.root, "recipe", script), self.base],
                              capture_output=True, text=True, timeout=WAIT_S, cwd=self.root)
        assert done.returncode == 0, done.stderr[-3000:]
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                self.kill(proc)


@pytest.fixture
def recipe_dir(tmp_path: Any) -> Any:
    made: list[Recipe] = []

    def make(name: str) -> Recipe:
        made.append(Recipe(str(tmp_path), RECIPES[name]))
        return made[-1]

    yield make
    for recipe in made:
        recipe.cleanup()


@pytest.mark.slow
def test_fries_recipe_reconfigure_kill_restart_read(recipe_dir: Any) -> None:
    """fries_driver.py with a reconfiguration while it runs, SIGKILL mid-stream, restart,
    fries_read.py. Sequential semantics of a per-key count under one request: every input
    tuple gives exactly one output, ``amount`` before the request reached its key's worker and
    ``2 * amount`` after, never back (also not after the restart)."""
    rng = random.Random(14)
    recipe = recipe_dir("fries")
    amounts = iter(range(1, 10_000, 2))  # distinct odd amounts: v odd = old version, v = 2a = new one
    files: list[list[dict[str, Any]]] = [[{"user": rng.choice(USERS), "amount": next(amounts)} for _ in range(6)]
                                        for _ in range(9)]
    # a batch is committed after the request completed, then the kill
    after = recipe.two_drivers("fries_driver.py", "reconfigure", files, [("request accepted", 3), ("reconfigured", 4)],
                               rng)
    rows = recipe.read("fries_read.py")
    inputs: dict[int, tuple[int, str]] = {int(row["amount"]): (f, str(row["user"])) for f, chunk in enumerate(files)
                                          for row in chunk}

    def amount(value: int) -> int:  # the input tuple an output came from
        return value if value % 2 else value // 2

    assert Counter(amount(r["value"]) for r in rows) == Counter(list(inputs)), "each input tuple exactly once"
    assert all(inputs[amount(r["value"])][1] == r["key"] for r in rows)
    version = {amount(r["value"]): int(r["value"] % 2 == 0) for r in rows}
    for user in USERS:
        order = [version[a] for a in sorted(a for a, (_, u) in inputs.items() if u == user)]
        assert order == sorted(order), f"{user}: the new version must follow the old one, never precede it"
    assert {version[a] for a, (f, _) in inputs.items() if f >= after} == {1}, "the restart kept the request"
    assert 0 in version.values()


@pytest.mark.slow
def test_oplus_recipe_rescale_kill_restart_read(recipe_dir: Any) -> None:
    """oplus_driver.py rescaled 2 -> 4 while it runs, SIGKILL mid-stream, restart,
    oplus_read.py: the rows equal the sequential reference's (each once), each from its key's
    instance under the parallelism in force in its batch."""
    rng = random.Random(15)
    recipe = recipe_dir("oplus")
    ts, files = 0, []
    for _ in range(9):
        chunk = []
        for _ in range(rng.randint(3, 6)):
            ts += rng.randint(0, 4)
            chunk.append({"ts": ts, "user": rng.choice(USERS), "amount": rng.randint(-3, 9)})
        files.append(chunk)
    files[-1].append({"end": True})
    log = Log(os.path.join(recipe.base, "ckpt"))

    def applied() -> None:
        status = log.latest()
        assert status is not None and status.parallelism == {0: 4}, "applied while the query ran"

    recipe.two_drivers("oplus_driver.py", "4", files, [("rescale request", 4)], rng, applied)
    rows = recipe.read("oplus_read.py")
    case = {"operator": "sliding-sum", "WA": 5, "WS": 10, "WT": "multi", "parallelism": 1,
            "inputs": [[{"ts": i["ts"], "key": i["user"], "value": i["amount"]} for f in files for i in f if "ts" in i]]}
    got = Counter((int(r["ts"]), r["key"], json.dumps(int(r["value"]))) for r in rows)
    assert got == Counter(reference_rows(case, "sequential"))
    final = log.latest()
    assert final is not None
    (change,) = final.rescales
    assert (change["before"], change["after"]) == (2, 4)
    for r in rows:
        assert r["instance"] == route_key(r["key"], 2 if r["batch"] <= change["batch"] else 4), r


@pytest.mark.slow
def test_dgs_recipe_replan_kill_restart_read(recipe_dir: Any) -> None:
    """dgs_driver.py re-planned 2 -> 3 leaves while it runs, SIGKILL mid-stream, restart with
    the 2-leaf plan (re-planned at start), dgs_read.py: the outputs are spec(sort(u)) exactly
    once."""
    rng = random.Random(16)
    recipe = recipe_dir("dgs")
    program = load_program(os.path.join(recipe.root, "recipe", "word_counter.py:WordCounter"))
    keys = ("alice", "bob", "carol", "dave", "eve")
    streams: dict[str, list[Any]] = {"s0": [], "s1": []}
    rows = []
    for t in range(1, 61):
        stream = ("s0", "s1")[t % 2]
        event = (rng.choice("iir"), rng.choice(keys))
        streams[stream].append(StreamEvent(t, event))
        rows.append({"stream": stream, "ts": t, "event": list(event)})
    for stream in streams:
        streams[stream].append(Heartbeat(61))
        rows.append({"stream": stream, "ts": 61, "heartbeat": True})
    files = [rows[k: k + 7] for k in range(0, len(rows), 7)]
    store = Store(os.path.join(recipe.base, "ckpt", "dgs"))

    def leaves() -> int:
        commit = store.read()
        assert commit is not None
        return len(topology(program, plan_from_json(commit.jobs[0][1])).leaves)

    def replanned() -> None:
        assert leaves() == 3, "re-planned while the query ran"

    recipe.two_drivers("dgs_driver.py", "3", files, [("re-plan requested", 3)], rng, replanned)
    assert leaves() == 2, "the restart with the 2-leaf plan re-planned the state back"
    got = Counter(json.dumps(r["output"]) for r in recipe.read("dgs_read.py"))
    _, expected = spec_run(program, sort_streams(streams))
    assert got == Counter(json.dumps(value_to_json(x)) for x in expected)
