"""Strings built from both ends: a consistent program whose join is ORDER-SENSITIVE.

Every other shipped consistent program has a join that is commutative on reachable states
(sums, equal copies, the newer epoch), so an executor that joins a worker's children right to
left produces exactly the right outputs with them. Here the join concatenates the left
child's string and the right child's string, and both are non-empty in general.

Events, per key ``k`` in ``KEYS``: ``("pre", k, c)`` prepends the character ``c`` to key
``k``'s string, ``("app", k, c)`` appends it, ``("read", k, "")`` outputs ``(k, string)``.
The tag is ``(kind, k)``. Dependence (symmetric): two prepends of one key (their order
decides the string), two appends of one key, and a read with a prepend or append of its key.
A prepend and an append of the same key are *independent*: ``c + s + d`` either way (C3).

State types (the multi-state-type form of DGS Def. 2.1):

* ``Whole`` (``State_0``, every tag): ``{key: string}``;
* ``Front`` (the prepends only) and ``Back`` (the appends only): also ``{key: string}``.

Forks and joins:

* ``split: Whole -> (Front, Back)``: the strings go left (the side that prepends), the right
  side starts empty; ``concat: (Front, Back) -> Whole`` is ``left + right`` per key;
* ``split_back: Whole -> (Back, Front)`` the mirror image: the left side appends, the right
  prepends, so ``concat_back: (Back, Front) -> Whole`` is ``right + left`` per key;
* ``split_front`` / ``split_back_keys`` fork a ``Front`` / ``Back`` further by key (a key's
  string goes to the side whose predicate has that key's tag, the left one if neither), and
  ``join_front`` / ``join_back_keys`` concatenate per key (one side's string is empty).

A read needs both ends of its key, so V1 keeps reads at a ``Whole`` worker (the root), and
every read is a synchronizing event that joins the two ends: joined the wrong way round,
``c + s + d`` becomes ``s + d + c`` and the read's output is wrong. States compare as maps
where a missing key is the empty string.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

KEYS = (0, 1)
Event = tuple[str, int, str]
State = dict[int, str]


def _prepend(state: State, event: Event) -> State:
    return {**state, event[1]: event[2] + state.get(event[1], "")}


def _append(state: State, event: Event) -> State:
    return {**state, event[1]: state.get(event[1], "") + event[2]}


def _whole_update(state: State, event: Event) -> State:
    if event[0] == "pre":
        return _prepend(state, event)
    return _append(state, event) if event[0] == "app" else state


def _whole_out(state: State, event: Event) -> list[tuple[int, str]]:
    return [(event[1], state.get(event[1], ""))] if event[0] == "read" else []


def _no_out(state: State, event: Event) -> list[Any]:
    return []


def _ends(state: State, left: frozenset[Any], right: frozenset[Any]) -> tuple[State, State]:
    """Whole -> (Front, Back): the strings to the prepending side."""
    return dict(state), {}


def _ends_back(state: State, left: frozenset[Any], right: frozenset[Any]) -> tuple[State, State]:
    """Whole -> (Back, Front): the strings to the prepending side, the right one."""
    return {}, dict(state)


def _by_key(state: State, left: frozenset[Any], right: frozenset[Any]) -> tuple[State, State]:
    """Front -> (Front, Front) and Back -> (Back, Back): each key's string to the side that
    handles that key (left if neither)."""
    keys_right = {tag[1] for tag in right}
    return ({k: v for k, v in state.items() if k not in keys_right},
            {k: v for k, v in state.items() if k in keys_right})


def _concat(left: State, right: State) -> State:
    return {k: left.get(k, "") + right.get(k, "") for k in set(left) | set(right)}


def _concat_back(left: State, right: State) -> State:
    return _concat(right, left)


def _same(a: State, b: State) -> bool:
    return {k: v for k, v in a.items() if v} == {k: v for k, v in b.items() if v}


_PRE = frozenset(("pre", k) for k in KEYS)
_APP = frozenset(("app", k) for k in KEYS)


class Concat:
    """Per-key strings built by prepends and appends; reads output them."""

    tags = frozenset((kind, k) for kind in ("pre", "app", "read") for k in KEYS)
    initial = "Whole"
    state_types: dict[str, dict[str, Any]] = {
        "Whole": {"update": _whole_update, "out": _whole_out, "state_eq": _same},
        "Front": {"tags": _PRE, "update": _prepend, "out": _no_out, "state_eq": _same},
        "Back": {"tags": _APP, "update": _append, "out": _no_out, "state_eq": _same},
    }
    forks: dict[str, dict[str, Any]] = {
        "split": {"from": "Whole", "to": ("Front", "Back"), "fn": _ends},
        "split_back": {"from": "Whole", "to": ("Back", "Front"), "fn": _ends_back},
        "split_front": {"from": "Front", "to": ("Front", "Front"), "fn": _by_key},
        "split_back_keys": {"from": "Back", "to": ("Back", "Back"), "fn": _by_key},
    }
    joins: dict[str, dict[str, Any]] = {
        "concat": {"from": ("Front", "Back"), "to": "Whole", "fn": _concat},
        "concat_back": {"from": ("Back", "Front"), "to": "Whole", "fn": _concat_back},
        "join_front": {"from": ("Front", "Front"), "to": "Front", "fn": _concat},
        "join_back_keys": {"from": ("Back", "Back"), "to": "Back", "fn": _concat},
    }

    @staticmethod
    def tag(event: Event) -> tuple[str, int]:
        return event[0], event[1]

    @staticmethod
    def depends(t1: tuple[str, int], t2: tuple[str, int]) -> bool:
        if t1[1] != t2[1]:
            return False
        kinds = {t1[0], t2[0]}
        return kinds in ({"pre"}, {"app"}) or ("read" in kinds and kinds != {"read"})

    @staticmethod
    def init() -> State:
        return {}

    @staticmethod
    def events() -> st.SearchStrategy[Event]:
        return st.one_of(
            st.tuples(st.sampled_from(("pre", "app", "pre", "app", "read")), st.sampled_from(KEYS),
                      st.sampled_from("abcd")).map(lambda e: (e[0], e[1], "" if e[0] == "read" else e[2])),
        )
