"""Arguments of the long-running commands are checked before any work starts (docs/cli.md:
exit 2 with one stderr line naming the flag; every size a user controls has a stated bound;
output paths are checked before the run; nothing is half-written): ``conformance`` (``--job
''``, ``--cases``, ``--report`` / ``--save-dir``), ``soak`` (``--dir``, ``--batches``),
``bench`` (``--events``), ``prove`` (``--timeout``), ``modelcheck`` (``--max-operators``).
Each refusal comes within seconds - no Spark session, no suite run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from support.hostile_cli import assert_contract, run
from spec.errors import InputError
from streamproof.commands.soak import claim_dir

MARKER = "streamproof-soak.json"  # streamproof.commands.soak.MARKER, the documented file name


def _refused(argv: list[str], *needles: str) -> None:
    started = time.monotonic()
    outcome = run(argv, 20)
    assert_contract(outcome)
    assert outcome.code == 2 and outcome.out == "", outcome.describe()
    for needle in needles:
        assert needle in outcome.err, outcome.describe()
    assert time.monotonic() - started < 10, "refused only after work started"


SMALL_RUN = ["conformance", "--suite", "dgs", "--cases", "1", "--engine", "reference", "--json"]


def test_an_empty_job_is_bad_input() -> None:
    """``--job ''`` was taken as no ``--job``: the whole catalogue suite started."""
    _refused(["conformance", "--job", ""], "--job", "FILE.py:NAME")


@pytest.mark.parametrize("flag", ["--report", "--save-dir"])
@pytest.mark.parametrize("kind", ["a file", "/dev/null", "below a file", "empty"])
def test_an_unwritable_output_directory_is_refused_before_the_run(tmp_path: Path, flag: str, kind: str) -> None:
    """``--report`` / ``--save-dir`` naming an existing file, ``/dev/null`` or an uncreatable path:
    the whole run happened, then exit 3, and the summary and saved failures were lost."""
    afile = tmp_path / "file"
    afile.write_text("keep me")
    path = {"a file": str(afile), "/dev/null": "/dev/null", "below a file": str(afile / "sub"), "empty": ""}[kind]
    _refused(SMALL_RUN + [flag, path], flag)
    assert afile.read_text() == "keep me"


def test_a_new_output_directory_is_not_left_behind_by_the_check(tmp_path: Path) -> None:
    """The check creates nothing: a report directory that does not exist yet is made by the
    run (here: refused for another reason, so it must not exist afterwards)."""
    target = tmp_path / "a" / "b"
    _refused(SMALL_RUN + ["--report", str(target), "--cases", "1000000000"], "--cases")
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize("argv, flag", [
    (["conformance", "--cases", "1000000000"], "--cases"),
    (["conformance", "--job", "x.py:job", "--cases", "1000000000"], "--cases"),
    (["conformance", "--batch-size", "1000000000"], "--batch-size"),
    (["conformance", "--shrink-budget", "1" + "0" * 30], "--shrink-budget"),
    (["soak", "--batches", "1000000000000"], "--batches"),
    (["soak", "--rows-per-batch", "1" + "0" * 400], "--rows-per-batch"),
    (["soak", "--every", "500"], "--every"),
    (["bench", "throughput", "--events", "1000000000000000"], "--events"),
    (["bench", "latency", "--batch-size", "1" + "0" * 400], "--batch-size"),
    (["bench", "reconfiguration", "--cost-ms", "1e300"], "--cost-ms"),
    (["nemesis", "--minutes", "nan"], "--minutes"),
    (["nemesis", "--cases", "1000000"], "--cases"),
])
def test_sizes_beyond_their_stated_bound_are_refused(argv: list[str], flag: str) -> None:
    """``soak --batches 10^12``, ``bench throughput --events 10^15``, ``conformance --cases
    10^9`` started runs no machine can finish."""
    _refused(argv + ["--json"], f"{flag}: must be")


def test_soak_refuses_a_regular_file_as_its_directory(tmp_path: Path) -> None:
    """``soak --dir FILE``: Spark started, then exit 3 after 31 s."""
    afile = tmp_path / "file"
    afile.write_text("keep me")
    _refused(["soak", "--dir", str(afile), "--json"], "--dir", "not a directory")
    assert afile.read_text() == "keep me"


def test_soak_refuses_a_directory_another_soak_used(tmp_path: Path) -> None:
    """docs/cli.md: a ``--dir`` used by another soak (running or finished) is refused with one
    line; a soak does not resume (the second run gave no result in 400 s)."""
    used = tmp_path / "used"
    used.mkdir()
    (used / MARKER).write_text(json.dumps({"format": "streamproof.soak-dir/1", "pid": 1}))
    _refused(["soak", "--dir", str(used), "--json"], "--dir", "already holds a soak")
    other = tmp_path / "other"
    other.mkdir()
    (other / "data.parquet").write_text("x")
    _refused(["soak", "--dir", str(other), "--json"], "--dir", "not empty")


def test_soak_claims_its_directory_exclusively(tmp_path: Path) -> None:
    """The first soak marks an empty ``--dir`` (created if new) before Spark starts; a second
    one is then refused."""
    target = tmp_path / "new" / "dir"
    claim_dir(str(target))
    assert json.loads((target / MARKER).read_text())["format"] == "streamproof.soak-dir/1"
    with pytest.raises(InputError, match="already holds a soak"):
        claim_dir(str(target))


@pytest.mark.parametrize("value", ["1e306", "1000001", "inf", "nan", "0", "-5"])
def test_prove_timeout_beyond_its_bound_is_refused(value: str) -> None:
    """``prove --timeout 1e306`` was exit 3 (Z3 takes milliseconds as an unsigned 32-bit number)."""
    _refused(["prove", "--only", "Lemma 5.5", "--max-operators", "1", "--timeout", value], "--timeout")


def test_prove_tiny_timeout_is_a_timeout_not_no_limit() -> None:
    """A timeout below one millisecond is one millisecond (0 ms would mean "no limit" to Z3)."""
    outcome = run(["prove", "--only", "Lemma 5.5", "--max-operators", "10", "--timeout", "0.0001", "--json"], 60)
    assert_contract(outcome)
    assert [r["status"] for r in json.loads(outcome.out)["results"]] == ["timeout"]


@pytest.mark.parametrize("bound", ["2", "5", "6", "0", "1" + "0" * 100])
def test_modelcheck_bound_outside_three_to_four_is_refused(bound: str) -> None:
    """docs/cli.md: ``--max-operators`` is 3 or 4 (2 always exited 1 with no counterexample -
    no 2-object dataflow lets the naive scheduler go wrong; 6 was accepted although 5 already
    takes about 2.5 hours)."""
    _refused(["modelcheck", "--max-operators", bound, "--json"], "--max-operators")


def test_modelcheck_more_tuples_only_at_three() -> None:
    """docs/cli.md: ``--tuples 2`` at 4 objects ran for more than 400 s; it is refused there."""
    _refused(["modelcheck", "--max-operators", "4", "--tuples", "2", "--json"], "--tuples")


def test_modelcheck_at_three_finds_the_naive_counterexample() -> None:
    """The smallest bound accepted gives the expected answer (exit 0: naive's violation found,
    none for Fries and epoch) in seconds."""
    outcome = run(["modelcheck", "--max-operators", "3", "--json"], 60)
    assert_contract(outcome)
    assert outcome.code == 0, outcome.describe()
    rows = {row["scheduler"]: row for row in json.loads(outcome.out)["results"]}
    assert rows["naive"]["violations"] > 0 and rows["fries"]["violations"] == 0
