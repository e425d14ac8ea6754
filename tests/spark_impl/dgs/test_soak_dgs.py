"""``streamproof soak --front-end dgs`` (spark_impl.workloads.soak_dgs): the soak's input items
are the ones its verdict assumes, its expected outputs are the DGS sequential semantics of that
input (spec.dgs.semantics.spec_run), its verdict has teeth, and (slow) a short soak through the
live DGS front end with re-plans loses and duplicates nothing."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from streamproof.main import main
from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_from_json
from spark_impl.workloads.soak_dgs import PROGRAM, STREAMS, check_outputs, expected_outputs, item, item_column

CONTRACT = {"batches", "disk_bytes_start", "disk_bytes_end", "rss_bytes_start", "rss_bytes_end",
            "batch_ms_p50_start", "batch_ms_p50_end", "lost", "duplicated"}


def _streams(n: int, keys: int) -> dict[str, list[Any]]:
    streams: dict[str, list[Any]] = {s: [] for s in STREAMS}
    for value in range(n):
        raw = item(value, keys)
        streams[raw["stream"]].append(Heartbeat(raw["ts"]) if raw.get("heartbeat")
                                      else StreamEvent(raw["ts"], value_from_json(raw["event"])))
    return streams


def test_expected_outputs_are_the_sequential_semantics_of_the_input() -> None:
    program = load_program(PROGRAM)
    for n, keys in ((57, 5), (200, 50), (33, 1)):
        _, outputs = spec_run(program, sort_streams(_streams(n, keys)))
        assert expected_outputs(n, keys, set()) == Counter(tuple(o) for o in outputs)


def test_the_verdict_counts_lost_duplicated_and_wrong_counts() -> None:
    good = sorted(expected_outputs(40, 3, set()))
    assert check_outputs(good, 40, 3, set()) == (0, 0)
    assert check_outputs(good[1:], 40, 3, set()) == (1, 0)
    assert check_outputs(good + good[:2], 40, 3, set()) == (0, 2)
    key, value, count = good[5]
    assert check_outputs(good[:5] + [(key, value, count + 1)] + good[6:], 40, 3, set()) == (1, 1)
    # the last events of two keys still wait in the mailbox: not expected yet, not lost
    last = {k: max(v for kk, v, _ in good if kk == k) for k in ("k0", "k1")}
    rest = [row for row in good if row[1] not in set(last.values())]
    assert check_outputs(rest, 40, 3, set(last.values())) == (0, 0)
    # an event that waits while a later event of its key was processed: counts shift, caught
    first = min(v for k, v, _ in good if k == "k0")
    assert check_outputs([row for row in good if row[1] != first], 40, 3, {first}) != (0, 0)


@pytest.mark.spark
def test_the_spark_items_are_the_items_the_verdict_assumes(spark: Any) -> None:
    rows = spark.range(0, 45).select("id").withColumnRenamed("id", "value").select(item_column(7).alias("i"))
    assert [json.loads(r["i"]) for r in rows.collect()] == [item(v, 7) for v in range(45)]


def test_too_many_keys_for_the_program_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soak", "--front-end", "dgs", "--keys", "300"]) == 2
    captured = capsys.readouterr()
    assert "--keys: the DGS soak's program has 256 keys" in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and captured.out == ""


@pytest.mark.slow
@pytest.mark.spark
def test_a_short_dgs_soak_with_replans_loses_and_duplicates_nothing(spark: Any,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soak", "--front-end", "dgs", "--batches", "20", "--every", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == CONTRACT
    assert figures["batches"] == 20 and figures["lost"] == 0 and figures["duplicated"] == 0
    assert figures["disk_bytes_start"] > 0 and figures["rss_bytes_start"] > 0
