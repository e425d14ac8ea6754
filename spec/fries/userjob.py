"""What a *user job* is, as every executor sees it: the structural types of a job of user
operators (Fries §2.1-2.2, Def. 2.1, §7.1-7.2), shared by ``spark_impl`` and ``reference``.

The production API (:func:`spark_impl.reconfig.user_job`, ``UserOperator``, ``user_update``,
``Request``) builds :class:`spark_impl.reconfig.model.Job` objects. The reference's serial
executor of user jobs (:mod:`reference.fries.userjob`) must run *the same objects* - the
user's own functions, any key and state type - yet ``reference`` may import only ``spec`` and
``spark_impl`` must never import ``reference``. So the contract both sides rely on lives here,
as :class:`typing.Protocol` s: ``spark_impl``'s concrete, picklable dataclasses satisfy them
structurally (``mypy --strict`` checks it wherever a ``Job`` is handed to the reference), and
the reference reads nothing else of a job. Nothing moved out of ``spark_impl.reconfig.model``:
user code and ``spark_impl`` keep working unchanged, and the reference never sees Spark.

Why protocols and not the concrete types moved into ``spec``: the concrete types carry
``spark_impl`` concerns (stable routing of any key type by :mod:`spark_impl.keys`, cloudpickle,
directory sources, pacing hooks); the reference needs only the *meaning* of a job:

* an operator's logic ``process(state, key, value) -> (state', [(receiver, key, value)])``
  (receiver ``""``: the operator is a sink and the triple is an output) and, for a blocking
  operator, ``flush(state, key) -> [(receiver, key, value)]`` at end of input (§7.1); ``state``
  is ``None`` before the key's first tuple;
* a request maps operators to an update = new logic + state transformation ``T_O`` applied to
  the state of every key the operator holds (Def. 2.1);
* a planned request is made after ``at`` source tuples were ingested;
* the source is replayable: tuple ``i`` is ``(source operator, transaction id, key, value)``;
* ``object_of(operator, key)`` names the worker (§7.2) holding ``key``, ``objects(operator)``
  all of them - the names schedules (Def. 4.7) use.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol, Sequence

from spec.fries.dataflow import Dataflow

Emitted = list[tuple[str, Any, Any]]
"""What one call of an operator emits: (receiving operator, key, value); receiver "" = sink."""


class Logic(Protocol):
    """An operator's computation function f_O (Fries §2.1) and its end-of-input flush (§7.1)."""

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, Emitted]:
        """One input tuple: the key's new state and what is emitted."""
        ...

    def flush(self, state: Any, key: Any) -> Emitted:
        """End of input for ``key`` (non-blocking operators: nothing)."""
        ...


class JobUpdate(Protocol):
    """u(O) of Def. 2.1: new logic and the state transformation T_O."""

    @property
    def logic(self) -> Logic: ...

    @property
    def transform(self) -> Callable[[Any], Any]: ...


class JobRequest(Protocol):
    """A reconfiguration request R = {(O, u(O))} (Def. 2.1)."""

    @property
    def updates(self) -> Mapping[str, JobUpdate]: ...


class JobPlanned(Protocol):
    """A request made once ``at`` source tuples were ingested."""

    @property
    def at(self) -> int: ...

    @property
    def request(self) -> JobRequest: ...


class JobSource(Protocol):
    """A replayable, finite source (module docstring)."""

    def count(self) -> int:
        """Number of tuples."""
        ...

    def get(self, index: int) -> tuple[str, str, Any, Any]:
        """Tuple ``index``: (source operator, transaction id, key, value)."""
        ...


class UserJob(Protocol):
    """A job of user operators (module docstring)."""

    @property
    def dataflow(self) -> Dataflow: ...

    @property
    def logic(self) -> Mapping[str, Logic]: ...

    @property
    def source(self) -> JobSource: ...

    @property
    def planned(self) -> Sequence[JobPlanned]: ...

    def object_of(self, operator: str, key: Any) -> str:
        """The object (worker) holding ``key`` at ``operator``."""
        ...

    def objects(self, operator: str) -> tuple[str, ...]:
        """Every object of ``operator``."""
        ...


UserOutput = tuple[str, str, Any, Any]
"""An output record of a user job: (sink operator, transaction id, key, value)."""
