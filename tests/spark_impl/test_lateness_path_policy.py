"""``late_policy`` as a path (``spark_impl.lateness``; docs/production/oplus.md, "late_policy",
docs/production/dgs.md, "A late sink"): "a ``pathlib.Path`` or a string with a ``/`` or a
scheme"; "a bare word such as ``"dorp"`` is refused with one line naming ``late_policy``" (a
misspelt policy is not taken as a relative directory), and every documented form still works.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spec.errors import InputError

from spark_impl.lateness import LateParquet, late_policy


@pytest.mark.parametrize("word", ["dorp", "fial", "late", "drops"])
def test_a_bare_word_late_policy_is_refused_in_one_line_naming_late_policy(word: str) -> None:
    with pytest.raises(InputError) as refused:
        late_policy(word)
    message = str(refused.value)
    assert refused.value.where == "late_policy" and "\n" not in message
    assert f"unknown late policy {word!r}" in message and "'drop', 'fail'" in message, message


@pytest.mark.parametrize("path", ["./dorp", "/data/late", "s3a://bucket/late", "file:///tmp/late", "out/late",
                                  Path("late")])
def test_a_path_with_a_separator_or_scheme_or_a_pathlib_path_is_the_parquet_late_sink(path: object) -> None:
    policy = late_policy(path)
    assert policy.kind == "sink" and policy.deliver is not None
    sink = getattr(policy.deliver, "__self__", None)
    assert isinstance(sink, LateParquet) and sink.path == str(path)


def test_the_named_policies_and_sinks_still_parse() -> None:
    def function(df: object, batch_id: int) -> None:
        return None

    assert [late_policy("drop").kind, late_policy("fail").kind, late_policy(function).deliver] == [
        "drop", "fail", function]
