"""``spark_impl.query_errors.describe_error``: the one line ``supervised`` prints for a dead
query names its cause (docs/production/operating.md, "the query failed"; the module docstring's
rule: the last error statement that is not a wrapper, plus the outermost error class as where).

The two ``query_error_texts/*.txt`` files are real query error texts (``str(query.exception())``
of a Fries query on Spark 4, stack frames thinned to one per block, paths generalised): a
FAILFAST JSON source meeting a malformed record, and a user function raising in a Python worker.
"""

from __future__ import annotations

from pathlib import Path

from spark_impl.query_errors import describe_error

TEXTS = Path(__file__).parent / "query_error_texts"


def test_a_malformed_record_under_failfast_names_the_field_and_the_file_not_the_python_proxy() -> None:
    line = describe_error((TEXTS / "failfast_malformed_json_record.txt").read_text(encoding="utf-8"))
    assert line.startswith("[CANNOT_PARSE_JSON_FIELD] Cannot parse the field name 'qty' and the value three"), line
    assert "(in [FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///data/orders/in/f00005.json.)" in line
    assert "Python Proxy" not in line and "SQLSTATE" not in line and "\n" not in line


def test_a_user_function_raising_in_a_python_worker_is_named_by_its_own_exception() -> None:
    text = (TEXTS / "user_function_raised_in_python_worker.txt").read_text(encoding="utf-8")
    assert describe_error(text) == "IndexError: list index out of range"


def test_a_python_exception_in_foreach_batch_is_the_users_exception() -> None:
    text = ("[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function in foreach batch "
            "sink. Reason: An exception was raised by the Python Proxy. Return Message: Traceback (most recent "
            "call last):\n  File \"job.py\", line 3, in count\n    raise ValueError(x)\n"
            "ValueError: negative amount -5 for ann\n\n\tat py4j.Protocol.getReturnValue(Protocol.java:476)\n"
            "Caused by: py4j.Py4JException: An exception was raised by the Python Proxy. Return Message: "
            "Traceback (most recent call last):\nValueError: negative amount -5 for ann\n\tat x.y(Z.java:1)\n")
    assert describe_error(text) == "ValueError: negative amount -5 for ann"


def test_a_python_exception_raised_from_another_is_the_one_that_propagated() -> None:
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'amount'\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
            "Traceback (most recent call last):\n  File \"x.py\", line 3\n"
            "spec.errors.InputError: batch 3: row has no 'amount'\n")
    assert describe_error(text) == "InputError: batch 3: row has no 'amount'"


def test_a_jvm_exception_chain_names_its_root_cause() -> None:
    text = ("org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 4.0 failed 1 "
            "times\n\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:1)\n"
            "Caused by: java.io.FileNotFoundException: File file:/data/in/f1.json does not exist\n"
            "\tat org.apache.hadoop.fs.RawLocalFileSystem.deprecatedGetFileStatus(RawLocalFileSystem.java:1)\n"
            "\t... 12 more\n")
    assert describe_error(text) == "FileNotFoundException: File file:/data/in/f1.json does not exist"


def test_a_lone_error_class_is_named_and_a_wrapping_stream_failure_gives_way_to_what_it_wraps() -> None:
    assert describe_error("[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column named `amount` cannot be resolved. "
                          "SQLSTATE: 42703") == ("[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column named `amount` cannot "
                                                 "be resolved.")
    text = ("[STREAM_FAILED] Query [id = 1, runId = 2] terminated with exception: [DIVIDE_BY_ZERO] Division by "
            "zero. SQLSTATE: 22012\n")
    assert describe_error(text) == "[DIVIDE_BY_ZERO] Division by zero."


def test_no_error_statement_falls_back_to_the_first_line_and_the_line_is_bounded() -> None:
    assert describe_error("[STREAM_FAILED] Query terminated\nwith nothing") == "[STREAM_FAILED] Query terminated"
    assert describe_error("something broke\nbadly") == "something broke"
    assert describe_error("") == "unknown error"
    assert len(describe_error("x" * 1000)) == 300
    long = describe_error("ValueError: " + "v" * 1000 + "\n")
    assert len(long) == 300 and long.endswith("...")
