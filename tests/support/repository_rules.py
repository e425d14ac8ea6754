"""The code rules no linter checks (docs/code-rules.md), checked on the source tree itself.

* no import circle: the module graph counts every import statement - inside functions and
  under ``TYPE_CHECKING`` too - and, as Python does, the parent packages an import executes
  (``import a.b.c`` runs ``a/__init__`` and ``a/b/__init__``);
* no private name (``_x``) imported from, or read as an attribute of, another module;
* no module over :data:`MAX_LINES` lines;
* no words about how the project was developed (:data:`PROCESS_WORDS`) in code, tests or docs;
* ``is`` / ``is not`` only with None, booleans, constants (sentinels, enum members: UPPER_CASE
  names) or in ``type(x) is T``;
* every public definition of ``spec/`` is reached by a test or an oracle: named in ``tests/``,
  ``conformance/``, ``reference/``, ``proofs/`` or the CLI (``streamproof/``, which the CLI
  tests run), or named by a ``spec/`` definition that is;
* no test module imports another test module (a file named ``test_*.py`` under ``tests/``):
  shared helpers live in ``tests/support/`` (tests/README.md).

Each rule covers the folders that keep it today; the ``*_NOT_YET_COVERED`` constants name the
others, which are covered once restructured (remove a folder from its list when it keeps the
rule). Run as a script, the module prints the import graph's
strongly connected components of the packages given on the command line.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from reference.fries.cycles import strongly_connected

ROOT = Path(__file__).resolve().parents[2]

PACKAGES = ("spec", "reference", "proofs", "spark_impl", "conformance", "streamproof")
"""The product's top-level packages (the import graph is built over all of them)."""

CODE = (*PACKAGES, "streamproof", "tests", "benchmarks", "tools", "examples")
"""Every folder of Python code (one that does not exist is skipped)."""

TEXT = (*CODE, "docs", "README.md", "pyproject.toml", ".ci")
"""Everything a reader of the product reads."""

CIRCLES_NOT_YET_COVERED: tuple[str, ...] = ()
"""Packages with import circles today (covered once restructured)."""

PRIVATE_IMPORTS_NOT_YET_COVERED: tuple[str, ...] = ()
"""Folders importing private names of other modules today (covered once restructured)."""

MODULE_SIZE_NOT_YET_COVERED: tuple[str, ...] = ()
"""Folders with modules over :data:`MAX_LINES` lines today (covered once restructured)."""

PROCESS_WORDS_NOT_YET_COVERED: tuple[str, ...] = ()
"""Folders whose text speaks of the project's development today (covered once restructured):
``conformance/oplus/engines/live.py``'s first line still names an issue."""

IDENTITY_NOT_YET_COVERED: tuple[str, ...] = ()
"""Folders not checked for ``is`` operands yet (covered once restructured)."""

SPEC_DEFINITIONS_NOT_YET_REACHED: frozenset[str] = frozenset()
"""Public ``spec/`` definitions no test or oracle reaches today (each needs one)."""

IDENTITY_EXCEPTIONS = frozenset({
    # a driver thread must get the very session the process runs, not a second or a copy
    ("tests/spark_impl/test_spark_session_reuse.py", "got[0] is spark"),
    # the request queued is cleared only if it is still this very object: an equal request
    # submitted meanwhile by the user must stay queued
    ("spark_impl/reconfig/driver.py", "self.state[s].queued is request"),
    # signal handlers can only be installed from the main thread: which thread this is
    ("streamproof/job_probe.py", "threading.current_thread() is not threading.main_thread()"),
    # the very exception object that escaped an activity, not an equal one raised elsewhere
    ("streamproof/sandbox/guard.py", "self._fault[0] is error"),
    ("streamproof/sandbox/guard.py", "self._fault[0] is not error"),
    # the user's exception re-raised as is, or a replacement object built for it
    ("streamproof/sandbox/guard.py", "replacement is error"),
    # the root logger object itself: its level is what NOTSET descendants follow
    ("conformance/core/product_logs.py", "logger is root"),
    # shrinking returns the very case it was given when nothing smaller fails
    ("conformance/dgs/suite.py", "shrunk is not case"),
    # a case the live engine replaced (a new object) is counted, an untouched one is the same
    ("conformance/oplus/suite.py", "a is not b"),
    # a wrapper whose attribute is itself (a self-reference) must not be followed for ever
    ("conformance/userjob/load.py", "inner is not value"),
    # tests whose promise is about one object: the very exception, the cached value, the same
    # query, a re-exported name, a case left untouched, a verdict returned as it was made
    ("tests/conformance/core/test_conformance_crashes.py", "s is poison"),
    ("tests/conformance/test_conformance_live_arrival.py", "a is not b"),
    ("tests/conformance/test_conformance_live_arrival.py", "padded is original"),
    ("tests/conformance/test_verdicts_on_bad_runs.py", "verdicts[-1] is verdict"),
    ("tests/conftest.py", "t is not threading.main_thread()"),
    ("tests/proofs/test_dgs_prove_budget.py", "merge(violated, proved) is violated"),
    ("tests/spark_impl/dgs/test_spark_dgs_lateness.py", "run.error is caught.value"),
    ("tests/spark_impl/oplus/test_oplus_lateness_local.py", "live.run.batch_error is caught.value"),
    ("tests/spark_impl/oplus/test_oplus_sink_column_misfit.py", "live.run.batch_error is refused.value"),
    ("tests/spark_impl/oplus/test_oplus_streaming_start.py", "run.query is writer.query"),
    ("tests/spark_impl/reconfig/test_spark_layout_roles.py", "roles(job, 0, REQUEST, True) is roles(job, 0, REQUEST, True)"),
    ("tests/spark_impl/test_lateness_policy.py", "streaming_late.LateEventError is lateness.LateEventError"),
    ("tests/spark_impl/test_lateness_policy.py", "streaming_late.parse_late_policy is lateness.late_policy"),
    ("tests/spark_impl/test_lateness_policy.py", "streaming_late.LatePolicy is lateness.LatePolicy"),
    ("tests/conformance/fries/test_conformance_alignment.py", "c is p"),
    ("tests/spark_impl/reconfig/test_fries_driver_promises.py", "st.queued is request"),
    ("tests/spark_impl/reconfig/test_fries_model_promises.py",
     'user_update(FLOW, "O", user_function, abs).transform is abs'),
    ("tests/spark_impl/reconfig/test_fries_streaming_front_end.py", "ex.sink is not sink"),
    ("tests/spark_impl/reconfig/test_fries_streaming_front_end.py", "ex.retention is not retention"),
})
"""``is`` comparisons of objects whose identity is the point, with the reason."""

MAX_LINES = 500
"""Longest module, in lines: one idea per module."""

PROCESS_WORDS = re.compile(
    r"\bsessions? \d+|\bcoordinators?\b|\bengineers?\b|\breviewers?\b|\bholdouts?\b|"
    r"\bsurvivors?\b|\bmutants?\b|\bcampaigns?\b|\bissues? #?\d+|/work/|"
    r"\bcommit [0-9a-f]{7,40}\b|(?<![0-9A-Za-z])[0-9a-f]{40}(?![0-9A-Za-z])",
    re.IGNORECASE)
"""Words that tell how the project was built instead of what the product does (the pattern
above names them); the product's code, tests and docs speak to its users."""

PRODUCT_PHRASES = ("the DGS coordinator", "the driver is the coordinator")
"""Phrases that use a listed word for a product concept (the DGS paper's coordinator, §3.4)."""

MUTATION_TESTING = ("tools", "tests/tools/test_mutation_script.py")
"""The mutation-testing tooling (not shipped) and its test: there the technical terms of
mutation testing (:data:`MUTATION_TERMS`) name what the tool does; every other word of
:data:`PROCESS_WORDS` is still found."""

MUTATION_TERMS = re.compile(r"\bsurvivors?\b|\bmutants?\b|\bcampaigns?\b", re.IGNORECASE)
"""The words of :data:`PROCESS_WORDS` that :data:`MUTATION_TESTING` may use."""

RULE_FILES = frozenset({"tests/test_repository_rules.py", "tests/support/repository_rules.py", "docs/code-rules.md"})
"""Files that define the rules (and so name the words)."""

TEXT_SUFFIXES = (".py", ".md", ".toml", ".txt", ".cfg", ".json", ".sh", "")


@functools.lru_cache(maxsize=None)
def _parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def python_files(folders: Iterable[str]) -> Iterator[Path]:
    """Every ``.py`` file under ``folders`` (relative to the repository), sorted."""
    for folder in folders:
        path = ROOT / folder
        if path.is_dir():
            yield from sorted(path.rglob("*.py"))


def module_name(path: Path) -> str:
    """``spec/oplus/budget.py`` -> ``spec.oplus.budget``; a package is its ``__init__``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def relative(path: Path) -> str:
    """``path`` relative to the repository, with ``/``."""
    return path.relative_to(ROOT).as_posix()


def imported_names(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Every dotted name an import statement may load: the module and, for ``from m import x``,
    ``m.x`` (a submodule when it is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module.split(".")
    if node.level:
        package = base if is_package else base[:-1]
        package = package[:len(package) - (node.level - 1)]
        prefix = ".".join(package + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]


def import_graph(folders: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the modules of ``folders`` its import statements execute (module docstring)."""
    files = {module_name(path): path for path in python_files(folders)}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(_parse(path)):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in imported_names(name, is_package, node):
                parts = target.split(".")
                for end in range(1, len(parts) + 1):
                    executed = ".".join(parts[:end])
                    # the importer's own ancestors are initialised before it: not an edge
                    if executed in files and executed != name and not name.startswith(executed + "."):
                        graph[name].add(executed)
    return graph


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module."""
    names = sorted(graph)
    number = {name: i for i, name in enumerate(names)}
    successors = [sorted(number[target] for target in graph[name]) for name in names]
    components = strongly_connected(range(len(names)), successors)
    return sorted(sorted(names[i] for i in c) for c in components if len(c) > 1)


def covered(folders: Sequence[str], not_yet: Sequence[str]) -> tuple[str, ...]:
    """``folders`` without the ones not yet covered."""
    return tuple(folder for folder in folders if folder not in not_yet)


def circles_in(folders: Iterable[str]) -> list[list[str]]:
    """The circles among the modules of ``folders`` (the graph spans every product package)."""
    inside = tuple(folders)
    graph = import_graph(sorted(set(PACKAGES) | set(inside)))
    return [c for c in circles(graph) if any(m.split(".")[0] in inside for m in c)]


@dataclass(frozen=True)
class Finding:
    """One break of a rule: where, and what."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def private_imports(folders: Iterable[str]) -> list[Finding]:
    """Private names imported from, or read as an attribute of, another module."""
    modules = {module_name(path) for path in python_files(PACKAGES)}
    found = []
    for path in python_files(folders):
        name = module_name(path)
        tree = _parse(path)
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = imported_names(name, path.name == "__init__.py", node)[0]
                for alias in node.names:
                    if _private(alias.name) and source != name:
                        found.append(Finding(f"{relative(path)}:{node.lineno}", f"from {source} import {alias.name}"))
                    if f"{source}.{alias.name}" in modules:
                        aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if any(_private(part) for part in alias.name.split(".")):
                        found.append(Finding(f"{relative(path)}:{node.lineno}", f"import {alias.name}"))
                    if alias.asname and alias.name in modules:
                        aliases[alias.asname] = alias.name
                    elif not alias.asname:
                        aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                target = _dotted(node.value, aliases)
                if target in modules and target != name:
                    found.append(Finding(f"{relative(path)}:{node.lineno}", f"{target}.{node.attr}"))
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _dotted(node: ast.expr, aliases: Mapping[str, str]) -> str | None:
    """The module an expression such as ``driver`` or ``spark_impl.dgs.driver`` names, if any."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, aliases)
        return None if base is None else f"{base}.{node.attr}"
    return None


def long_modules(folders: Iterable[str]) -> list[Finding]:
    """Modules over :data:`MAX_LINES` lines."""
    found = []
    for path in python_files(folders):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            found.append(Finding(relative(path), f"{lines} lines"))
    return found


def text_files(entries: Iterable[str]) -> Iterator[Path]:
    """Every text file under ``entries`` (folders or files), sorted, caches left out."""
    for entry in entries:
        path = ROOT / entry
        candidates = [path] if path.is_file() else sorted(path.rglob("*")) if path.is_dir() else []
        for candidate in candidates:
            if (candidate.is_file() and candidate.suffix in TEXT_SUFFIXES
                    and not any(part.startswith(".") and part != ".ci" or part == "__pycache__"
                                for part in candidate.relative_to(ROOT).parts)):
                yield candidate


def process_words(entries: Iterable[str]) -> list[Finding]:
    """Lines that speak of the project's development (:data:`PROCESS_WORDS`)."""
    found = []
    for path in text_files(entries):
        if relative(path) in RULE_FILES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        name = relative(path)
        mutation_testing = any(name == entry or name.startswith(entry + "/") for entry in MUTATION_TESTING)
        for number, line in enumerate(text.splitlines(), start=1):
            cleaned = line
            for phrase in PRODUCT_PHRASES:
                cleaned = re.sub(re.escape(phrase), "", cleaned, flags=re.IGNORECASE)
            if mutation_testing:
                cleaned = MUTATION_TERMS.sub("", cleaned)
            match = PROCESS_WORDS.search(cleaned)
            if match:
                found.append(Finding(f"{relative(path)}:{number}", repr(match.group(0))))
    return found


def misused_identity(folders: Iterable[str]) -> list[Finding]:
    """``is`` comparisons whose operands are not None, booleans, constants, ``type(x) is T`` or
    ``type(x) is type(y)``."""
    found = []
    for path in python_files(folders):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Compare):
                continue
            left = node.left
            for operator, right in zip(node.ops, node.comparators):
                if isinstance(operator, (ast.Is, ast.IsNot)) and not _identity_operands(left, right):
                    text = ast.get_source_segment(source, node) or ""
                    if (relative(path), text) not in IDENTITY_EXCEPTIONS:
                        found.append(Finding(f"{relative(path)}:{node.lineno}", text))
                left = right
    return found


def _identity_operands(left: ast.expr, right: ast.expr) -> bool:
    if any(_singleton(side) for side in (left, right)):
        return True
    return any(_type_call(a) and (isinstance(b, (ast.Name, ast.Attribute)) or _type_call(b))
               for a, b in ((left, right), (right, left)))


def _type_call(node: ast.expr) -> bool:
    """``type(x)``: a class, compared by identity with a class or another ``type(y)``."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type"


def _singleton(node: ast.expr) -> bool:
    """None, a boolean, Ellipsis (the constant or its name), NotImplemented, or an UPPER_CASE name (a sentinel or an enum
    member)."""
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, bool) or node.value is Ellipsis
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name is not None and (name in ("NotImplemented", "Ellipsis") or bool(re.fullmatch(r"_*[A-Z][A-Z0-9_]*", name)))


def spec_definitions_not_reached() -> set[str]:
    """Public top-level ``spec/`` definitions (``file:name``) no test or oracle reaches (module
    docstring): names are matched, not resolved, so two definitions of one name count as one."""
    definitions: dict[str, list[tuple[str, set[str]]]] = {}
    roots: set[str] = set()
    for path in python_files(["spec"]):
        for node in _parse(path).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                definitions.setdefault(node.name, []).append((relative(path), _names(node)))
            else:  # module-level code runs on import
                roots |= _names(node)
    for path in python_files(["tests", "conformance", "reference", "proofs", "streamproof"]):
        roots |= _names(_parse(path))
    reached: set[str] = set()
    pending = [name for name in definitions if name in roots]
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            pending.extend(ref for _, refs in definitions[name] for ref in refs if ref in definitions)
    return {f"{where}:{name}" for name, places in definitions.items() for where, _ in places
            if not name.startswith("_") and name not in reached}


def _names(node: ast.AST) -> set[str]:
    """The names an AST reads: variables, attributes and imported names."""
    found: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
        elif isinstance(n, ast.alias):
            found.add(n.name.rsplit(".", 1)[-1])
    return found


def imports_of_test_modules() -> list[Finding]:
    """Imports, anywhere under ``tests/`` (inside functions too), of a test module: a dotted
    name one of whose parts is the name of a ``test_*.py`` file under ``tests/``."""
    test_modules = {path.stem for path in python_files(["tests"]) if path.name.startswith("test_")}
    found = []
    for path in python_files(["tests"]):
        for node in ast.walk(_parse(path)):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                targets = [base] + [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
            else:
                continue
            hit = next((t for t in targets if test_modules & set(t.split("."))), None)
            if hit is not None:
                found.append(Finding(f"{relative(path)}:{node.lineno}", f"imports {hit}"))
    return found


if __name__ == "__main__":  # python tests/support/repository_rules.py [PACKAGE ...]
    for component in circles_in(sys.argv[1:] or covered(PACKAGES, CIRCLES_NOT_YET_COVERED)):
        print(len(component), " ".join(component))
