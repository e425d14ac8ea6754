"""Vectors round trip: export with the reference, check on the reference (all match), and a
tampered vector is reported as a mismatch (exit 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamproof.main import main


def test_export_then_check_round_trips_and_catches_tampering(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "export", str(tmp_path), "--cases", "12", "--oplus-cases", "12", "--seed", "5"]) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    assert len(index["vectors"]) == 24
    fries = json.loads((tmp_path / "fries" / "0003.json").read_text())
    assert fries["format"] == "streamproof-vector/1" and {"order", "outputs", "states"} <= set(fries["expected"])
    capsys.readouterr()
    assert main(["vectors", "check", str(tmp_path), "--engine", "reference", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["matched"] == 24 and report["mismatched"] == []
    # tamper with an O+ vector's expected rows and a Fries vector's recorded reference outputs
    oplus_path = next(p for p in sorted((tmp_path / "oplus").glob("*.json"))
                      if json.loads(p.read_text())["expected"])
    oplus = json.loads(oplus_path.read_text())
    oplus["expected"][0]["value"] = 10**6
    oplus_path.write_text(json.dumps(oplus))
    assert main(["vectors", "check", str(tmp_path), "--engine", "reference"]) == 1
    out = capsys.readouterr().out
    assert f"MISMATCH oplus/{oplus_path.name}" in out and "1 mismatched" in out
    fries["reference_run"]["outputs"].append(["X", "S0:0", 0, 0])
    (tmp_path / "fries" / "0003.json").write_text(json.dumps(fries))
    assert main(["vectors", "check", str(tmp_path), "--engine", "reference"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH fries/0003.json: the reference's outputs changed since export" in out and "2 mismatched" in out


def test_check_of_a_missing_directory_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["vectors", "check", str(tmp_path / "none"), "--engine", "reference"]) == 2
    assert "no such file" in capsys.readouterr().err
