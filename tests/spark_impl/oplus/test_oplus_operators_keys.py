"""The O+ operators' keys and windows (``spark_impl.oplus.operators``), without Spark.

* ``keys_of``, "f_MK: the keys a tuple belongs to", equals the reference's
  (``reference.oplus.operators.text``): "Words are the whitespace-separated tokens of the text
  (``str.split()``)", hashtags are "words starting with '#' and longer than '#'" - on texts with
  tabs, newlines, repeated spaces and a bare ``#``, which the drawn texts never hold;
* ``lefts_of``: a tuple at ``ts`` is in exactly the window instances ``L`` on the ``WA`` grid
  with ``L <= ts < L + WS`` (Def. 1); under the seeded fault ``window-off-by-one`` "the right
  boundary is treated as inclusive": ``L <= ts <= L + WS``.
"""

from __future__ import annotations

import pytest

from spec.oplus.model import StreamTuple

from reference.oplus.operators.text import hashtags_of, pairs_of, words_of

from spark_impl.oplus.operators import OperatorConfig, in_window, keys_of, lefts_of

TEXTS = ("#", "# #a ##", "a  b", "\ta b\n", " #x  #x ", "#a\t#b\n#c", "#a b #a c\u00a0d", "a b c d e f")


@pytest.mark.parametrize("text", TEXTS)
def test_text_keys_are_the_references_words_pairs_and_hashtags(text: str) -> None:
    t = StreamTuple(0, 0, 0, text)
    assert keys_of(OperatorConfig("wordcount", 1, 1, False), {"text": text}) == sorted(words_of(t))
    assert keys_of(OperatorConfig("paircount", 1, 1, False, distance=3), {"text": text}) == sorted(pairs_of(text, 3))
    assert keys_of(OperatorConfig("paircount", 1, 1, False, distance=None), {"text": text}) == sorted(
        pairs_of(text, None))
    assert keys_of(OperatorConfig("longest-tweet", 1, 1, False), {"text": text}) == sorted(hashtags_of(t))


WINDOWS = ((1, 4), (2, 4), (2, 5), (3, 3))
"""(WA, WS): tumbling, sliding, WS not a multiple of WA."""


@pytest.mark.parametrize("wa, ws", WINDOWS)
@pytest.mark.parametrize("faulty", [False, True], ids=["exact", "window-off-by-one"])
def test_a_tuple_is_in_exactly_the_window_instances_of_its_definition(wa: int, ws: int, faulty: bool) -> None:
    op = OperatorConfig("sliding-sum", wa, ws, False, off_by_one=faulty)
    for ts in range(-2 * ws, 3 * ws):
        want = [left for left in range(ts - ws - wa, ts + 1) if left % wa == 0 and left <= ts
                and (ts <= left + ws if faulty else ts < left + ws)]
        assert list(lefts_of(op, ts)) == want, ts
        assert all(in_window(op, left, ts) for left in want)
