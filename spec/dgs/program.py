"""DGS programs (DGS Def. 2.1), as a typed wrapper around a user's plain-Python program.

A program has (Def. 2.1, items 1-7):

* a finite set of *tags* (DGS §2.2 "Representing predicates": an event is a pair of a tag,
  relevant for parallelization, and a payload; predicates are **sets of tags**), and
  ``tag(event)`` giving an event's tag;
* a symmetric dependence relation ``depends(tag1, tag2)`` on tags (item 2), lifted to events
  through ``tag``; ``indep`` is its negation;
* finitely many state types (item 4), each with a predicate ``pred_i`` - here the set of tags
  a state of that type may process (item 5) - and its own ``update_i`` / ``out_i`` (item 6);
  the initial type ``State_0`` must accept every tag (``pred_0 = true``);
* ``init()``, a value of ``State_0``;
* forks ``fork: (State_i, Pred, Pred) -> (State_j, State_k)`` and joins
  ``join: (State_j, State_k) -> State_i`` (item 7), each with a name.

``out(s, e)`` is the output of processing ``e`` in state ``s`` (the state *before* the
update), as in C3's ``out(s, e1) + out(update(s, e1), e2)``.

Every call into user code goes through :func:`call_user`, which turns an exception into a
:class:`UserCodeError` naming the function and the exception: the CLI reports it in one line
(exit 2) instead of a traceback. A fork called with dependent predicates is refused the same
way (:meth:`Program.fork`), because Def. 2.1 only defines ``fork`` on independent predicates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping

from spec.errors import InputError

Tag = Hashable
Event = Any
State = Any
Pred = frozenset[Tag]


class UserCodeError(InputError):
    """An exception raised inside the user's program (or a user function returning a value of
    the wrong shape). ``function`` names it, e.g. ``"KeyCounter.update"``."""

    def __init__(self, function: str, problem: str) -> None:
        self.function = function
        super().__init__(problem, function)


def short_repr(value: Any, limit: int = 120) -> str:
    """``repr(value)`` cut to ``limit`` characters (error messages stay one short line)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__} with a failing __repr__>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_error(error: BaseException, limit: int = 300) -> str:
    """``"Type: message"`` of an exception raised by user code, on one line and at most
    ``limit`` characters; safe when the exception's ``str()`` itself raises."""
    try:
        text = str(error)
    except Exception as failure:  # noqa: BLE001 - a broken __str__ must not hide the real error
        text = f"<its str() raised {type(failure).__name__}>"
    text = " | ".join(part.strip() for part in text.splitlines() if part.strip())
    text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_user(function: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call user code ``fn(*args)``; any exception becomes a :class:`UserCodeError` that names
    ``function``, the exception and the arguments."""
    try:
        return fn(*args)
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 - user code may raise anything
        raise UserCodeError(function, f"raised {describe_error(error)} (called with {args_text(args)})") from error


def args_text(args: tuple[Any, ...]) -> str:
    """The arguments of a call into user code, for an error message."""
    return ", ".join(short_repr(a, 60) for a in args) or "no arguments"


def tags_text(tags: Iterable[Tag]) -> str:
    """A predicate (set of tags) in words, deterministically ordered."""
    return "{" + ", ".join(sorted(short_repr(t, 60) for t in tags)) + "}"


@dataclass(frozen=True)
class StateType:
    """``State_i`` with its predicate ``pred_i`` (the tags it may process), ``update_i``,
    ``out_i`` and an optional semantic equality (Def. 2.1 items 4-6)."""

    name: str
    pred: Pred
    update: Callable[[State, Event], State]
    out: Callable[[State, Event], Any]
    state_eq: Callable[[State, State], Any] | None = None


@dataclass(frozen=True)
class ForkPrim:
    """A fork ``(State_source, Pred, Pred) -> (State_left, State_right)`` (Def. 2.1 item 7)."""

    name: str
    source: str
    left: str
    right: str
    fn: Callable[[State, Pred, Pred], Any]


@dataclass(frozen=True)
class JoinPrim:
    """A join ``(State_left, State_right) -> State_target`` (Def. 2.1 item 7)."""

    name: str
    left: str
    right: str
    target: str
    fn: Callable[[State, State], State]


@dataclass(frozen=True)
class Program:
    """A loaded, validated DGS program (Def. 2.1). Build it with :mod:`spec.dgs.loader`.

    ``dependents`` is ``depends`` tabulated over ``tags`` (checked symmetric at load time), so
    the dependence relation is evaluated once per pair of tags, never during execution."""

    name: str
    tags: Pred
    tag_fn: Callable[[Event], Tag]
    dependents: Mapping[Tag, Pred]
    initial: str
    init_fn: Callable[[], State]
    state_types: Mapping[str, StateType]
    forks: Mapping[str, ForkPrim]
    joins: Mapping[str, JoinPrim]
    events: Callable[[], Any]
    splits: tuple[tuple[Pred, Pred], ...] | None = None
    event_strategy: Any = None
    _sorted_tags: tuple[Tag, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sorted_tags", tuple(sorted(self.tags, key=repr)))

    # --- tags and dependence (Def. 2.1 items 1-2) ---------------------------------------------

    @property
    def sorted_tags(self) -> tuple[Tag, ...]:
        """The tags ordered by ``repr`` (a deterministic order for generators and output)."""
        return self._sorted_tags

    def tag(self, event: Event) -> Tag:
        """The event's tag; an InputError if the user's ``tag`` returns a tag not in ``tags``."""
        result = call_user(f"{self.name}.tag", self.tag_fn, event)
        try:
            known = result in self.tags
        except TypeError:
            known = False
        if not known:
            raise UserCodeError(
                f"{self.name}.tag",
                f"returned {short_repr(result)} for event {short_repr(event)}, "
                "which is not one of the program's tags",
            )
        tag: Tag = result
        return tag

    def depends(self, tag1: Tag, tag2: Tag) -> bool:
        """``depends(tag1, tag2)`` (symmetric by construction)."""
        return tag2 in self.dependents[tag1]

    def independent_sets(self, pred1: Iterable[Tag], pred2: Iterable[Tag]) -> bool:
        """True iff every tag of ``pred1`` is independent of every tag of ``pred2``."""
        second = frozenset(pred2)
        return all(not (self.dependents[t] & second) for t in pred1)

    def dependent_pair(self, pred1: Iterable[Tag], pred2: Iterable[Tag]) -> tuple[Tag, Tag] | None:
        """Some ``(t1, t2)`` with ``t1`` in ``pred1``, ``t2`` in ``pred2`` and
        ``depends(t1, t2)``, or None when the two predicates are independent."""
        second = frozenset(pred2)
        for t1 in sorted(pred1, key=repr):
            common = self.dependents[t1] & second
            if common:
                return t1, sorted(common, key=repr)[0]
        return None

    def require_independent(self, pred1: Iterable[Tag], pred2: Iterable[Tag], where: str) -> None:
        """Refuse (InputError at ``where``) predicates a fork may not be given: Def. 2.1 defines
        fork only on independent ``pred1``, ``pred2``. The message names a dependent pair."""
        pair = self.dependent_pair(pred1, pred2)
        if pair is not None:
            raise InputError(
                f"a fork given dependent predicates: left tag {short_repr(pair[0])} depends on "
                f"right tag {short_repr(pair[1])}",
                where,
            )

    # --- the sequential implementation (Def. 2.1 item 6) ---------------------------------------

    def init(self) -> State:
        """``init: State_0``."""
        return call_user(f"{self.name}.init", self.init_fn)

    def update(self, state_type: str, state: State, event: Event) -> State:
        """``update_i(s, e)`` for the state type named ``state_type``."""
        st = self.state_types[state_type]
        return call_user(self._fn_name(st, "update"), st.update, state, event)

    def out(self, state_type: str, state: State, event: Event) -> list[Any]:
        """``out_i(s, e)`` as a list (the output of processing ``e`` in state ``s``)."""
        st = self.state_types[state_type]
        name = self._fn_name(st, "out")
        result = call_user(name, st.out, state, event)
        if isinstance(result, (str, bytes, Mapping)):  # iterable, but not a list of outputs
            raise UserCodeError(name, f"returned {short_repr(result)}, expected a list")
        try:
            return list(result)
        except TypeError:
            raise UserCodeError(name, f"returned {short_repr(result)}, expected a list") from None

    def states_equal(self, state_type: str, a: State, b: State) -> bool:
        """State equality: the program's ``state_eq`` for this type (which must answer True or
        False, like ``depends``), else ``==``."""
        st = self.state_types[state_type]
        if st.state_eq is None:
            same: bool = call_user(f"== on {state_type} states", lambda x, y: bool(x == y), a, b)
            return same
        name = self._fn_name(st, "state_eq")
        answer = call_user(name, st.state_eq, a, b)
        if not isinstance(answer, bool):  # e.g. a forgotten return: treated like depends
            raise UserCodeError(
                name, f"returned {short_repr(answer)} for ({args_text((a, b))}), expected True or False"
            )
        return answer

    # --- parallelization primitives (Def. 2.1 item 7) ------------------------------------------

    def fork(self, name: str, state: State, pred1: Pred, pred2: Pred) -> tuple[State, State]:
        """Call fork ``name``; refuses dependent predicates (Def. 2.1: fork is only defined on
        independent ``pred1``, ``pred2``) and a result that is not a pair."""
        label = self._prim_name("fork", name)
        self.require_independent(pred1, pred2, label)
        result = call_user(label, self.forks[name].fn, state, frozenset(pred1), frozenset(pred2))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise UserCodeError(label, f"returned {short_repr(result)}, expected a pair of states")
        return result[0], result[1]

    def join(self, name: str, left: State, right: State) -> State:
        """Call join ``name``."""
        return call_user(self._prim_name("join", name), self.joins[name].fn, left, right)

    def fork_join_pairs(self, source: str | None = None) -> list[tuple[ForkPrim, JoinPrim]]:
        """Every (fork, join) pair with matching types, fork ``S_i -> (S_j, S_k)`` and join
        ``(S_j, S_k) -> S_i`` (the pairs that Def. 2.2 case 4 and C2 combine); only forks
        from ``source`` when given. Sorted by names for determinism."""
        pairs = []
        for fork in sorted(self.forks.values(), key=lambda f: f.name):
            if source is not None and fork.source != source:
                continue
            for join in sorted(self.joins.values(), key=lambda j: j.name):
                if (join.left, join.right, join.target) == (fork.left, fork.right, fork.source):
                    pairs.append((fork, join))
        return pairs

    # --- names for messages -----------------------------------------------------------------

    @property
    def simple(self) -> bool:
        """True for the one-state-type form (names in messages drop the state type)."""
        return len(self.state_types) == 1

    def _fn_name(self, st: StateType, what: str) -> str:
        return f"{self.name}.{what}" if self.simple else f"{self.name}.state_types[{st.name!r}].{what}"

    def _prim_name(self, kind: str, name: str) -> str:
        if self.simple and name == kind:
            return f"{self.name}.{kind}"
        return f"{self.name}.{kind}s[{name!r}]"
