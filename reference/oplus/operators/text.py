"""The tweet operators of §8.1 and Appendix D, over a text payload:

* wordcount (Operator 14): keys = the distinct words; value = tuples carrying the word;
* paircount (Operator 14): keys = distinct ``"W[i] W[j]"`` with ``i < j``, ``j - i <= B``
  (B = 3, 10, unbounded for low / medium / high duplication); value = tuples carrying it;
* longest-tweet (Operator 9): keys = distinct hashtags; value = the longest text's length.

Words are the whitespace-separated tokens of the text (``str.split()``), case kept.
"""

from __future__ import annotations

import operator

from spec.oplus.model import OPlus, StreamTuple, WindowType
from spec.oplus.windows import WindowSpec
from reference.oplus.operators.aggregates import incremental_aggregate


def words_of(t: StreamTuple) -> frozenset[str]:
    """f_MK of wordcount."""
    return frozenset(str(t.payload).split())


def pairs_of(text: str, distance: int | None) -> frozenset[str]:
    """f_MK of paircount: pairs of words at most ``distance`` apart (None = any)."""
    words = text.split()
    n = len(words)
    reach = n if distance is None else distance  # j - i <= reach, never past the end
    return frozenset(
        f"{words[i]} {words[j]}"
        for i in range(n)
        for j in range(i + 1, min(n, i + reach + 1))
    )


def hashtags_of(t: StreamTuple) -> frozenset[str]:
    """f_MK of longest-tweet: words starting with '#' and longer than '#'."""
    return frozenset(w for w in str(t.payload).split() if w.startswith("#") and len(w) > 1)


def wordcount(windows: WindowSpec, window_type: WindowType) -> OPlus:
    """Operator 14, wordcount."""
    return incremental_aggregate("wordcount", windows, words_of, lambda k, t: 1,
                                 operator.add, window_type)


def paircount(windows: WindowSpec, window_type: WindowType, distance: int | None) -> OPlus:
    """Operator 14, paircount with maximum pair distance ``distance``."""
    return incremental_aggregate("paircount", windows,
                                 lambda t: pairs_of(str(t.payload), distance),
                                 lambda k, t: 1, operator.add, window_type)


def longest_tweet(windows: WindowSpec, window_type: WindowType) -> OPlus:
    """Operator 9: the longest tweet (in characters) per hashtag and window."""
    return incremental_aggregate("longest-tweet", windows, hashtags_of,
                                 lambda k, t: len(str(t.payload)), max, window_type)
