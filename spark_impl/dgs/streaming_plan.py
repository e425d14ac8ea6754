"""A plan for a keyed program, its keys routed to leaves by :func:`spark_impl.keys.route`.

For a program whose tags carry a user key (``("i", "alice")``: the key counter of DGS Fig. 1
with string keys), the natural plan puts each key's tags on one leaf, chosen by a stable hash
of the key (the same in every process: strings, numbers, tuples). Dependence decides what must
stay together (V2, Def. 3.2): the tags are split into the connected components of the
dependence relation; a component whose keys all route to one leaf goes to that leaf (on every
given stream), any other to the root. The plan is the balanced tree of
:func:`spark_impl.dgs.plans.balanced_plan` over ``leaves`` leaves with the program's initial
state type and ``fork``/``join`` (the simple program form; others write their plan as JSON).
``spark_impl.dgs.topology`` checks P-validity when the plan is run.
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Sequence

from spec.dgs.plan import Plan
from spec.dgs.program import Program
from spec.dgs.streams import ImplTag
from spec.errors import InputError

from spark_impl.dgs.plans import balanced_plan
from spark_impl.keys import route


def last_item(tag: Hashable) -> Any:
    """The default key of a tag: its last item if it is a tuple, else the tag itself."""
    return tag[-1] if isinstance(tag, tuple) and tag else tag


def keyed_plan(program: Program, streams: Sequence[str], leaves: int,
               key_of: Callable[[Hashable], Any] = last_item) -> Plan:
    """The plan of the module docstring."""
    if leaves < 1:
        raise InputError(f"must be >= 1, got {leaves}", "leaves")
    tags = program.sorted_tags
    parent = {tag: tag for tag in tags}

    def find(tag: Hashable) -> Hashable:
        while parent[tag] != tag:
            tag = parent[tag]
        return tag

    for i, a in enumerate(tags):
        for b in tags[i + 1:]:
            if program.depends(a, b):
                parent[find(a)] = find(b)
    components: dict[Hashable, list[Hashable]] = {}
    for tag in tags:
        components.setdefault(find(tag), []).append(tag)
    root: list[ImplTag] = []
    leaf: list[list[ImplTag]] = [[] for _ in range(leaves)]
    for members in components.values():
        places = {route(key_of(tag), leaves) for tag in members}
        impl = [(tag, stream) for tag in members for stream in streams]
        (leaf[places.pop()] if len(places) == 1 else root).extend(impl)
    return balanced_plan(root, leaf, root_type=program.initial)
