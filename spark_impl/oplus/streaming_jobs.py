"""What a live O+ query runs (:class:`OplusJob`) and the rows its stream carries.

A job is one catalogue operator (``spec.oplus.scenario.CATALOGUE``: sliding-sum, wordcount,
paircount, longest-tweet, scalejoin, forward; WT single or multi) with its windows, initial
parallelism and number of input sources. Validation is the scenario format's
(``parse_scenario`` on the job with empty inputs), so a live job accepts exactly what
``streamproof oplus`` accepts. Or it is a user-defined O+ (``spec.oplus.model.OPlus``, given as
an object or ``"file.py:NAME"``) with the stream ``fields`` its payload is made of
(:mod:`spark_impl.oplus.user_operator`).

**Stream rows** (columns of the streaming DataFrame; missing optional columns mean the default):

* ``ts`` (long): the event time of a tuple; null on a mark row;
* ``job`` (int, default 0): which job of the query the row belongs to;
* ``source`` (int, default 0): the input (TB source) it comes from, ``0 .. sources - 1``;
* ``watermark`` (long, optional): on a *mark* row, an explicit watermark of its source (the
  scenario format's ``{"watermark": w}``);
* ``end`` (boolean, optional): on a mark row, the source has ended (its bound becomes +inf,
  which emits every remaining window of the job once all its sources ended);
* ``seq`` (long, optional): a tie-breaker of the TB order ``(ts, source, seq)``;
* every other column is a tuple field (a null in it is ``None``), of any Spark type docs/production/types.md
  lists, in its documented Python form (:mod:`spark_impl.values`): ``key`` (a string, number,
  struct or array, which becomes a tuple, decimal, date, timestamp...) and ``value`` for
  sliding-sum, ``text`` for the text operators, ``x``/``y`` (source 0) and ``a``/``b``
  (source 1) for scalejoin, ``value`` for forward.

A source's *bound* is the largest timestamp minus the query's ``allowed_lateness``, or the
largest explicit watermark, it has delivered (with ``allowed_lateness`` 0 each source must
deliver its tuples in event-time order, as a scenario's input list does; with ``d`` a tuple
may come up to ``d`` after a newer one, :mod:`spark_impl.lateness`); a job's watermark is the
minimum bound over its sources (TB's merged watermark, spec.oplus.watermarks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Mapping

from spec.errors import InputError
from spec.oplus.budget import MAX_PARALLELISM
from spec.oplus.model import OPlus
from spec.oplus.scenario import CATALOGUE, Scenario, instance_of, parse_scenario

from spark_impl.keys import route
from spark_impl.lateness import LateTuple, late_tuple
from spark_impl.oplus.operators import OperatorConfig
from spark_impl.oplus.user_operator import UserOperator, user_operator
from spark_impl.values import decoder, normalize

RESERVED = ("job", "source", "ts", "watermark", "end", "seq")
"""Stream columns that are not tuple fields."""

Entry = tuple[int, int, "int | None", "int | None", bool, int, dict[str, Any]]
"""One stream row: ``(job, source, ts or None, explicit watermark or None, end, seq, fields)``."""


@dataclass(frozen=True)
class OplusJob:
    """One windowed operator of a live query (build it with :func:`oplus_job`): a catalogue
    ``scenario``, or a ``user`` operator (:mod:`spark_impl.oplus.user_operator`)."""

    scenario: Scenario | None = field(repr=False)
    sources: int
    user: UserOperator | None = None
    initial: int = 1  # a user job's initial parallelism (a catalogue job's is its scenario's)

    @property
    def parallelism(self) -> int:
        """The initial parallelism."""
        return self.scenario.parallelism if self.scenario is not None else self.initial

    def config(self, off_by_one: bool = False) -> OperatorConfig:
        """The operator as Spark tasks run it (keys of any type: ``typed_keys``); for a user
        job only its name, windows and the seeded fault ``off_by_one`` (the tasks run ``user``)."""
        if self.scenario is None:
            user = self.user
            assert user is not None  # oplus_job builds one or the other
            return OperatorConfig(f"user:{user.name}", user.wa, user.ws, user.single, typed_keys=True,
                                  off_by_one=off_by_one)
        return replace(OperatorConfig.of(self.scenario, off_by_one), typed_keys=True)

    def required_fields(self, source: int) -> tuple[str, ...]:
        """The tuple fields a row of ``source`` must carry."""
        if self.scenario is None:
            assert self.user is not None
            return self.user.fields_of(source)
        fields = self.scenario.description.fields
        return tuple(name for name, _ in (fields[source] if len(fields) > 1 else fields[0]))

    def non_null_fields(self, source: int) -> tuple[str, ...]:
        """The tuple fields of ``source`` that must not be null: a catalogue operator computes
        on them (sums and compares integers, splits text), and its scenario format refuses a null
        there too (``spec.oplus.scenario``), so the live path and the reference agree; only
        sliding-sum's ``key`` may be ``None`` (keys of any type, :func:`route_key`). A user
        operator's fields may all be ``None`` (its functions receive them as they are)."""
        if self.scenario is None:
            return ()
        return tuple(n for n in self.required_fields(source) if n != "key")


def oplus_job(operator: str | OPlus, WA: int | None = None, WS: int | None = None, *, WT: str | None = None,
              parallelism: int = 1, params: Mapping[str, Any] | None = None, sources: int | None = None,
              fields: Any = None) -> OplusJob:
    """A validated job (InputError on anything ``streamproof oplus`` would refuse).

    ``operator``: a catalogue name (then ``WA`` and ``WS`` are required), or a user-defined O+:
    a ``spec.oplus.model.OPlus`` object or ``"path/to/file.py:NAME"`` naming one (then the
    windows and window type are the operator's; ``WA``/``WS``/``WT``, if given, must agree;
    ``fields``: the stream columns its payload is made of, :mod:`spark_impl.oplus.user_operator`).
    ``sources``: the number of input sources (the operator's, 2, for scalejoin and forward, a
    user operator's ``inputs`` when above 1; default 1 otherwise)."""
    if isinstance(operator, OPlus) or (isinstance(operator, str) and operator not in CATALOGUE and ":" in operator):
        return _user_job(operator, WA, WS, WT, parallelism, params, sources, fields)
    if fields is not None:
        raise InputError("fields= is for user-defined operators (a catalogue operator's fields are fixed)", "fields")
    if WA is None or WS is None:
        raise InputError(f"the catalogue operator {operator!r} needs WA and WS", "WA" if WA is None else "WS")
    desc = CATALOGUE.get(operator)
    fixed = desc.inputs if desc is not None else None
    count = sources if sources is not None else (fixed or 1)
    if count < 1:
        raise InputError(f"must be >= 1, got {count}", "sources")
    raw: dict[str, Any] = {"operator": operator, "WA": WA, "WS": WS, "parallelism": parallelism,
                           "inputs": [[] for _ in range(count)], "params": dict(params or {})}
    if WT is not None:
        raw["WT"] = WT
    return OplusJob(parse_scenario(raw, "job"), count)


def _user_job(operator: str | OPlus, WA: int | None, WS: int | None, WT: str | None, parallelism: int,
              params: Mapping[str, Any] | None, sources: int | None, fields: Any) -> OplusJob:
    """:func:`oplus_job` of a user-defined operator."""
    user, count = user_operator(operator, fields=fields, sources=sources)
    for name, given, own in (("WA", WA, user.wa), ("WS", WS, user.ws),
                             ("WT", WT, "single" if user.single else "multi")):
        if given is not None and given != own:
            raise InputError(f"the operator {user.name!r} has {name} = {own!r}, got {given!r}", name)
    if params:
        raise InputError("params= is for catalogue operators (a user operator's parameters are its own)", "params")
    if isinstance(parallelism, bool) or not isinstance(parallelism, int) or not 1 <= parallelism <= MAX_PARALLELISM:
        raise InputError(f"must be an integer in 1..{MAX_PARALLELISM}, got {parallelism!r}", "parallelism")
    return OplusJob(None, count, user, parallelism)


def route_key(key: Any, parallelism: int) -> int:
    """f_mu of the live path: a string key goes where every O+ engine sends it
    (``spec.oplus.scenario.instance_of``, crc32: so the conformance suite's instance oracle
    applies), a key of any other type by ``spark_impl.keys.route`` (an integer ``k`` to
    ``k mod p``, anything else by a stable BLAKE2b hash); both are the same in every process."""
    return instance_of(key, parallelism) if isinstance(key, str) else route(key, parallelism)


def plain(value: Any) -> Any:
    """A key or field read without its Spark type, in its documented form
    (:func:`spark_impl.values.normalize`: structs, arrays and lists become tuples, maps sorted
    pairs, recursively)."""
    return normalize(value)


def entries_of(columns: Iterable[str], schema: Any = None) -> Any:
    """A function from a Spark ``Row`` of a stream with ``columns`` to an :data:`Entry`. Tuple
    fields reach the operator in the documented form of :mod:`spark_impl.values` (decoded by
    their Spark type in ``schema``, the stream's ``StructType``; without it by their Python
    value): structs and arrays as tuples, maps as sorted pairs, so any of them can be a key. A
    null is ``None`` (docs/production/types.md): every column of the stream is in ``fields``, so
    a null field is told apart from a column the stream does not have; a mark row (no ``ts``) has
    no fields."""
    names = list(columns)
    fields = [n for n in names if n not in RESERVED]
    decoders = {n: decoder(None if schema is None else schema[n].dataType) for n in fields}

    def entry(row: Any) -> Entry:
        get = row.asDict(recursive=False)
        ts, mark = get.get("ts"), get.get("watermark")
        values = {} if ts is None else {n: None if get[n] is None else decoders[n](get[n]) for n in fields}
        return (int(get.get("job") or 0), int(get.get("source") or 0), None if ts is None else int(ts),
                None if mark is None else int(mark), bool(get.get("end")), int(get.get("seq") or 0), values)

    return entry


@dataclass
class Summary:
    """What the driver learns about a micro-batch before running it (no tuple reaches it):
    per ``(job, source)`` the largest bound delivered, per job the late tuples (and the
    first of them, :mod:`spark_impl.lateness`), and rows that do not fit any job (bad input).
    ``rows`` counts every row the micro-batch brought in - tuples, watermark and end marker
    rows alike (the per-batch log line's "rows in", as DGS counts its heartbeat rows);
    ``tuples`` only the rows with an event time that fit a job."""

    bounds: dict[tuple[int, int], float] = field(default_factory=dict)
    late: dict[int, int] = field(default_factory=dict)
    tuples: int = 0
    bad: list[str] = field(default_factory=list)
    first: dict[int, LateTuple] = field(default_factory=dict)
    rows: int = 0

    def merge(self, other: "Summary") -> None:
        """Fold another partition's summary in."""
        for at, bound in other.bounds.items():
            self.bounds[at] = max(self.bounds.get(at, -math.inf), bound)
        for job, n in other.late.items():
            self.late[job] = self.late.get(job, 0) + n
        self.rows += other.rows
        self.tuples += other.tuples
        for job, late in other.first.items():
            self.first[job] = min(self.first.get(job, late), late)
        self.bad.extend(other.bad[: max(0, 3 - len(self.bad))])


def summarize(jobs: list[OplusJob], previous: dict[int, float], lateness: int = 0) -> Any:
    """The task function of the summary pass (``mapPartitions``): one :class:`Summary` per
    partition. A tuple's bound is its event time minus ``lateness`` (the allowed lateness:
    bounded out-of-orderness, :mod:`spark_impl.lateness`); an explicit watermark is taken as
    is. A tuple below its job's previous watermark is *late* (its source broke the bounded
    order the watermark promised): counted here and dropped by the round."""

    def run(rows: Iterator[Entry]) -> Iterator[Summary]:
        out = Summary()
        for job, source, ts, mark, end, seq, values in rows:
            out.rows += 1
            if not 0 <= job < len(jobs) or not 0 <= source < jobs[job].sources:
                out.bad.append(f"row of job {job}, source {source}: the query has {len(jobs)} job(s)"
                               + (f"; job {job} has {jobs[job].sources} source(s)" if 0 <= job < len(jobs) else ""))
                continue
            bound = math.inf if end else max(-math.inf if ts is None else ts - lateness,
                                             -math.inf if mark is None else mark)
            if ts is None and mark is None and not end:
                out.bad.append(f"row of job {job}, source {source} has no ts, watermark or end")
                continue
            if ts is not None:
                missing = [n for n in jobs[job].required_fields(source) if n not in values]
                if missing:
                    out.bad.append(f"tuple of job {job}, source {source} at ts {ts} lacks field(s) {missing}"
                                   " (no such column in the stream)")
                    continue
                null = [n for n in jobs[job].non_null_fields(source) if values[n] is None]
                if null:
                    out.bad.append(f"tuple of job {job}, source {source} at ts {ts} has null field(s) {null}"
                                   f" (the catalogue operator {jobs[job].config().name} needs a value)")
                    continue
                out.tuples += 1
                behind = previous.get(job, -math.inf)
                if ts < behind:
                    out.late[job] = out.late.get(job, 0) + 1
                    late = late_tuple(job, source, ts, seq, values, behind)
                    out.first[job] = min(out.first.get(job, late), late)
            at = (job, source)
            out.bounds[at] = max(out.bounds.get(at, -math.inf), bound)
        yield out

    return run
