"""An output the DGS sink's column type cannot hold (``spark_impl.dgs.streaming_sink``, module
docstring): it "fails the delivery with one line naming ``value_type``, the output, its job and
batch ... nothing of the batch is delivered or recorded as delivered". On the live query over
the Spark stand-in (:mod:`conformance.standin`): the key counter's outputs are tuples
``(key, count)``, which a ``long`` column cannot hold; the sink's function collects the delivery
(plain, and wrapping the task's error in a multi-line text as Spark does).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.errors import InputError

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Frame, Stream
from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.reconfig.sinks import CallbackSink
from support.kept_deliveries import Kept
from support.paths import TESTS

COUNTER = os.path.join(str(TESTS), "support", "dgs_live_programs.py:WordCounter")
PLAN = keyed_plan(load_program(COUNTER), ("s0", "s1"), 2)
ROWS = [{"stream": "s0", "ts": 1, "event": ["i", "alice"]}, {"stream": "s1", "ts": 2, "event": ["r", "alice"]},
        {"stream": "s0", "ts": 50, "heartbeat": True}, {"stream": "s1", "ts": 50, "heartbeat": True}]


def _start(root: Path, sink: Any) -> tuple[DgsStreamingRun, Stream]:
    stream = Stream(columns=("value",))
    return start_dgs_query(LocalSpark(), [LiveJob(COUNTER, PLAN)], stream, checkpoint_dir=str(root), sink=sink), stream


@pytest.mark.parametrize("wrap", [False, True])
def test_an_output_the_sinks_column_cannot_hold_fails_the_delivery_in_one_line_and_nothing_is_recorded(
        tmp_path: Path, wrap: bool) -> None:
    kept = Kept(wrap)
    run, stream = _start(tmp_path, CallbackSink(kept, value_type="long"))
    with pytest.raises(InputError) as refused:
        stream.handler(Frame([json.dumps(r) for r in ROWS]), 0)
    assert str(refused.value) == ("sink: the sink's value_type 'long' cannot hold the value ('alice', 1) (job 0, "
                                  "batch 0): give the sink value_type='string', which holds every value")
    assert refused.value.__cause__ is None and str(run.error) == str(refused.value)
    assert kept.calls == {} and run.committed().batch == 0 and run.committed().delivered < 0
    # committed, not delivered: a restart whose sink's column holds the outputs delivers it, once
    fixed = Kept()
    again, _ = _start(tmp_path, CallbackSink(fixed))
    assert fixed.calls == {0: [(0, 0, '["alice", 1]')]} and again.committed().delivered == 0
