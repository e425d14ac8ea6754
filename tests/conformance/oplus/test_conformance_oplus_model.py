"""The O+ model check (conformance.oplus.checks.model): no finding on the executor as it is, and
each one-line bug listed below (compiled from the function's source with ``old``
replaced by ``new``) is named, without any Spark job."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from support.source_rewrite import rewritten_function

from conformance.oplus.checks.model import oplus_model_problem

ONE_LINE_BUGS = [
    # (module, function, old, new, also patched as (module, name), the words of the finding)
    ("spark_impl.oplus.instance", "_update", "== index", "is index", [],
     "identity: instance"),                                                      # instance.py:93
    ("spark_impl.oplus.streaming_round", "load_state", "route_key(key, size) == index",
     "route_key(key, size) is index", [], "identity: load_state after a rescale"),  # streaming_round.py:58
    ("spark_impl.oplus.driver", "_handover", "target != index", "target is not index", [],
     "counted keys_moved 2"),                                                    # driver.py _handover
    ("spark_impl.oplus.instance", "_expire", "if not state:", "if not keys:", [],
     "bounded state: sliding-sum WT multi"),                                     # instance.py:147
    ("spark_impl.oplus.instance", "_expire", "if kept:", "if state:", [],
     "bounded state: scalejoin"),                                                # instance.py:136
    ("spark_impl.oplus.instance", "process", "if not keys:", "if not state:", [],
     "the state is {0: {}}"),                                                    # instance.py:78
    ("spark_impl.oplus.operators", "keys_of", "if op.typed_keys", "if not op.typed_keys",
     [("spark_impl.oplus.instance", "keys_of")], "typed keys: typed sliding-sum key 7"),  # operators.py:80
    ("spark_impl.oplus.instance", "_expire", "sorted(keys, key=str)", "sorted(keys)", [],
     "raised TypeError"),                                                        # instance.py:132
    ("spark_impl.oplus.operators", "keys_of", "and len(w) > 1", "and len(w) >= 1",
     [("spark_impl.oplus.instance", "keys_of")], "longest-tweet keys of the text '#'"),  # operators.py:89
    ("spark_impl.oplus.operators", "keys_of", " and len(w) > 1", "",
     [("spark_impl.oplus.instance", "keys_of")], "longest-tweet keys of the text '#'"),
    ("spark_impl.oplus.operators", "keys_of", 'set(str(fields["text"]).split())',
     'set(str(fields["text"]).split(" "))', [("spark_impl.oplus.instance", "keys_of")],
     "wordcount keys of the text 'a  b'"),                                       # operators.py:84
    ("spark_impl.oplus.operators", "keys_of", 'words = str(fields["text"]).split()',
     'words = str(fields["text"]).split(" ")', [("spark_impl.oplus.instance", "keys_of")],
     "paircount keys of the text 'a  b'"),                                       # operators.py:86
    ("spark_impl.oplus.operators", "keys_of", 'str(fields["text"]).split() if',
     'str(fields["text"]).split(" ") if', [("spark_impl.oplus.instance", "keys_of")],
     "longest-tweet keys of the text '#a\\t#b\\n#c'"),                           # operators.py:89
    ("spark_impl.oplus.driver", "run_batch", "if sink_dir is None:", "if sink_dir is not None:",
     [("spark_impl.oplus", "run_batch")], "sink directory: run_batch(..., sink_dir=root) deleted"),  # driver.py:110
    ("spark_impl.oplus.instance", "_drain_chain",
     "left = max(left + op.wa, earliest_left(op, min(ts for ts, _ in entries)))", "left = left + op.wa", [],
     "WT single shift:"),                                                        # instance.py:165
    ("spark_impl.store", "resolve", "key = (parts.scheme, parts.netloc, parts.query)",
     "key = (parts.scheme, parts.query)", [], "one with another bucket"),         # store.py:67, no netloc
    ("spark_impl.store", "resolve", "key = (parts.scheme, parts.netloc, parts.query)",
     "key = (parts.scheme, parts.netloc)", [], "one with another query"),         # store.py:67, no query
    ("spark_impl.oplus.streaming", "start_oplus_query", "keep: int = 2,", "keep: int = 1,", [],
     "hands keep=1"),                                                            # streaming.py:264
    ("spark_impl.oplus.streaming", "start_oplus_query", "keep: int = 2,", "keep: int = 3,", [],
     "hands keep=3"),
]


def test_the_executor_keeps_every_promise_of_the_model_check() -> None:
    assert oplus_model_problem() is None


@pytest.mark.parametrize("module, name, old, new, also, words", ONE_LINE_BUGS,
                         ids=[f"{m[1]}:{m[3][:24]}" for m in ONE_LINE_BUGS])
def test_a_one_line_bug_is_named(monkeypatch: pytest.MonkeyPatch, module: str, name: str, old: str, new: str,
                                 also: list[tuple[str, str]], words: str) -> None:
    target = importlib.import_module(module)
    wrong: Any = rewritten_function(target, name, old, new)
    monkeypatch.setattr(target, name, wrong)
    for other, attr in also:
        monkeypatch.setattr(importlib.import_module(other), attr, wrong)
    found = oplus_model_problem()
    assert found is not None and words in found, found
