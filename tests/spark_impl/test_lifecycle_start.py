"""``supervised(start)`` (spark_impl.lifecycle; docs/production/operating.md, "A driver that
stops cleanly and says why it ended"): a driver that hands its start function to ``supervised``
ends a start-up failure with ONE stderr line and the documented exit code - bad input
(``InputError``: a user module with a syntax error, a misspelt ``late_policy``, a key column the
stream lacks) is ``streamproof: bad input: ...`` and exit 2, any other start failure
``streamproof: the query could not start: ...`` and exit 1 - never a traceback.

The Spark-free cases fail before Spark is touched; the two that need a streaming DataFrame (the
policy and the column are checked after the stream's columns) run real driver processes (slow:
one SparkSession each)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from support.paths import ROOT as REPOSITORY

ROOT = str(REPOSITORY)

DRIVER = textwrap.dedent('''
    import sys
    from spark_impl.lifecycle import supervised

    case, base = sys.argv[1], sys.argv[2]


    def start():
        if case == "crash":
            raise RuntimeError("the metastore is down")
        if case == "noreturn":
            return None
        from spark_impl.reconfig.sinks import ParquetSink
        from spark_impl.oplus.streaming_jobs import oplus_job
        jobs = ([oplus_job(f"{base}/syntax_op.py:X", parallelism=2)] if case == "syntax"
                else [oplus_job("sliding-sum", 5, 10, WT="multi", parallelism=2)])
        from spark_impl.session import get_or_create_session
        spark = get_or_create_session()
        if case == "dorp":
            from spark_impl.oplus.streaming import start_oplus_query
            stream = spark.readStream.schema("ts long, key string, value long").json(f"{base}/in")
            return start_oplus_query(spark, stream, jobs, checkpoint_dir=f"{base}/ckpt",
                                     sink=ParquetSink(f"{base}/results"), allowed_lateness=5, late_policy="dorp")
        from spec.fries.dataflow import dataflow
        from spark_impl.reconfig import ListSource, UserOperator, user_job
        from spark_impl.reconfig.streaming import start_query
        flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])
        job = user_job(flow, {"M": UserOperator(flow.kind("M"), lambda s, k, v: (s, [(k, v)]))}, ListSource(()))
        stream = spark.readStream.schema("who string, amount long").json(f"{base}/in")
        return start_query(spark, job, stream, scheduler="fries", checkpoint_dir=f"{base}/ckpt",
                           key_column="whoo", value_column="amount", sink=ParquetSink(f"{base}/results"))


    with supervised(start) as run:
        print("not reached: the block ran", flush=True)
''')


def drive(tmp_path: Any, case: str) -> tuple[int, str, str]:
    """Run the driver for ``case``; its exit code, stdout and stderr."""
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    (tmp_path / "in").mkdir()
    (tmp_path / "syntax_op.py").write_text("from spec.oplus.model import OPlus\nX = 1\ndef f(:\n")
    proc = subprocess.run([sys.executable, str(script), case, str(tmp_path)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": ROOT}, cwd=str(tmp_path))
    return proc.returncode, proc.stdout, proc.stderr


def ours(err: str) -> list[str]:
    """The stderr lines that are streamproof's (Spark's JVM prints its own start-up notices)."""
    return [line for line in err.splitlines() if line.startswith("streamproof:") or "Traceback" in line
            or "Error" in line]


def test_a_user_operator_module_with_a_syntax_error_is_one_bad_input_line_and_exit_2(tmp_path: Any) -> None:
    code, out, err = drive(tmp_path, "syntax")
    assert code == 2, err
    assert ours(err) == [f"streamproof: bad input: {tmp_path}/syntax_op.py: cannot load: SyntaxError: invalid "
                         "syntax (syntax_op.py, line 3)"], err
    assert "not reached" not in out


def test_any_other_start_failure_is_one_line_and_exit_1(tmp_path: Any) -> None:
    code, out, err = drive(tmp_path, "crash")
    assert (code, err) == (1, "streamproof: the query could not start: RuntimeError: the metastore is down\n")
    assert "not reached" not in out


def test_a_start_function_that_returns_no_run_is_one_bad_input_line_and_exit_2(tmp_path: Any) -> None:
    code, out, err = drive(tmp_path, "noreturn")
    assert (code, err) == (2, "streamproof: bad input: supervised: the start function returned NoneType, not a run "
                              "(return start_query(...) or the like)\n")
    assert "not reached" not in out


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.parametrize("case,names", [
    ("dorp", "late_policy: unknown late policy 'dorp'"),
    ("keycol", "the stream has no column(s) ['whoo'] (columns: ['who', 'amount'])"),
])
def test_a_start_argument_the_stream_refuses_is_one_bad_input_line_and_exit_2(tmp_path: Any, case: str,
                                                                               names: str) -> None:
    code, out, err = drive(tmp_path, case)
    assert code == 2, err
    lines = ours(err)
    assert len(lines) == 1 and lines[0].startswith("streamproof: bad input: ") and names in lines[0], err
    assert err.endswith(lines[0] + "\n") and "not reached" not in out
