"""Synchronization plans (DGS Def. 3.1) and their JSON form.

A plan is a binary tree of workers. Each worker has an id, a state type of the program, the
set of *implementation tags* ``(tag, stream id)`` it is responsible for (§3.1), and - when it
has children - the fork and join it uses to hand its state to its two children and take it
back. The tree's parent relation and its transitive closure (the ancestor relation) are
given by nesting. Leaves process their events independently; a parent processes an event
only after joining its children's states, then forks them back (§3.2, §3.4).

Each implementation tag is the responsibility of at most one worker (routing an input event
to "the worker responsible for it", §3.4, needs a unique one); :mod:`spec.dgs.validity`
checks this with V1, V2.

JSON form (``docs/dgs.md``; a contract shared with ``spark_impl``)::

    {"format": "streamproof.dgs.plan/1",
     "root": {"id": "w0", "state_type": "State",
              "impl_tags": [{"tag": ["r", 1], "stream": "s0"}, ...],
              "fork": "fork", "join": "join", "node": "n0",
              "children": [{...left worker...}, {...right worker...}]}}

``format`` is optional; ``state_type`` defaults to ``"State"`` (the simple program form) and
``fork``/``join`` default to ``"fork"``/``"join"`` on workers with children; ``node`` (where the
worker runs, set by the optimizer) and ``children`` are optional. Tags are JSON values:
arrays stand for Python tuples (``["r", 1]`` is the tag ``("r", 1)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from spec.dgs.streams import ImplTag
from spec.errors import InputError
from spec.jsonio import expect_list, expect_object, expect_str, reject_unknown_keys

PLAN_FORMAT = "streamproof.dgs.plan/1"


@dataclass(frozen=True)
class Worker:
    """A worker of a synchronization plan (Def. 3.1) with its subtree."""

    id: str
    state_type: str
    impl_tags: frozenset[ImplTag]
    fork: str | None = None
    join: str | None = None
    children: tuple["Worker", ...] = ()
    node: str | None = None

    def walk(self) -> Iterator["Worker"]:
        """This worker and its descendants, parents before children, left before right."""
        stack: list[Worker] = [self]  # iterative: a deep plan neither recurses nor nests generators
        while stack:
            worker = stack.pop()
            yield worker
            stack.extend(reversed(worker.children))

    def subtree_impl_tags(self) -> frozenset[ImplTag]:
        """Implementation tags of this worker and all its descendants."""
        return frozenset(t for w in self.walk() for t in w.impl_tags)

    def subtree_tags(self) -> frozenset[Any]:
        """The *predicate* of this worker's wire: the tags of its subtree's implementation
        tags (what the parent's fork passes as ``pred1`` / ``pred2``)."""
        return frozenset(tag for tag, _ in self.subtree_impl_tags())


@dataclass(frozen=True)
class Plan:
    """A synchronization plan: the root worker of the tree (Def. 3.1)."""

    root: Worker

    def workers(self) -> list[Worker]:
        """Every worker, parents before children."""
        return list(self.root.walk())

    def parents(self) -> dict[str, str | None]:
        """Worker id -> parent worker id (None for the root)."""
        result: dict[str, str | None] = {self.root.id: None}
        for worker in self.root.walk():
            for child in worker.children:
                result[child.id] = worker.id
        return result

    def ancestors(self, worker_id: str) -> list[str]:
        """The ancestors of ``worker_id``, nearest first."""
        parents = self.parents()
        result: list[str] = []
        current = parents[worker_id]
        while current is not None:
            result.append(current)
            current = parents[current]
        return result

    def to_json(self) -> dict[str, Any]:
        """The JSON form (module docstring)."""
        return {"format": PLAN_FORMAT, "root": _worker_json(self.root)}


def tag_to_json(tag: Any) -> Any:
    """A tag as JSON: tuples become arrays; str, int, float, bool and None stay."""
    if isinstance(tag, tuple):
        return [tag_to_json(t) for t in tag]
    if tag is None or isinstance(tag, (str, int, float, bool)):
        return tag
    raise InputError(f"tag {tag!r} cannot be written as JSON (use str, int, or tuples of them)")


def tag_from_json(value: Any) -> Any:
    """The inverse of :func:`tag_to_json`: arrays become tuples (tags must be hashable)."""
    if isinstance(value, list):
        return tuple(tag_from_json(v) for v in value)
    if isinstance(value, dict):
        raise InputError("a tag cannot be a JSON object")
    return value


def _impl_json(impl: ImplTag) -> dict[str, Any]:
    return {"tag": tag_to_json(impl[0]), "stream": impl[1]}


def _worker_json(worker: Worker) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": worker.id,
        "state_type": worker.state_type,
        "impl_tags": [_impl_json(t) for t in sorted(worker.impl_tags, key=repr)],
    }
    if worker.fork is not None:
        out["fork"] = worker.fork
    if worker.join is not None:
        out["join"] = worker.join
    if worker.node is not None:
        out["node"] = worker.node
    if worker.children:
        out["children"] = [_worker_json(c) for c in worker.children]
    return out


def plan_from_json(value: Any, where: str = "plan") -> Plan:
    """Parse the JSON form; InputError with the JSON path on malformed input or a worker id
    used twice."""
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"format", "root"}, where)
    if "format" in obj and obj["format"] != PLAN_FORMAT:
        raise InputError(f"unknown format {obj['format']!r} (expected {PLAN_FORMAT!r})", f"{where}.format")
    if "root" not in obj:
        raise InputError("missing field 'root'", where)
    root = _worker_from_json(obj["root"], f"{where}.root")
    seen: set[str] = set()
    for worker in root.walk():
        if worker.id in seen:
            raise InputError(f"worker id {worker.id!r} is used twice", where)
        seen.add(worker.id)
    return Plan(root)


def _worker_from_json(value: Any, where: str) -> Worker:
    obj: Mapping[str, Any] = expect_object(value, where)
    reject_unknown_keys(obj, {"id", "state_type", "impl_tags", "fork", "join", "node", "children"}, where)
    if "id" not in obj:
        raise InputError("missing field 'id'", where)
    worker_id = expect_str(obj["id"], f"{where}.id")
    raw_children = expect_list(obj.get("children", []), f"{where}.children")
    children = tuple(_worker_from_json(c, f"{where}.children[{i}]") for i, c in enumerate(raw_children))
    default_prim = children != ()
    impl_tags = []
    for index, raw in enumerate(expect_list(obj.get("impl_tags", []), f"{where}.impl_tags")):
        at = f"{where}.impl_tags[{index}]"
        item = expect_object(raw, at)
        reject_unknown_keys(item, {"tag", "stream"}, at)
        if "tag" not in item or "stream" not in item:
            raise InputError("expected {\"tag\": ..., \"stream\": ...}", at)
        try:
            tag = tag_from_json(item["tag"])
        except InputError as error:
            raise error.located(f"{at}.tag") from None
        impl_tags.append((tag, expect_str(item["stream"], f"{at}.stream")))
    return Worker(
        id=worker_id,
        state_type=expect_str(obj.get("state_type", "State"), f"{where}.state_type"),
        impl_tags=frozenset(impl_tags),
        fork=_opt_str(obj, "fork", where, "fork" if default_prim else None),
        join=_opt_str(obj, "join", where, "join" if default_prim else None),
        children=children,
        node=_opt_str(obj, "node", where, None),
    )


def _opt_str(obj: Mapping[str, Any], key: str, where: str, default: str | None) -> str | None:
    if key not in obj or obj[key] is None:
        return default
    return expect_str(obj[key], f"{where}.{key}")
