"""A sink column type that cannot hold an output (``spark_impl.oplus.streaming_sink``, module
docstring): "fails the delivery with one line naming the sink's ``key_type`` or ``value_type``
and the offending output ... nothing of the batch is delivered or marked delivered". On the
live query over the Spark stand-in (``support.oplus_live_standin``: a ``long`` key and value
sink): a user operator whose outputs are tuples, and a string key.
"""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from spec.errors import InputError

from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig.sinks import CallbackSink

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Stream
from support.oplus_live_standin import COLUMNS, Batch, rows, start_local
from support.paths import SUPPORT

KEY_MAX = f"{SUPPORT / 'oplus_user_operators.py'}:KEY_MAX"


@pytest.mark.parametrize("job, key, column, shown", [
    (oplus_job(KEY_MAX, fields=("key", "value")), 3, "value", "(3, 5)"),
    (oplus_job("sliding-sum", 10, 10), "ann", "key", "'ann'")])
def test_an_output_the_sinks_column_type_cannot_hold_fails_in_one_line_naming_the_type_and_value(
        tmp_path: Any, job: Any, key: Any, column: str, shown: str) -> None:
    live = start_local([job], str(tmp_path / "ckpt"))
    with pytest.raises(InputError) as refused:
        live.batch(0, [{"ts": 1, "key": key, "value": 5}, {"end": True}])
    message = str(refused.value)
    assert "\n" not in message and refused.value.where == "sink", message
    assert message.startswith(f"sink: the sink's {column}_type 'long' cannot hold the {column} {shown} (job 0, ts 10"), \
        message
    assert live.run.batch_error is refused.value
    assert live.delivered == {} and live.run.log.delivered() < 0


def test_the_one_line_is_found_inside_sparks_multi_line_wrapper_of_a_task_error(tmp_path: Any) -> None:
    """On Spark the task's error reaches the driver inside a multi-line ``PythonException``
    (traceback and all): the delivery still fails with the one line. The sink here wraps the
    task's error so, as Spark's ``collect`` does."""

    def wrapping(df: Any, batch_id: int) -> None:
        try:
            df.collect()
        except Exception:
            raise RuntimeError("An exception was thrown from the Python worker:\n"
                               + traceback.format_exc()) from None

    spark, stream = LocalSpark(), Stream(columns=COLUMNS)
    run = start_oplus_query(spark, stream, [oplus_job(KEY_MAX, fields=("key", "value"))],
                            checkpoint_dir=str(tmp_path / "ckpt"),
                            sink=CallbackSink(wrapping, key_type="long", value_type="long"))
    with pytest.raises(InputError) as refused:
        stream.writeStream.handler(Batch(spark, rows([{"ts": 1, "key": 3, "value": 5}, {"end": True}])), 0)
    assert str(refused.value) == ("sink: the sink's value_type 'long' cannot hold the value (3, 5) (job 0, ts 10, "
                                  "key 3): give the sink value_type='string', which holds every value")
    assert run.log.delivered() < 0
