"""The Hudi validator (reference_impl.hudi.validate) against targeted damage to valid tables.

A table the reference writer makes from generated operations (the model suite's tables: COW or MOR, v6 or v9,
either merge mode) validates clean. Then one mutation, drawn from those that apply to the table, must be reported
under its rule id (other findings may come with it: a renamed completed file also leaves its inflight file
behind, HUDI-TIMELINE-003):

* a required property (``hoodie.table.name`` / ``type`` / ``version``) dropped, or the type not one of the two
  -> HUDI-LAYOUT-003;
* ``hoodie.timeline.layout.version`` inconsistent with the table version -> HUDI-LAYOUT-004;
* ``hoodie.table.checksum`` not the CRC of the name -> HUDI-LAYOUT-005;
* a completed instant file renamed to a requested time that is no clock time (month 13 / day 32 / hour 24)
  -> HUDI-TIMELINE-006;
* (v9) a completion time set before the requested time -> HUDI-TIMELINE-005;
* a base or log file that commit metadata names deleted -> HUDI-COMMIT-002 (its write stat's path is gone);
* (MOR) a log block's size pointed past the end of the file -> HUDI-LOG-002; its closing total length (the
  reverse pointer) changed -> HUDI-LOG-006; a log file's leading magic broken -> HUDI-LOG-001.
"""

from __future__ import annotations

import os
import re
import struct
import tempfile

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from conformance.suites.property.delta._support import examples
from conformance.suites.property.hudi import test_mor_model_props as M

RULES = ("HUDI-LAYOUT-003", "HUDI-LAYOUT-004", "HUDI-LAYOUT-005", "HUDI-TIMELINE-005", "HUDI-TIMELINE-006",
         "HUDI-COMMIT-002", "HUDI-LOG-001", "HUDI-LOG-002", "HUDI-LOG-006")


def _props(d: str) -> str:
    return os.path.join(d, ".hoodie", "hoodie.properties")


def _timeline(d: str) -> str:
    sub = os.path.join(d, ".hoodie", "timeline")
    return sub if os.path.isdir(sub) else os.path.join(d, ".hoodie")


def _set_property(d: str, key: str, value: str | None) -> None:
    """Rewrite ``hoodie.properties`` with ``key`` set to ``value`` (dropped for None); the rest kept as written."""
    with open(_props(d)) as fh:
        lines = fh.read().splitlines()
    assert any(line.startswith(key + "=") for line in lines), key
    out = [line if not line.startswith(key + "=") else f"{key}={value}" for line in lines if
           value is not None or not line.startswith(key + "=")]
    with open(_props(d), "w") as fh:
        fh.write("\n".join(out) + "\n")


def _files(d: str, pattern: str) -> list[str]:
    """Data files under the partitions (``.hoodie`` left out) whose name matches ``pattern``, sorted."""
    out = []
    for root, dirs, names in os.walk(d):
        dirs[:] = [x for x in dirs if x != ".hoodie"]
        out += [os.path.join(root, n) for n in names if re.fullmatch(pattern, n)]
    return sorted(out)


_COMPLETED = r"([0-9]{17})(_[0-9]{17})?\.(commit|deltacommit|replacecommit)"
LOGS = r"\..*\.log\.[0-9]+_.*"
BASES = r"[^.].*\.parquet"


def _completed(d: str) -> list[str]:
    return sorted(n for n in os.listdir(_timeline(d)) if re.fullmatch(_COMPLETED, n))


def _committed_paths(d: str) -> set[str]:
    """Root-relative paths the completed commits' write stats name (what HUDI-COMMIT-002 checks)."""
    from reference_impl.hudi import commit_metadata as CM
    from reference_impl.hudi import properties as P
    from reference_impl.hudi import timeline as T
    from reference_impl.storage import open_storage

    storage = open_storage(d)
    timeline = T.load_active_timeline(storage, P.read_table_config(storage))
    out = set()
    for inst in timeline.completed_writes():
        meta = CM.read_instant_metadata(storage, timeline, inst)
        for stats in getattr(meta, "partition_to_write_stats", {}).values():
            out |= {s.path for s in stats if getattr(s, "path", None)}
    return out


# --- mutations: (name, applies(d, table), apply(d, data), expected rule) --------------------------------------


def _drop_required(d, data):
    _set_property(d, data.draw(st.sampled_from(["hoodie.table.name", "hoodie.table.type", "hoodie.table.version"]),
                               label="property"), None)


def _bad_type(d, data):
    _set_property(d, "hoodie.table.type", data.draw(st.sampled_from(["", "MOR", "copy_on_write", "X"]), label="type"))


def _bad_layout(d, data, table):
    _set_property(d, "hoodie.timeline.layout.version", "2" if table.version < 8 else "1")


def _bad_checksum(d, data):
    _set_property(d, "hoodie.table.checksum", str(data.draw(st.integers(0, 2 ** 32 - 1), label="checksum")))


def _no_clock_time(d, data):
    name = data.draw(st.sampled_from(_completed(d)), label="instant")
    at, bad = data.draw(st.sampled_from([(4, "13"), (6, "32"), (8, "24")]), label="field")
    os.rename(os.path.join(_timeline(d), name), os.path.join(_timeline(d), name[:at] + bad + name[at + 2:]))


def _completed_before_requested(d, data):
    name = data.draw(st.sampled_from(_completed(d)), label="instant")
    requested, rest = name.split("_", 1)
    before = str(int(requested) - data.draw(st.integers(1, 999), label="millis"))
    os.rename(os.path.join(_timeline(d), name), os.path.join(_timeline(d), f"{requested}_{before}.{rest.split('.', 1)[1]}"))


def _delete_committed_file(d, data):
    path = data.draw(st.sampled_from(sorted(_committed_paths(d))), label="file")
    os.remove(os.path.join(d, path))


def _log_block(d, data) -> tuple[str, bytearray, int, int]:
    """A random log file, its bytes, and the offset and length of a random block of it."""
    from reference_impl.hudi import logfile as LF

    path = data.draw(st.sampled_from(_files(d, LOGS)), label="log file")
    with open(path, "rb") as fh:
        raw = bytearray(fh.read())
    block = data.draw(st.sampled_from(LF.read_log_file(bytes(raw), decode=False)), label="block")
    return path, raw, block.offset, block.length


def _size_past_end(d, data):
    path, raw, offset, _ = _log_block(d, data)
    struct.pack_into(">q", raw, offset + 6, len(raw) + data.draw(st.integers(0, 1000), label="past"))
    with open(path, "wb") as fh:
        fh.write(raw)


def _bad_total_length(d, data):
    path, raw, offset, length = _log_block(d, data)
    pointer = struct.unpack_from(">q", raw, offset + length - 8)[0]
    delta = data.draw(st.integers(-pointer, 1000).filter(lambda x: x != 0), label="delta")
    struct.pack_into(">q", raw, offset + length - 8, pointer + delta)
    with open(path, "wb") as fh:
        fh.write(raw)


def _bad_magic(d, data):
    path = data.draw(st.sampled_from(_files(d, LOGS)), label="log file")
    with open(path, "r+b") as fh:
        fh.write(b"X")


def mutations(d: str, table: M.HudiTable) -> list[tuple[str, object, str]]:
    """The mutations that apply to the table at ``d``."""
    out = [("drop a required property", _drop_required, "HUDI-LAYOUT-003"),
           ("table type not COW/MOR", _bad_type, "HUDI-LAYOUT-003"),
           ("layout version of the other version line", lambda d, data: _bad_layout(d, data, table), "HUDI-LAYOUT-004"),
           ("checksum not the name's CRC", _bad_checksum, "HUDI-LAYOUT-005")]
    if _completed(d):
        out.append(("completed instant renamed to no clock time", _no_clock_time, "HUDI-TIMELINE-006"))
        if table.version >= 8:
            out.append(("completed before requested", _completed_before_requested, "HUDI-TIMELINE-005"))
    if _committed_paths(d):
        out.append(("a committed file deleted", _delete_committed_file, "HUDI-COMMIT-002"))
    if _files(d, LOGS):
        out += [("log block size past the end", _size_past_end, "HUDI-LOG-002"),
                ("log block total length changed", _bad_total_length, "HUDI-LOG-006"),
                ("log magic broken", _bad_magic, "HUDI-LOG-001")]
    return out


@st.composite
def written_tables(draw) -> tuple[M.HudiTable, list[tuple]]:
    """A table and operations that start with an insert (so files and commits exist) and, on MOR, an upsert of an
    inserted key (so log files exist unless a compaction follows)."""
    table = draw(M.tables, label="table")
    first = [("insert", [((table.partitions[0], "k0"), 1, 3)])]
    if table.mor:
        first.append(("upsert", [((table.partitions[0], "k0"), 2, 1)]))
    return table, first + draw(st.lists(M.operations(table), max_size=2), label="ops")


@pytest.mark.rule(*RULES)
@examples(0.3, floor=5)
@given(written_tables(), st.data())
def test_mutation_is_flagged(scenario, data):
    from reference_impl.hudi.validate import validate_table

    table, ops = scenario
    with tempfile.TemporaryDirectory() as d:
        M.run(table, ops, d)
        assert [f"{v.rule}: {v.message}" for v in validate_table(d)] == [], "the writer's table is not clean"
        name, mutate, rule = data.draw(st.sampled_from(mutations(d, table)), label="mutation")
        note(f"{table}: {name}")
        mutate(d, data)
        found = [f"{v.rule}: {v.message}" for v in validate_table(d)]
        assert any(f.startswith(rule + ":") for f in found), f"{name}: expected {rule}, got {found}"


def test_every_mutation_is_reachable():
    """Self-test: on a MOR v9 table with logs every mutation applies (none is dead code of the strategy)."""
    table = M.HudiTable("MERGE_ON_READ", 9, M.EVENT, ("a",))
    with tempfile.TemporaryDirectory() as d:
        M.run(table, [("insert", [(("a", "k0"), 1, 3)]), ("upsert", [(("a", "k0"), 2, 1)])], d)
        names = [m[0] for m in mutations(d, table)]
    assert len(names) == 10, names
