"""The durable-state part of the contracts check (``conformance.fries.checks.records``): it
passes on spark_impl's store and record log, and fails on two one-line bugs there that no
Spark run sees (a torn only record crashes the warning; a prefix deleted on a
URI store stays)."""

from __future__ import annotations

import pytest

import spark_impl.records as records
import spark_impl.store as store
from conformance.fries.checks.records import records_problem
from support.source_rewrite import rewritten_member


def test_the_store_and_the_record_log_keep_their_contract() -> None:
    assert records_problem() is None


def test_a_torn_only_record_that_breaks_the_warning_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = rewritten_member(records, records.RecordLog, "_torn_newest", "if len(seqs) > 1 else", "if len(seqs) == 1 else")
    monkeypatch.setattr(records.RecordLog, "_torn_newest", broken)
    with pytest.raises(IndexError):  # the check itself does not catch it: the contracts check reports a raise
        records_problem()


def test_a_prefix_left_behind_on_a_uri_store_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = rewritten_member(store, store.Store, "delete", "if kind == pafs.FileType.Directory:",
                            "if kind > pafs.FileType.Directory:")
    monkeypatch.setattr(store.Store, "delete", broken)
    found = records_problem()
    assert found is not None and found.startswith("file store: delete left objects behind"), found


@pytest.mark.parametrize("old, new, seen", [
    # records.py:core/ReplaceComparisonOperator_Lt_Eq:0 / _Gt:0 / _Is:0 (line 102): a file cut inside its magic is refused as altered
    ("if len(data) < len(magic) and", "if len(data) == len(magic) and", "not torn"),
    ("if len(data) < len(magic) and", "if len(data) > len(magic) and", "not torn"),
    ("if len(data) < len(magic) and", "if len(data) is len(magic) and", "not torn"),
    # records.py:core/ReplaceAndWithOr:0 (line 102): any short foreign file is taken for torn (and skipped)
    ("len(data) < len(magic) and magic.startswith(data)", "len(data) < len(magic) or magic.startswith(data)",
     "taken for torn"),
    ("if len(payload) > length:", "if len(payload) >= length:", "a whole framed object was refused"),
    ("if len(payload) > length:", "if len(payload) < length:", "one payload byte less was accepted"),
    ("raise CorruptStateError(path, f\"longer than written", "raise TornRecordError(path, f\"longer than written",
     "extended by a byte is taken for torn"),
    # records.py:core/ReplaceComparisonOperator_Lt_LtE:1 (line 109): an empty payload taken for a torn header
    ("if len(data) < header:", "if len(data) <= header:", "empty payload was refused"),
    # records.py:core/ReplaceComparisonOperator_NotEq_Gt:0 (line 117): a digest mismatch in one direction accepted
    ("if _digest(payload) != data[", "if _digest(payload) > data[", "digest is all 0xff bytes was accepted"),
    ("if _digest(payload) != data[", "if _digest(payload) < data[", "was accepted"),
    # records.py:core/ReplaceBinaryOperator_Add_BitOr:5 / _BitXor:5 (line 111): equal to + for the 21-byte magics
    # of records and pickles (21 | 8 == 21 + 8), not for a 24-byte one (task files: every one refused)
    ("data[len(magic):len(magic) + _LENGTH]", "data[len(magic):len(magic) | _LENGTH]", "a whole framed object was refused"),
    ("data[len(magic):len(magic) + _LENGTH]", "data[len(magic):len(magic) ^ _LENGTH]", "a whole framed object was refused"),
    # records.py:core/ReplaceBinaryOperator_Add_BitOr:6 / _BitXor:6 (line 117): the digest read from the wrong bytes
    ("data[len(magic) + _LENGTH:header]", "data[len(magic) | _LENGTH:header]", "a whole framed object was refused"),
    ("data[len(magic) + _LENGTH:header]", "data[len(magic) ^ _LENGTH:header]", "a whole framed object was refused"),
])
def test_one_line_bugs_of_the_record_framing_are_caught(monkeypatch: pytest.MonkeyPatch, old: str, new: str, seen: str) -> None:
    """The framing's torn/altered split, a branch no Spark run takes (records.py
    lines 102-104 and 112-113 were never executed by the default suite)."""
    monkeypatch.setattr(records, "unframe", rewritten_member(records, records, "unframe", old, new))
    found = records_problem()
    assert found is not None and seen in found, found


def test_a_changed_frame_constant_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "_DIGEST", 17)
    assert (records_problem() or "").startswith("framing: frame(")
    monkeypatch.setattr(records, "_DIGEST", 16)
    monkeypatch.setattr(records, "RECORD_MAGIC", b"streamproof-record/2\n")
    monkeypatch.setattr(records, "frame", rewritten_member(records, records, "frame", "magic: bytes = RECORD_MAGIC",
                                                         "magic: bytes = b'streamproof-record/2\\n'"))
    assert (records_problem() or "").startswith("framing: frame(")


@pytest.mark.parametrize("old, new, seen", [
    # records.py:core/ReplaceContinueWithBreak:0 (line 204): a previous record pruned meanwhile ends the reader
    ("continue  # pruned meanwhile", "break  # pruned meanwhile", "vanished once"),
    ("for _ in range(5):", "for _ in range(4):", "pruned between listing and reading"),
    ("for _ in range(5):", "for _ in range(6):", "expected 5"),
    ("if value is not None:", "if value is not None or True:", "pruned between listing and reading"),
])
def test_a_reader_beside_the_writer_is_checked(monkeypatch: pytest.MonkeyPatch, old: str, new: str, seen: str) -> None:
    monkeypatch.setattr(records.RecordLog, "latest", rewritten_member(records, records.RecordLog, "latest", old, new))
    found = records_problem()
    assert found is not None and seen in found, found


def test_a_writer_after_an_altered_record_and_a_stale_load_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # records.py:core/ExceptionReplacer (line 243): an altered newest record stops the writer
    broken = rewritten_member(records, records.RecordLog, "_recover", "except CorruptStateError:", "except KeyError:")
    monkeypatch.setattr(records.RecordLog, "_recover", broken)
    with pytest.raises(records.CorruptStateError):  # the contracts check reports the raise
        records_problem()
    monkeypatch.undo()
    # store.py load: an object store's cache keyed by the path alone serves a rewritten object stale
    broken = rewritten_member(store, store.Store, "load", "key = (path, hashlib.blake2b(data, digest_size=16).digest())",
                            "key = (path,)")
    monkeypatch.setattr(store.Store, "load", broken)
    found = records_problem()
    assert found is not None and found.startswith("file store: load after the object was rewritten"), found


@pytest.mark.parametrize("name, old, new", [
    # records.py:core/ReplaceUnaryOperator_USub_UAdd:1, _Invert:1, _Delete_USub:1, NumberReplacer:6, ReplaceAndWithOr:1 (sequences)
    ("sequences", 'and n[:-4].isdigit()', 'and n[:+4].isdigit()'),
    ("sequences", 'and n[:-4].isdigit()', 'and n[:~4].isdigit()'),
    ("sequences", 'and n[:-4].isdigit()', 'and n[:4].isdigit()'),
    ("sequences", 'and n[:-4].isdigit()', 'and n[:-5].isdigit()'),
    ("sequences", 'n.endswith(".rec") and n[:-4]', 'n.endswith(".rec") or n[:-4]'),
    # _UAdd:2/3, _Invert:2/3, _Not:2/3, _Delete_USub:2/3, ReplaceAndWithOr:2 (_top: set-aside numbers)
    ("_top", "aside = [int(n[:-len(suffix)])", "aside = [int(n[:+len(suffix)])"),
    ("_top", "and n[:-len(suffix)].isdigit()", "and n[:~len(suffix)].isdigit()"),
    ("_top", "and n[:-len(suffix)].isdigit()", "and n[:not len(suffix)].isdigit()"),
    ("_top", "and n[:-len(suffix)].isdigit()", "and n[:+len(suffix)].isdigit()"),  # USub_UAdd:3
    ("_top", "aside = [int(n[:-len(suffix)])", "aside = [int(n[:len(suffix)])"),
    ("_top", "if n.endswith(suffix) and n[", "if n.endswith(suffix) or n["),
    # _Not:5/6/7, NumberReplacer:25 (latest: the previous record, the newest number)
    ("latest", "previous = self.read(seqs[-2])", "previous = self.read(seqs[not 2])"),
    ("latest", "return (seqs[-2], previous)", "return (seqs[not 2], previous)"),
    ("latest", "self.last = seqs[-1]", "self.last = seqs[- 0]"),
    # _Not:9, NumberReplacer:29 (_torn_newest: which record is torn)
    ("_torn_newest", "torn = seqs[-1]", "torn = seqs[not 1]"),
    # IsNot_Is:4, AddNot:19 (prune: the newest kept)
    ("prune", "if self.last is not None:", "if self.last is None:"),
])
def test_record_log_numbering_and_names_are_checked(monkeypatch: pytest.MonkeyPatch, name: str, old: str,
                                                    new: str) -> None:
    """The record log's names (other objects under its prefix), numbering above
    set-aside records, a torn newest record over three, a reader that then writes, prune after
    a read - none of which the suite's well-formed two-record logs showed."""
    monkeypatch.setattr(records.RecordLog, name, rewritten_member(records, records.RecordLog, name, old, new))
    try:
        found = records_problem()
    except Exception:  # noqa: BLE001 - a raise inside the check: the contracts check reports it
        return
    assert found is not None, (name, new)


def test_a_record_longer_than_256_bytes_is_read() -> None:
    """records.py:core/ReplaceComparisonOperator_Gt_IsNot:0 (line 115, ``len(payload) > length`` ->
    ``is not``): equal lengths past 256 are distinct int objects, so every larger record would be
    refused; the check's payloads were all small."""
    broken = rewritten_member(records, records, "unframe", "if len(payload) > length:", "if len(payload) is not length:")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "unframe", broken)
        assert "1,403-byte payload was refused" in (records_problem() or "")


@pytest.mark.parametrize("name, old, new, seen", [
    # store.py:core/ReplaceUnaryOperator_Delete_Not:0 / AddNot:0 (join), :1 (display), ReplaceOrWithAnd:0 (display)
    ("join", "if not is_uri(location):", "if is_uri(location):", "locations:"),
    ("display", "if not is_uri(location):", "if is_uri(location):", "locations:"),
    ("display", "parts.hostname or ''", "parts.hostname and ''", "locations:"),
])
def test_locations_are_checked(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str, seen: str) -> None:
    """``join``/``display`` on URIs with a query: the Spark runs only ever give them query-less ``file://`` URIs and plain
    local paths, where a swapped branch gives the same string."""
    monkeypatch.setattr(store, name, rewritten_member(store, store, name, old, new))
    found = records_problem()
    assert found is not None and found.startswith(seen), found


@pytest.mark.parametrize("old, new", [
    ("os.makedirs(self.location, exist_ok=True)", "os.makedirs(self.location, exist_ok=False)"),  # ReplaceTrueWithFalse:0
    ("fs.create_dir(path, recursive=True)", "fs.create_dir(path, recursive=False)"),  # ReplaceTrueWithFalse:1
])
def test_make_root_again_and_nested_is_checked(monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    monkeypatch.setattr(store.Store, "make_root", rewritten_member(store, store.Store, "make_root", old, new))
    with pytest.raises(OSError):  # the contracts check reports the raise
        records_problem()


def test_a_part_under_new_prefixes_on_a_uri_store_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # store.py:core/ReplaceTrueWithFalse:3 (write_once on file:// / HDFS: parent directories created one level only)
    broken = rewritten_member(store, store.Store, "write_once", 'fs.create_dir(inner.rsplit("/", 1)[0], recursive=True)',
                            'fs.create_dir(inner.rsplit("/", 1)[0], recursive=False)')
    monkeypatch.setattr(store.Store, "write_once", broken)
    with pytest.raises(OSError):
        records_problem()
