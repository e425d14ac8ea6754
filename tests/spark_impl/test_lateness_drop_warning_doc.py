"""docs/production/operating.md, "WARNING for every drop (`batch 7: dropped 3 late tuple(s)
(allowed_lateness 0); first: ...`; DGS: `late event(s)`)": the page shows the line
``spark_impl.lateness.log_late`` writes, word for word up to the first late item.
"""

from __future__ import annotations

import logging
import re

import pytest

from spark_impl.lateness import LateTuple, late_policy, log_late

from support.paths import ROOT


def _documented() -> str:
    page = " ".join((ROOT / "docs" / "production" / "operating.md").read_text().split())
    found = re.search(r"\*\*WARNING\*\* for every drop \(`([^`]*)`", page)
    assert found is not None, "the WARNING bullet of the page is gone"
    return found.group(1)


def test_the_warning_for_every_drop_is_the_line_the_page_shows(caplog: pytest.LogCaptureFixture) -> None:
    documented = _documented()
    assert documented.endswith("; first: ..."), documented
    batch, count, lateness = (int(n) for n in re.findall(r"\d+", documented)[:3])
    logger = logging.getLogger("streamproof.oplus")
    first = LateTuple(ts=3, source=0, seq=4, job=0, key="'cy'", watermark=23)
    with caplog.at_level(logging.WARNING, logger="streamproof.oplus"):
        log_late(logger, batch, count, first, late_policy("drop"), lateness)
    [line] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert line.startswith(documented.removesuffix("..."))
