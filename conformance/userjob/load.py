"""Loading a user's job: ``FILE.py:NAME`` (the protocol of docs/conformance.md, "Your own job").

``NAME`` in ``FILE.py`` is a callable taking no arguments (or the value itself) that returns

* ``(job, requests)`` or ``(job, requests, options)``:
  ``job`` a :class:`spark_impl.reconfig.Job` (built with ``user_job``; its source finite and
  replayable - ``ListSource`` / ``GeneratedSource``; its ``planned`` and ``timing`` are
  ignored: the suite draws them), ``requests`` a non-empty sequence of
  :class:`spark_impl.reconfig.Request` (``user_update`` per operator), made in list order at
  moments the suite draws;
* ``options`` (a dict, all optional): ``"dependence"`` - which output records must keep their
  relative order: ``"key"`` (default: records of one sink and one key, in the order the
  serial replay emits them), ``"sink"`` (all records of one sink object), ``"none"`` (a
  multiset), or a function ``(sink, key, value) -> class``; ``"max_tuples"`` - the most source
  tuples one case uses (default 32).

The file may import the standard library, ``spark_impl`` and ``spec`` (e.g.
``spec.fries.dataflow.dataflow``) and any package installed where Spark's workers run: only the
file itself travels by value, what it imports is imported by name. It is imported once, under
a unique module name registered with cloudpickle *by value*, so Spark's Python workers get the
user's functions without the file being importable there. Everything that goes wrong while
loading (the import raises, prints, NAME is missing, returns the wrong shape) is bad input:
one :class:`~spec.errors.InputError` (exit 2) naming the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Hashable

from spec.errors import InputError, cut

from spark_impl.reconfig.model import Job, Request

DEPENDENCES = ("key", "sink", "none")
Classify = Callable[[str, Any, Any], Hashable]


@dataclass(frozen=True)
class JobUnderTest:
    """A loaded user job: the reference ``FILE.py:NAME``, the job, its requests, the output
    dependence (None: multiset; else a class function) and the window of tuples per case."""

    ref: str
    job: Job
    requests: tuple[Request, ...]
    classify: Classify | None
    dependence: str
    max_tuples: int
    printed: str = ""


def _by_key(sink: str, key: Any, value: Any) -> Hashable:
    return ("key", sink, _hashable(key))


def _by_sink(sink: str, key: Any, value: Any) -> Hashable:
    return ("sink", sink)


def _hashable(value: Any) -> Hashable:
    try:
        hash(value)
        return value  # type: ignore[no-any-return]
    except TypeError:
        return repr(value)


def classify_for(dependence: Any, where: str = "dependence") -> Classify | None:
    """The output classes of a declared dependence (module docstring); None: a multiset."""
    if callable(dependence):
        declared: Classify = dependence
        return declared
    if isinstance(dependence, str) and dependence in DEPENDENCES:
        return {"key": _by_key, "sink": _by_sink, "none": None}[dependence]
    raise InputError(f"dependence must be one of {list(DEPENDENCES)} or a function, got {dependence!r}", where)


def split_ref(ref: str) -> tuple[Path, str]:
    """``FILE.py:NAME`` -> (path, name); InputError when malformed or the file is missing."""
    path_text, sep, name = ref.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise InputError(f"expected FILE.py:NAME (NAME a Python identifier), got {ref!r}", "--job")
    path = Path(path_text)
    if not path.is_file():
        raise InputError(f"no such file: {path_text}", "--job")
    return path, name


def load_job(ref: str) -> JobUnderTest:
    """Import ``FILE.py``, call ``NAME`` and check what it returns (module docstring)."""
    path, name = split_ref(ref)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        module = _import(path, ref)
        if not hasattr(module, name):
            raise InputError(f"{path} defines no {name!r}", "--job")
        target = getattr(module, name)
        try:
            value = target() if callable(target) else target
        except BaseException as error:  # noqa: BLE001 - the user's code (sys.exit too): bad input, named
            raise InputError(f"{name}() raised {type(error).__name__}: {_text(error)}", ref) from None
    return job_under_test(ref, value, printed.getvalue())


def _import(path: Path, ref: str) -> Any:
    resolved = path.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    module_name = f"streamproof_userjob_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot import {path} (not a Python file?)", "--job")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - SystemExit / KeyboardInterrupt in an import too
        del sys.modules[module_name]
        if isinstance(error, KeyboardInterrupt):
            raise
        raise InputError(f"importing {path} raised {type(error).__name__}: {_text(error)}", "--job") from None
    from pyspark import cloudpickle

    getattr(cloudpickle, "register_pickle_by_value")(module)
    return module


def _text(error: BaseException) -> str:
    try:
        return cut(str(error), 300).replace("\n", " ")
    except Exception:  # noqa: BLE001
        return "(its message cannot be printed)"


def job_under_test(ref: str, value: Any, printed: str = "") -> JobUnderTest:
    """Check what ``NAME`` returned (module docstring); ``ref`` names it in messages."""
    if not isinstance(value, tuple) or len(value) not in (2, 3):
        raise InputError(f"NAME must return (job, requests) or (job, requests, options), got {type(value).__name__}",
                         ref)
    job, requests = value[0], value[1]
    options = value[2] if len(value) == 3 else {}
    if not isinstance(job, Job):
        raise InputError(f"the job must be a spark_impl.reconfig.Job (from user_job), got {type(job).__name__}", ref)
    if job.unbounded:
        raise InputError("the job's source must be finite (unbounded=False)", ref)
    try:
        count = job.source.count()
    except BaseException as error:  # noqa: BLE001 - the user's source (sys.exit too)
        raise InputError(f"the job's source raised {type(error).__name__}: {_text(error)}", ref) from None
    if count < 1:
        raise InputError("the job's source has no tuples", ref)
    if isinstance(requests, (str, bytes)) or not hasattr(requests, "__iter__"):
        raise InputError(f"requests must be a list of Request, got {type(requests).__name__}", ref)
    requests = tuple(requests)
    if not requests or not all(isinstance(r, Request) for r in requests):
        raise InputError("requests must be a non-empty list of spark_impl.reconfig.Request", ref)
    for j, request in enumerate(requests):
        for op in request.updates:
            if op not in job.logic:
                raise InputError(f"request {j} updates {op!r}, which is not a non-source operator of the job", ref)
    if not isinstance(options, dict):
        raise InputError(f"options must be a dict, got {type(options).__name__}", ref)
    unknown = sorted(set(options) - {"dependence", "max_tuples"})
    if unknown:
        raise InputError(f"unknown option(s) {unknown} (known: dependence, max_tuples)", ref)
    dependence = options.get("dependence", "key")
    classify = classify_for(dependence, ref)
    dependence = "declared" if callable(dependence) else dependence
    max_tuples = options.get("max_tuples", 32)
    if isinstance(max_tuples, bool) or not isinstance(max_tuples, int) or max_tuples < 1:
        raise InputError(f"max_tuples must be a positive integer, got {max_tuples!r}", ref)
    return JobUnderTest(ref, job, requests, classify, str(dependence), max_tuples, printed[-4000:])


_OURS = ("spec", "reference", "proofs", "spark_impl", "conformance")


def ship_by_value(under: JobUnderTest) -> list[str]:
    """Register the modules defining the job's functions with cloudpickle *by value* when
    Spark's workers could not import them (a test module, a script; not an installed package
    or the standard library): a job built in memory (the pytest plugin) then runs on Spark like
    a job loaded from a file. Returns the registered module names."""
    from pyspark import cloudpickle

    installed = {str(Path(p).resolve()) for key in ("stdlib", "platstdlib", "purelib", "platlib")
                 if (p := sysconfig.get_paths().get(key))}
    shipped = []
    for name in sorted(_modules_of(under)):
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if module is None or file is None or name.split(".")[0] in _OURS or name.startswith("streamproof_userjob_"):
            continue
        if any(str(Path(file).resolve()).startswith(root) for root in installed):
            continue
        getattr(cloudpickle, "register_pickle_by_value")(module)
        shipped.append(name)
    return shipped


def _modules_of(under: JobUnderTest) -> set[str]:
    found: set[str] = set()

    def note(value: Any) -> None:
        if value is None:
            return
        module = getattr(value, "__module__", None)
        if not isinstance(module, str) or not callable(value):
            module = type(value).__module__
        found.add(module)
        for attr in ("function", "final", "make", "inner"):
            inner = getattr(value, attr, None)
            if inner is not None and inner is not value:
                note(inner)

    for logic in under.job.logic.values():
        note(logic)
    note(under.job.source)
    for request in under.requests:
        for update in request.updates.values():
            note(update.logic)
            note(update.transform)
    return found
