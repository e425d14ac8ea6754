"""``streamproof conformance`` keeps the product's ``streamproof.*`` WARNING lines of its own
engine runs off the user's stderr, and nothing else (docs/conformance.md, after the ``--json``
example; streamproof/commands/conformance.py ``run``; conformance/core/product_logs.py).

The CLI runs in its own process, with no logging configured, as a user runs it: there Python
prints every WARNING to stderr (``logging.lastResort``). The suite's engine is replaced by one
that logs what a live engine run logs (a replay WARNING on ``streamproof.oplus``), an ERROR on
the same logger, and a WARNING of the user's own logger, and passes.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from conformance.core.product_logs import product_logs_quiet
from support.paths import ROOT

SCRIPT = '''
import logging
import sys

import conformance.oplus.suite as suites
from conformance.core.results import CheckResult, SuiteResult
from streamproof.main import main


def engine_run(**options):
    logging.getLogger("streamproof.oplus").warning("batch 3: replayed after a restart (product line)")
    logging.getLogger("streamproof.oplus").error("an error of the product (still shown)")
    logging.getLogger("orders.job").warning("the user's own line (still shown)")
    return SuiteResult("oplus", "reference", 0, checks=[CheckResult("reference vs sequential", cases=1)])


suites.run_oplus_suite = engine_run
code = main(["conformance", "--suite", "oplus", "--engine", "reference", "--cases", "1", "--save-dir", sys.argv[1]])
logging.getLogger("streamproof.oplus").warning("a product line after the command (shown again)")
sys.exit(code)
'''


def test_the_suites_product_warnings_stay_off_stderr_errors_and_the_users_lines_do_not(tmp_path: Path) -> None:
    script = tmp_path / "cli.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "saved")], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    assert "replayed after a restart" not in done.stderr
    for shown in ("an error of the product (still shown)", "the user's own line (still shown)",
                  "a product line after the command (shown again)"):
        assert shown in done.stderr, (shown, done.stderr)


def test_every_product_loggers_level_comes_back_after_the_block_also_when_it_raises() -> None:
    """``product_logs_quiet``: "puts every level back afterwards (also when the block raises)";
    a descendant with a level of its own is raised too, one left NOTSET follows the root."""
    root, own, plain = (logging.getLogger(n) for n in ("streamproof", "streamproof.fries", "streamproof.dgs"))
    before = (root.level, own.level, plain.level)
    own.setLevel(logging.DEBUG)
    try:
        try:
            with product_logs_quiet():
                assert not own.isEnabledFor(logging.WARNING) and not plain.isEnabledFor(logging.WARNING)
                assert own.isEnabledFor(logging.ERROR) and plain.isEnabledFor(logging.ERROR)
                assert not logging.getLogger("streamproof.fries.new").isEnabledFor(logging.WARNING)
                raise KeyError("the block failed")
        except KeyError:
            pass
        assert (root.level, own.level, plain.level) == (before[0], logging.DEBUG, before[2])
        assert own.isEnabledFor(logging.DEBUG) and plain.isEnabledFor(logging.WARNING)
    finally:
        own.setLevel(before[1])
