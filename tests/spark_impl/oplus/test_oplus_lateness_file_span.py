"""docs/production/oplus.md, "Choosing ``allowed_lateness``": with a file source the disorder is
"the **combined** event-time span of the files that may land together ... and so be read in
either order", not the span of one file; the page's example: two files of 8 units, ts 0..7 and
8..15, read later-first need ``allowed_lateness`` 15, and 9 loses ts 0..5. Checked on the live
O+ query over the Spark stand-in (``support.oplus_live_standin``): each file one micro-batch,
the later file first, under ``late_policy="drop"``.
"""

from __future__ import annotations

import re
from typing import Any

from spark_impl.oplus.streaming_jobs import oplus_job

from support.oplus_live_standin import start_local
from support.paths import ROOT

EARLY = [{"ts": t, "key": 1, "value": 1} for t in range(0, 8)]
LATER = [{"ts": t, "key": 1, "value": 1} for t in range(8, 16)]


def _late_when_read_later_first(directory: str, lateness: int) -> int:
    live = start_local([oplus_job("sliding-sum", 4, 4)], directory, allowed_lateness=lateness, late_policy="drop")
    live.batch(0, LATER)
    live.batch(1, EARLY)
    live.batch(2, [{"end": True}])
    return live.run.late()[0]


def _guidance() -> str:
    page = (ROOT / "docs" / "production" / "oplus.md").read_text()
    section = page.split("### Choosing `allowed_lateness`", 1)[1].split("###", 1)[0]
    return " ".join(section.split())


def test_choosing_allowed_lateness_the_combined_span_of_files_read_in_either_order_loses_nothing(
        tmp_path: Any) -> None:
    guidance = _guidance()
    assert "combined** event-time span of the files that may land together" in guidance, guidance
    span = max(t["ts"] for t in EARLY + LATER) - min(t["ts"] for t in EARLY + LATER)
    assert f"`allowed_lateness` {span} is needed" in guidance
    assert _late_when_read_later_first(str(tmp_path / "combined"), span) == 0


def test_choosing_allowed_lateness_one_files_span_is_too_small_as_the_page_warns(tmp_path: Any) -> None:
    guidance = _guidance()
    said = re.search(r"and (\d+) \(one file's span plus a margin\) loses ts 0\.\.(\d+)", guidance)
    assert said is not None, guidance
    lateness, last_lost = int(said.group(1)), int(said.group(2))
    assert lateness > max(t["ts"] for t in EARLY) - min(t["ts"] for t in EARLY)  # more than one file's span
    assert _late_when_read_later_first(str(tmp_path / "one"), lateness) == last_lost + 1
