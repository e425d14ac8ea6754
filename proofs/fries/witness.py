"""Turning a Z3 model of the symbolic Fries domain into concrete, checkable counterexamples.

:func:`decode_dataflow` gives the DAG of a model as a :class:`~spec.fries.dataflow.Dataflow`
(operators ``O0 .. O{n-1}``) and its reconfiguration. :func:`split_schedule` builds the
schedule of a transaction split by the update: per-object logs (Def. 4.7) in which one tuple
of transaction ``t`` meets a reconfigured operator *before* its update and another tuple of
``t`` meets one *after* it. The schedule is then checked by the SMT serializability checker
(:mod:`proofs.serializability`): a counterexample is only reported when that independent
check confirms it is not conflict-serializable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from proofs import z3util as z
from proofs.fries.dag import KINDS, SymbolicDag
from proofs.serializability import smt_serializable
from proofs.z3util import Model
from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.schedule import Operation, Schedule

TXN = "t"
UPDATE = "R"


def name(v: int) -> str:
    """The concrete name of symbolic operator ``v``."""
    return f"O{v}"


def decode_dataflow(dag: SymbolicDag, model: Model) -> tuple[Dataflow, list[str]]:
    """The concrete dataflow and the reconfigured operators (sorted) of ``model``."""
    ops = []
    for v in range(dag.n):
        kind = next(k for k in KINDS if z.holds(model, dag.kind[k][v]))
        ops.append(Operator(name(v), OperatorKind(kind), z.holds(model, dag.unique[v])))
    edges = tuple((name(i), name(j)) for i in range(dag.n) for j in range(i + 1, dag.n)
                  if z.holds(model, dag.edge[i][j]))
    reconf = [name(v) for v in range(dag.n) if z.holds(model, dag.reconfigured[v])]
    return Dataflow(tuple(ops), edges), reconf


def pin_dataflow(dag: SymbolicDag, flow: Dataflow, reconfigured: list[str]) -> tuple[list[Any], list[str]]:
    """Constraints fixing ``dag`` to the concrete ``flow`` (operators numbered in its
    topological order) and its reconfiguration; also returns the names by number. Used to
    check the symbolic definitions against the reference model on concrete DAGs."""
    order = list(flow.topological_order())
    if len(order) != dag.n:
        raise ValueError(f"dataflow has {len(order)} operators, the symbolic DAG {dag.n}")
    index = {op: i for i, op in enumerate(order)}
    edges = {(index[a], index[b]) for a, b in flow.edges}
    cons = []
    for i in range(dag.n):
        for j in range(i + 1, dag.n):
            cons.append(dag.edge[i][j] == ((i, j) in edges))
        op = flow.operator(order[i])
        cons.append(dag.kind[op.kind.value][i])
        cons.append(dag.unique[i] == op.unique)
        cons.append(dag.reconfigured[i] == (order[i] in reconfigured))
    return cons, order


def describe_dataflow(flow: Dataflow, reconfigured: list[str]) -> str:
    """One line: operators with kinds, edges, reconfiguration."""
    ops = ", ".join(f"{op.name}:{op.kind.value}{'+unique' if op.unique else ''}"
                    for op in flow.operators)
    edges = ", ".join(f"{a}->{b}" for a, b in flow.edges) or "none"
    return f"operators {ops}; edges {edges}; reconfigured {{{', '.join(reconfigured)}}}"


@dataclass(frozen=True)
class TupleTree:
    """The part of one transaction's scope a counterexample needs: the operators from a
    source to the branching operator (``stem``, ending at ``w`` or at the first tuple's
    operator), and the operators each of the two tuples then visits (``side1`` ending at the
    pre-update tuple's operator, ``side2`` at the post-update one)."""

    stem: list[str]
    side1: list[str]
    side2: list[str]


def source_path(flow: Dataflow, target: str) -> list[str]:
    """A path from a source (an operator without parents) to ``target``."""
    path = [target]
    while flow.parents(path[0]):
        path.insert(0, flow.parents(path[0])[0])
    return path


def split_schedule(flow: Dataflow, reconfigured: list[str], tree: TupleTree) -> Schedule:
    """Logs where the ``side1`` tuple is processed before the update and the ``side2`` tuple
    after it; every other reconfigured operator gets its update alone or after ``t``."""
    logs: dict[str, list[Operation]] = {op: [] for op in flow.names}
    data = Operation(TXN)
    for op in tree.stem + tree.side1:
        logs[op].append(data)
    for op in reconfigured:
        logs[op].append(Operation(UPDATE, update=True))
    for op in tree.side2:
        logs[op].append(data)
    return Schedule({op: tuple(log) for op, log in logs.items() if log})


def confirmed(schedule: Schedule) -> dict[str, Any]:
    """Check ``schedule`` with the SMT checker and return its JSON with the cycle; raise if it
    is serializable (a bug in the witness construction, never a user error)."""
    verdict = smt_serializable(schedule)
    if verdict.serializable or verdict.cycle is None:
        raise AssertionError(f"witness schedule is serializable: {schedule.to_json()}")
    return {"schedule": schedule.to_json(), "cycle": list(verdict.cycle)}
