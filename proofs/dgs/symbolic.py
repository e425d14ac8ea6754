"""Running a user's plain-Python code on symbolic values, exploring every feasible path.

A user's ``update``/``out``/``fork``/``join`` are ordinary Python. We call them with values
whose leaves are Z3 terms: :class:`SymInt` (an unbounded integer), :class:`SymBool`,
:class:`SymDict` (a map over a finite key set whose keys may be present or not) and
:class:`SymSet` (a set of tags whose members are unknown, used for fork predicates). Python
operators on them build Z3 terms. When the code *branches* on a symbolic condition (``if``,
``and``, ``max``, ``==`` on containers, ``in``), Python calls ``__bool__``; the current
:class:`Explorer` decides the branch: it follows a recorded prefix of decisions, and at a new
branch asks Z3 which directions are feasible under the path condition, queueing the other
one. Re-running the function for every queued prefix explores every feasible path exactly
once (the code must be deterministic, which the checker requires anyway).

Anything the encoding does not support (hashing a symbolic value, converting it to a Python
``int``, an unsupported operator) raises :class:`Unsupported`; the caller then falls back to
testing examples and says so.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Set
from typing import Any, Callable, Iterable, Iterator

import z3

from proofs.z3util import BoolTerm, IntTerm

_names = itertools.count()


class Unsupported(Exception):
    """The user's code did something the symbolic encoding cannot follow."""


class PathLimit(Exception):
    """More feasible paths than the exploration budget allows."""


class OutOfTime(Exception):
    """The exploration's deadline (``check-dgs --prove-budget``) passed before it finished."""


class Explorer:
    """Decides symbolic branches for one exploration (see the module docstring)."""

    current: "Explorer | None" = None

    def __init__(self, background: Iterable[BoolTerm], *, max_paths: int = 2000,
                 timeout_ms: int = 10_000, deadline: float | None = None) -> None:
        self.solver = z3.Solver()
        self.solver.set("timeout", timeout_ms)
        self.timeout_ms = timeout_ms
        self.deadline = deadline
        for term in background:
            self.solver.add(term)
        self.max_paths = max_paths
        self.prefix: list[bool] = []
        self.decisions: list[bool] = []
        self.pending: list[list[bool]] = []
        self.known: dict[int, bool] = {}
        self.paths = 0

    # --- one path -------------------------------------------------------------------------

    def decide(self, condition: BoolTerm) -> bool:
        """The branch the current path takes on ``condition``."""
        condition = z3.simplify(condition)
        if z3.is_true(condition):
            return True
        if z3.is_false(condition):
            return False
        known = self.known.get(condition.get_id())
        if known is not None:
            return known
        depth = len(self.decisions)
        if depth < len(self.prefix):
            choice = self.prefix[depth]
        else:
            can_true = self._feasible(condition)
            if can_true and self._feasible(z3.Not(condition)):
                self.pending.append(self.decisions + [False])
            choice = can_true
        self.decisions.append(choice)
        self.known[condition.get_id()] = choice
        self.solver.push()
        self.solver.add(condition if choice else z3.Not(condition))
        return choice

    def check_deadline(self) -> None:
        """Raise :class:`OutOfTime` past the deadline; else bound Z3's next query by the time
        left."""
        if self.deadline is None:
            return
        left_ms = int((self.deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            raise OutOfTime("the time budget ran out")
        self.solver.set("timeout", min(self.timeout_ms, left_ms))

    def _feasible(self, condition: BoolTerm) -> bool:
        self.check_deadline()
        self.solver.push()
        self.solver.add(condition)
        result = self.solver.check()
        self.solver.pop()
        if result == z3.unknown:
            self.check_deadline()  # Z3 stopped on the time left: out of time, not unsupported
            raise Unsupported(f"Z3 could not decide a branch ({self.solver.reason_unknown()})")
        return bool(result == z3.sat)

    def model(self) -> Any:
        """A model of the current path condition (call at the end of a path), with the
        integers as close to 0 as Z3's optimiser gets within the time limit, so
        counterexamples show small values."""
        if self.solver.check() != z3.sat:
            raise Unsupported("the path condition became undecidable")
        fallback = self.solver.model()
        optimizer = z3.Optimize()
        left_ms = 2000 if self.deadline is None else int((self.deadline - time.monotonic()) * 1000)
        optimizer.set("timeout", max(1, min(2000, left_ms)))
        optimizer.add(*self.solver.assertions())
        ints = [d() for d in fallback.decls() if d.range() == z3.IntSort()]
        if ints:
            optimizer.minimize(z3.Sum([z3.If(x >= 0, x, -x) for x in ints]))
        return optimizer.model() if optimizer.check() == z3.sat else fallback

    # --- all paths ------------------------------------------------------------------------

    def explore(self, run: Callable[[], Any]) -> Iterator[Any]:
        """Run ``run`` once per feasible path; yield its results. Inside a path, the explorer
        is :attr:`Explorer.current`, so symbolic values route ``__bool__`` here."""
        self.pending = [[]]
        while self.pending:
            self.prefix = self.pending.pop()
            self.decisions = []
            self.known = {}
            self.paths += 1
            self.check_deadline()
            if self.paths > self.max_paths:
                raise PathLimit(f"more than {self.max_paths} paths")
            previous, Explorer.current = Explorer.current, self
            try:
                result = run()
            finally:
                Explorer.current = previous
                while self.solver.num_scopes() > 0:
                    self.solver.pop()
            yield result


def _decide(term: BoolTerm) -> bool:
    explorer = Explorer.current
    if explorer is None:
        raise Unsupported("a symbolic condition was evaluated outside an exploration")
    return explorer.decide(term)


def _term(value: Any) -> Any:
    """The Z3 term of a symbolic value or Python int/bool; Unsupported otherwise."""
    if isinstance(value, (SymInt, SymBool)):
        return value.term
    if isinstance(value, bool):
        return z3.BoolVal(value)
    if isinstance(value, int):
        return z3.IntVal(value)
    raise Unsupported(f"cannot mix a symbolic value with {type(value).__name__}")


def _int(value: Any) -> IntTerm:
    term = _term(value)
    return z3.If(term, 1, 0) if z3.is_bool(term) else term


class SymBool:
    """A symbolic Boolean."""

    __slots__ = ("term",)

    def __init__(self, term: BoolTerm) -> None:
        self.term = term

    @staticmethod
    def fresh(name: str) -> "SymBool":
        """A fresh unknown Boolean."""
        return SymBool(z3.Bool(f"{name}#{next(_names)}"))

    def __bool__(self) -> bool:
        return _decide(self.term)

    def __eq__(self, other: object) -> Any:
        if isinstance(other, (SymBool, bool)):
            return SymBool(self.term == _term(other))
        if isinstance(other, (SymInt, int)):
            return SymInt(_int(self)) == other
        return False

    def __ne__(self, other: object) -> Any:
        result = self.__eq__(other)
        return SymBool(z3.Not(result.term)) if isinstance(result, SymBool) else not result

    def __and__(self, other: Any) -> "SymBool":
        return SymBool(z3.And(self.term, _term(other)))

    __rand__ = __and__

    def __or__(self, other: Any) -> "SymBool":
        return SymBool(z3.Or(self.term, _term(other)))

    __ror__ = __or__

    def __invert__(self) -> "SymBool":
        return SymBool(z3.Not(self.term))

    def __hash__(self) -> int:
        raise TypeError("a symbolic Boolean is not hashable")

    def __repr__(self) -> str:
        return f"<{self.term}>"


class SymInt:
    """A symbolic unbounded integer with Python's integer semantics (floor division and a
    modulo with the divisor's sign)."""

    __slots__ = ("term",)

    def __init__(self, term: IntTerm) -> None:
        self.term = term

    @staticmethod
    def fresh(name: str) -> "SymInt":
        """A fresh unknown integer."""
        return SymInt(z3.Int(f"{name}#{next(_names)}"))

    def _bin(self, other: Any, op: Callable[[Any, Any], Any], swap: bool = False) -> Any:
        if not isinstance(other, (SymInt, SymBool, int)):
            return NotImplemented
        a, b = self.term, _int(other)
        return SymInt(op(b, a) if swap else op(a, b))

    def __add__(self, o: Any) -> Any: return self._bin(o, lambda a, b: a + b)
    def __radd__(self, o: Any) -> Any: return self._bin(o, lambda a, b: a + b, True)
    def __sub__(self, o: Any) -> Any: return self._bin(o, lambda a, b: a - b)
    def __rsub__(self, o: Any) -> Any: return self._bin(o, lambda a, b: a - b, True)
    def __mul__(self, o: Any) -> Any: return self._bin(o, lambda a, b: a * b)
    def __rmul__(self, o: Any) -> Any: return self._bin(o, lambda a, b: a * b, True)
    def __floordiv__(self, o: Any) -> Any: return self._bin(o, _floordiv)
    def __rfloordiv__(self, o: Any) -> Any: return self._bin(o, _floordiv, True)
    def __mod__(self, o: Any) -> Any: return self._bin(o, _mod)
    def __rmod__(self, o: Any) -> Any: return self._bin(o, _mod, True)

    def __neg__(self) -> "SymInt":
        return SymInt(-self.term)

    def __pos__(self) -> "SymInt":
        return self

    def __abs__(self) -> "SymInt":
        return SymInt(z3.If(self.term >= 0, self.term, -self.term))

    def _cmp(self, other: Any, op: Callable[[Any, Any], Any]) -> Any:
        if not isinstance(other, (SymInt, SymBool, int)):
            return NotImplemented
        return SymBool(op(self.term, _int(other)))

    def __lt__(self, o: Any) -> Any: return self._cmp(o, lambda a, b: a < b)
    def __le__(self, o: Any) -> Any: return self._cmp(o, lambda a, b: a <= b)
    def __gt__(self, o: Any) -> Any: return self._cmp(o, lambda a, b: a > b)
    def __ge__(self, o: Any) -> Any: return self._cmp(o, lambda a, b: a >= b)

    def __eq__(self, other: object) -> Any:
        if isinstance(other, (SymInt, SymBool, int)):
            return SymBool(self.term == _int(other))
        return False

    def __ne__(self, other: object) -> Any:
        if isinstance(other, (SymInt, SymBool, int)):
            return SymBool(self.term != _int(other))
        return True

    def __bool__(self) -> bool:
        return _decide(self.term != 0)

    def __hash__(self) -> int:
        raise TypeError("a symbolic integer is not hashable")

    def __index__(self) -> int:
        raise Unsupported("a symbolic integer was used as a Python index or size")

    def __int__(self) -> int:
        raise Unsupported("a symbolic integer was converted to a Python int")

    def __repr__(self) -> str:
        return f"<{self.term}>"


def _floordiv(a: IntTerm, b: IntTerm) -> IntTerm:
    if _decide(b == 0):
        raise ZeroDivisionError("integer division or modulo by zero")
    # Z3's div is Euclidean; for a positive divisor that is floor division.
    return z3.If(b > 0, a / b, (-a) / (-b))


def _mod(a: IntTerm, b: IntTerm) -> IntTerm:
    return a - b * _floordiv(a, b)


class SymDict(Mapping[Any, Any]):
    """A map over the finite key set ``keys``; each key is present or not (a symbolic
    Boolean) with a symbolic value. Reading it decides presence, so user code sees an
    ordinary mapping on every path."""

    def __init__(self, presence: dict[Any, SymBool], contents: dict[Any, Any]) -> None:
        self.presence = presence
        self.contents = contents

    def __getitem__(self, key: Any) -> Any:
        try:
            flag = self.presence[key]
        except (KeyError, TypeError):
            raise KeyError(key) from None
        if flag:
            return self.contents[key]
        raise KeyError(key)

    def __iter__(self) -> Iterator[Any]:
        return iter([k for k, flag in self.presence.items() if flag])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __contains__(self, key: object) -> bool:
        try:
            flag = self.presence[key]
        except (KeyError, TypeError):
            return False
        return bool(flag)

    def __repr__(self) -> str:
        return f"SymDict({list(self.presence)})"


class SymSet(Set[Any]):
    """A set of tags drawn from ``universe`` whose membership is symbolic (fork predicates)."""

    def __init__(self, members: dict[Any, BoolTerm]) -> None:
        self.members = members

    def __contains__(self, item: object) -> bool:
        try:
            term = self.members[item]
        except (KeyError, TypeError):
            return False
        return _decide(term)

    def __iter__(self) -> Iterator[Any]:
        return iter([t for t, term in self.members.items() if _decide(term)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __hash__(self) -> int:
        raise TypeError("a symbolic set is not hashable")

    def __repr__(self) -> str:
        return f"SymSet({list(self.members)})"


def concretize(value: Any, model: Any) -> Any:
    """``value`` with every symbolic part replaced by its value in ``model``."""
    if isinstance(value, SymInt):
        return model.eval(value.term, model_completion=True).as_long()
    if isinstance(value, SymBool):
        return bool(z3.is_true(model.eval(value.term, model_completion=True)))
    if isinstance(value, SymDict):
        return {k: concretize(value.contents[k], model) for k, flag in value.presence.items()
                if concretize(flag, model)}
    if isinstance(value, SymSet):
        return frozenset(t for t, term in value.members.items()
                         if z3.is_true(model.eval(term, model_completion=True)))
    if isinstance(value, tuple):
        return tuple(concretize(v, model) for v in value)
    if isinstance(value, list):
        return [concretize(v, model) for v in value]
    if isinstance(value, dict):
        return {k: concretize(v, model) for k, v in value.items()}
    if isinstance(value, frozenset):
        return frozenset(concretize(v, model) for v in value)
    return value
