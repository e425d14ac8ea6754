"""The one verdict type every oracle of the harness returns.

An oracle checks one definition on one run and answers with a :class:`Verdict`: which
definition (:class:`OracleName`, named after what it checks, with the short name the reports,
``--json`` output and saved cases have always used), whether it held, a one-line message in
words, the longer explanation the reports print under that line, and the *witness* as data
(a cycle, the first missing and unexpected records, the row emitted in the wrong round, ...).

Invariants, enforced when a verdict is made, because every consumer relies on them:

* ``message`` is one line (reports print ``[oracle] message`` and indent the detail under it);
* ``witness`` is JSON data (``None``, booleans, numbers, strings, lists and string-keyed
  objects): anything else is converted on construction (tuples and sets to lists, other
  values to their ``repr``), so a verdict can always be written out as JSON
  (:meth:`Verdict.to_json`) whatever values the engine produced.

A run is judged by several oracles; a family's judge returns the verdicts of every oracle it
judged, in check order (:func:`failed` keeps those that did not hold). The names are a closed
set: a new oracle adds a member here, with the definition it checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable, Mapping, Union

Json = Union[None, bool, int, float, str, list["Json"], dict[str, "Json"]]
"""A JSON value."""


class OracleName(str, Enum):
    """What an oracle checks; the value is the oracle's name in every output (``--json``'s
    ``oracle_failures`` and ``oracles``, the report, saved cases), which never changes."""

    ENGINE = "engine"
    USER_CODE = "user-code"
    SCHEDULE = "schedule"
    PLACEMENT = "placement"
    SERIALIZABLE = "serializable"
    CHANNEL_FIFO = "fifo"
    OUTPUTS = "outputs"
    EXACTLY_ONCE = "exactly-once"
    STATES = "states"
    PROCESSED = "processed"
    JOINED_STATE = "state"
    RELEASE_ORDER = "order"
    PLAN = "plan"
    EMISSION_ROUND = "round"
    EMITTING_INSTANCE = "instance"
    LATENESS = "late"

    @property
    def definition(self) -> str:
        """The definition this oracle checks, in words (where it is stated)."""
        return DEFINITIONS[self]

    def __str__(self) -> str:
        return self.value


DEFINITIONS: Mapping[OracleName, str] = {
    OracleName.ENGINE: "the engine ran the case to its end without raising or hanging",
    OracleName.USER_CODE: "the user's own functions ran without raising (a failure is the user's, named with the call)",
    OracleName.SCHEDULE: "the trace is complete: every accepted request updated every object it reconfigures "
                         "exactly once, no operation names an unknown transaction",
    OracleName.PLACEMENT: "every data operation ran on the object that holds its key, O#(k mod p) (Fries §7.2)",
    OracleName.SERIALIZABLE: "(C1) the schedule is conflict-serializable (Fries Def. 4.9)",
    OracleName.CHANNEL_FIFO: "(C2) every channel delivered what its sender sent, once and in send order "
                             "(spec.fries.consistency)",
    OracleName.OUTPUTS: "(C3) the output values equal the reference's: the serial execution in the witness order "
                        "up to each object's per-key order (Fries), spec(sort(u)) (DGS Thm 3.5), the sequential "
                        "execution (O+)",
    OracleName.EXACTLY_ONCE: "exactly-once: no output record emitted more often than expected, no transaction "
                             "with expected output lost all of it",
    OracleName.STATES: "the final per-(operator, key) states equal the serial execution's",
    OracleName.PROCESSED: "every input event processed exactly once, by its responsible worker or an ancestor, "
                          "listed in key order (DGS)",
    OracleName.JOINED_STATE: "the final state, every leaf joined back into the root, equals the sequential "
                             "program's (DGS)",
    OracleName.RELEASE_ORDER: "the driver releases and plans every event once, dependent events in key order "
                              "(DGS Thm 3.5)",
    OracleName.PLAN: "a plan satisfies DGS Def. 3.1 and the plan builder keeps its promise",
    OracleName.EMISSION_ROUND: "emission round: every output is emitted in the round it is due in "
                               "(spec.oplus.emission)",
    OracleName.EMITTING_INSTANCE: "every keyed output comes from the instance that owns its key in its round, "
                                  "and exactly the reconfigurations that take effect are applied "
                                  "(spec.oplus.emission)",
    OracleName.LATENESS: "a live run counts exactly the tuples the documented lateness rule makes late",
}


def as_json(value: Any) -> Json:
    """``value`` as JSON data: tuples and lists to lists, sets to sorted lists, mappings to
    objects with string keys (``repr`` of a non-string key), finite numbers and strings as
    they are, anything else (and NaN or infinities) as its ``repr``."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, Enum):
        return as_json(value.value)
    if isinstance(value, Mapping):
        return {k if isinstance(k, str) else repr(k): as_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((as_json(v) for v in value), key=repr)
    return repr(value)


@dataclass(frozen=True)
class Verdict:
    """One oracle's answer on one run (module docstring)."""

    oracle: OracleName
    held: bool
    message: str
    witness: Json = None
    detail: str = ""

    def __post_init__(self) -> None:
        if "\n" in self.message:
            raise ValueError(f"a verdict's message is one line: {self.message!r}")
        object.__setattr__(self, "oracle", OracleName(self.oracle))
        object.__setattr__(self, "witness", as_json(self.witness))

    @property
    def name(self) -> str:
        """The oracle's short name, as every output spells it."""
        return self.oracle.value

    @property
    def explanation(self) -> str:
        """The message, and the detail on the lines below it when there is one."""
        return f"{self.message}\n{self.detail}" if self.detail else self.message

    def to_json(self) -> dict[str, Json]:
        """``{"oracle", "definition", "held", "message", "detail", "witness"}``."""
        return {"oracle": self.name, "definition": self.oracle.definition, "held": self.held,
                "message": self.message, "detail": self.detail, "witness": self.witness}


def holds(oracle: OracleName, message: str = "holds") -> Verdict:
    """A verdict that held."""
    return Verdict(oracle, True, message)


def fails(oracle: OracleName, message: str, witness: Any = None, detail: str = "") -> Verdict:
    """A verdict that did not hold, with its witness (made JSON data) and detail."""
    return Verdict(oracle, False, message, witness, detail)


def from_text(oracle: OracleName, text: str, witness: Any = None) -> Verdict:
    """A failed verdict from an explanation in words: its first line the message, the rest
    the detail (so :attr:`Verdict.explanation` gives ``text`` back)."""
    message, _, detail = text.partition("\n")
    return Verdict(oracle, False, message, witness, detail)


def failed(verdicts: Iterable[Verdict]) -> tuple[Verdict, ...]:
    """The verdicts that did not hold, in order."""
    return tuple(v for v in verdicts if not v.held)


def failed_names(verdicts: Iterable[Verdict]) -> tuple[str, ...]:
    """The short names of the oracles that did not hold, in order."""
    return tuple(v.name for v in verdicts if not v.held)
