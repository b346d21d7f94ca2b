"""The metadata table's files partition (reference_impl.hudi.metadata_table): a metadata table built from bytes
(HFile base file, log files with HFile / Avro data blocks, delete and rollback blocks) read by
``read_files_partition`` for table versions 6 and 9, only writes the data table committed counting, and compared
with the file listing by ``listing_disagreements``."""

from __future__ import annotations

import os

import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import metadata_table as M
from reference_impl.storage import LocalStorage

from .._errors import raises
from ._tables import (MetadataTable, Table, data_size, fid, full_commit, mdt_avro_block, mdt_delete_block,
                      mdt_hfile_block, mdt_init_instant, t, write_stat)

ALL = M.ALL_PARTITIONS_KEY
P1, P2 = "part=p1", "part=p2"


class Built:
    """A data table with a metadata table: t1 inserts b1 (p1) and b2 (p2), t3 writes b3 (p1: a new base file on
    copy-on-write, a log file on merge-on-read), t5 writes b5 (p2) and fails: its metadata delta commit completed,
    its data commit did not."""

    def __init__(self, root, version: int, table_type: str = "COPY_ON_WRITE", *, partitions: str = "files"):
        self.version = version
        self.tb = tb = Table(root, version=version, table_type=table_type,
                             extra={"hoodie.table.metadata.partitions": partitions})
        mor = table_type == "MERGE_ON_READ"
        write = "deltacommit" if mor else "commit"
        self.done = (lambda n: t(n + 1)) if version >= 8 else (lambda n: None)
        self.b1 = tb.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
        self.b2 = tb.base(P2, fid(2), t(1), [Table.row("k2", 1, "b", t(1), part="p2")])
        full_commit(tb, t(1), self.done(1), action=write, stats=[write_stat(P1, fid(1), self.b1),
                                                                 write_stat(P2, fid(2), self.b2)])
        if mor:
            self.b3 = tb.log(P1, fid(1), t(3) if version >= 8 else t(1),
                             [Table.data_block(t(3), [Table.row("k1", 2, "a2", t(3))])])
        else:
            self.b3 = tb.base(P1, fid(1), t(3), [Table.row("k1", 2, "a2", t(3))])
        full_commit(tb, t(3), self.done(3), action=write, stats=[write_stat(P1, fid(1), self.b3)])
        self.b5 = tb.base(P2, fid(2), t(5), [Table.row("k2", 5, "b5", t(5), part="p2")])
        tb.pending(t(5), write)
        self.mdt = MetadataTable(tb)
        self.init = mdt_init_instant(version)
        self.mdt.delta(self.init, t(0) if version >= 8 else None)
        self.mdt.base_hfile(self.init, {ALL: {}})
        self.logs = 0
        self.mdt_write(t(1), [mdt_hfile_block(t(1), {ALL: {P1: 0, P2: 0}, P1: {self.name(self.b1): self.size(self.b1)},
                                                     P2: {self.name(self.b2): self.size(self.b2)}})])
        self.mdt_write(t(3), [mdt_hfile_block(t(3), {P1: {self.name(self.b3): self.size(self.b3)}})])
        self.mdt_write(t(5), [mdt_hfile_block(t(5), {P2: {self.name(self.b5): self.size(self.b5)}})])

    @staticmethod
    def name(rel: str) -> str:
        return os.path.basename(rel)

    def size(self, rel: str) -> int:
        return data_size(self.tb, rel)

    def mdt_write(self, instant: str, blocks, *, complete: bool = True) -> str:
        """A metadata delta commit at ``instant``: a log file of ``blocks`` (v8+: named by the instant; v6: the next
        version of the log on the init base file)."""
        self.logs += 1
        if self.version >= 8:
            rel = self.mdt.files_log(instant, blocks)
        else:
            rel = self.mdt.files_log(self.init, blocks, version=self.logs)
        if complete:
            self.mdt.delta(instant, self.done(int(instant[-5:])))
        else:
            self.mdt.pending(instant)
        return rel

    def expected(self) -> dict:
        return {P1: {self.name(self.b1): self.size(self.b1), self.name(self.b3): self.size(self.b3)},
                P2: {self.name(self.b2): self.size(self.b2)}}

    @property
    def storage(self):
        return LocalStorage(self.tb.root)


VERSIONS = [6, 8, 9]


@pytest.mark.rule("HUDI-LAYOUT-016", "HUDI-LAYOUT-011")
@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_files_partition_read_and_agrees(tmp_path, version, table_type):
    b = Built(tmp_path, version, table_type)
    assert M.read_files_partition(b.storage) == b.expected()
    assert M.listing_disagreements(b.storage) == []


@pytest.mark.rule("HUDI-LAYOUT-016")
@pytest.mark.parametrize("version", VERSIONS)
def test_only_writes_the_data_table_committed_count(tmp_path, version):
    """t5's metadata delta commit completed, its data commit did not: b5 is not listed. Once t5 completes on the
    data table, it is."""
    b = Built(tmp_path, version)
    assert b.name(b.b5) not in M.read_files_partition(b.storage)[P2]
    full_commit(b.tb, t(5), b.done(5), action="commit", stats=[write_stat(P2, fid(2), b.b5)])
    assert b.name(b.b5) in M.read_files_partition(b.storage)[P2]
    assert M.listing_disagreements(b.storage) == []


@pytest.mark.rule("HUDI-LAYOUT-016")
@pytest.mark.parametrize("version", VERSIONS)
def test_pending_metadata_delta_commit_does_not_count(tmp_path, version):
    b = Built(tmp_path, version)
    b7 = b.tb.base(P2, fid(3), t(7), [Table.row("k7", 7, "g", t(7), part="p2")])
    full_commit(b.tb, t(7), b.done(7), action="commit", stats=[write_stat(P2, fid(3), b7)])
    b.mdt_write(t(7), [mdt_hfile_block(t(7), {P2: {b.name(b7): b.size(b7)}})], complete=False)
    assert M.read_files_partition(b.storage) == b.expected()
    problems = M.listing_disagreements(b.storage)
    assert problems == [f"'{P2}': the listing has {b.name(b7)} ({b.size(b7):,} bytes), the metadata table does not "
                        "list it"]


@pytest.mark.rule("HUDI-LAYOUT-016")
@pytest.mark.parametrize("version", [6, 9])
def test_clean_tombstones_sizes_and_deletes(tmp_path, version):
    """A clean's tombstone removes b1 (the data table's clean instant counts); a later size for b3 wins when larger
    (files only grow); a delete block drops the record of p2 and a tombstone the partition from the list."""
    b = Built(tmp_path, version)
    b.tb.clean(t(7), b.done(7), t(3))
    b.mdt_write(t(7), [mdt_hfile_block(t(7), {P1: {b.name(b.b1): None, b.name(b.b3): 1}})])
    want = b.expected()
    del want[P1][b.name(b.b1)]
    assert M.read_files_partition(b.storage) == want
    os.remove(os.path.join(b.tb.root, b.b1))
    assert M.listing_disagreements(b.storage) == []
    full_commit(b.tb, t(9), b.done(9), action="commit", operation="DELETE_PARTITION")
    b.mdt_write(t(9), [mdt_hfile_block(t(9), {ALL: {P2: None}}), mdt_delete_block(t(9), [P2])])
    assert M.read_files_partition(b.storage) == {P1: want[P1]}
    assert M.listing_disagreements(b.storage) == [f"partition '{P2}' is in the listing (1 files) but not in the "
                                                  "metadata table"]


@pytest.mark.rule("HUDI-LAYOUT-016", "HUDI-LOG-009")
@pytest.mark.parametrize("version", [6, 9])
def test_rollback_block_and_avro_block(tmp_path, version):
    """Blocks of t7 rolled back by a command block in the metadata log are dropped; Avro data blocks (the key in the
    record) merge like HFile blocks."""
    b = Built(tmp_path, version)
    full_commit(b.tb, t(7), b.done(7), action="commit")
    b.tb.rollback(t(9), b.done(9), t(7), "commit")
    b.mdt_write(t(7), [mdt_hfile_block(t(7), {P1: {"ghost.parquet": 5}})])
    b.mdt_write(t(9), [LF.rollback_block(instant_time=t(9), target_instant_time=t(7))])
    assert M.read_files_partition(b.storage) == b.expected()
    b.tb.clean(t(11), b.done(11), t(3))
    b.mdt_write(t(11), [mdt_avro_block(t(11), {P2: {"extra.parquet": 7}})])
    got = M.read_files_partition(b.storage)
    assert got[P2]["extra.parquet"] == 7 and "ghost.parquet" not in got[P1]
    assert f"'{P2}': the metadata table lists extra.parquet (7 bytes), the listing has no such file of a completed " \
           "instant" in M.listing_disagreements(b.storage)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_size_disagreement_and_missing_file(tmp_path):
    b = Built(tmp_path, 9)
    b1_size, b2_size = b.size(b.b1), b.size(b.b2)
    with open(os.path.join(b.tb.root, b.b2), "ab") as fh:
        fh.write(b"xx")
    os.remove(os.path.join(b.tb.root, b.b1))
    assert M.listing_disagreements(b.storage) == [
        f"'{P1}': the metadata table lists {b.name(b.b1)} ({b1_size:,} bytes), the listing has no such file of a "
        "completed instant",
        f"'{P2}': {b.name(b.b2)} is {b2_size + 2:,} bytes, the metadata table says {b2_size:,}"]
    os.remove(os.path.join(b.tb.root, P2, ".hoodie_partition_metadata"))
    assert f"partition '{P2}' is in the metadata table but not in the listing" in M.listing_disagreements(b.storage)


@pytest.mark.rule("HUDI-LAYOUT-011")
@pytest.mark.parametrize("version", [6, 9])
def test_never_required(tmp_path, version):
    """No metadata table, or one the table's properties do not list as holding ``files``: None, and nothing to
    disagree with."""
    b = Built(tmp_path / "a", version, partitions="column_stats")
    assert M.read_files_partition(b.storage) is None
    assert M.listing_disagreements(b.storage) == []
    plain = Table(tmp_path / "b", version=version, extra={"hoodie.table.metadata.partitions": "files"})
    plain.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))])
    assert M.read_files_partition(LocalStorage(plain.root)) is None
    assert M.open_metadata_table(LocalStorage(plain.root)) is None


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_non_partitioned_key(tmp_path):
    tb = Table(tmp_path / "t", version=9, table_type="COPY_ON_WRITE",
               extra={"hoodie.table.metadata.partitions": "files", "hoodie.table.partition.fields": ""})
    tb.partition("")  # the partition metafile at the root
    probe = Table(tmp_path / "probe", version=9)  # Table.base puts files under a partition directory: borrow one
    rel = os.path.basename(probe.base(P1, fid(1), t(1), [Table.row("k1", 1, "a", t(1))]))
    tb.put(rel, open(os.path.join(probe.root, P1, rel), "rb").read())
    full_commit(tb, t(1), t(2), action="commit", stats=[write_stat("", fid(1), rel)])
    mdt = MetadataTable(tb)
    mdt.delta("00000000000000000", t(0))
    mdt.base_hfile("00000000000000000", {ALL: {}})
    mdt.files_log(t(1), [mdt_hfile_block(t(1), {ALL: {".": 0}, ".": {os.path.basename(rel): data_size(tb, rel)}})])
    mdt.delta(t(1), t(2))
    st = LocalStorage(tb.root)
    assert M.read_files_partition(st) == {"": {os.path.basename(rel): data_size(tb, rel)}}
    assert M.listing_disagreements(st) == []


def test_merge_file_maps():
    old = {"a": (10, False), "b": (5, False)}
    assert M.merge_file_maps(old, {"a": (7, False)}) == {"a": (10, False), "b": (5, False)}  # sizes only grow
    assert M.merge_file_maps(old, {"a": (12, False)})["a"] == (12, False)
    assert M.merge_file_maps(old, {"b": (0, True)}) == {"a": (10, False)}
    # a tombstone for a name not listed yet stays, for the merge with the base file
    assert M.merge_file_maps({}, {"c": (0, True)}) == {"c": (0, True)}
    assert M.merge_file_maps({"c": (0, True)}, {"c": (3, True)}) == {"c": (3, True)}


# ---------------------------------------------------------------------------------------------
# Malformed metadata tables


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_corrupt_base_hfile(tmp_path):
    b = Built(tmp_path, 9)
    base = next(n for n in os.listdir(os.path.join(b.mdt.root, "files")) if n.endswith(".hfile"))
    path = os.path.join(b.mdt.root, "files", base)
    data = open(path, "rb").read()
    with open(path, "wb") as fh:
        fh.write(data[:-10])
    raises(InvalidTable, "HUDI-LAYOUT-016", "trailer", M.read_files_partition, b.storage)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_value_not_matching_schema(tmp_path):
    b = Built(tmp_path, 9)
    from reference_impl.hudi.hfile import write_hfile
    bad = write_hfile([(b"part=p1", b"\x02\x04zz")], file_info={"schema": b"{}"})
    b.mdt_write(t(7), [LF.encode_block(LF.BlockType.HFILE_DATA, {LF.HeaderKey.INSTANT_TIME: t(7),
                                                                  LF.HeaderKey.SCHEMA: _mdt_schema()}, bad)])
    full_commit(b.tb, t(7), b.done(7), action="commit")
    raises(InvalidTable, "HUDI-LAYOUT-016", "does not decode", M.read_files_partition, b.storage)


def _mdt_schema() -> str:
    from ._tables import MDT_SCHEMA
    return MDT_SCHEMA


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_wrong_record_type_and_block_type(tmp_path):
    import io
    import json

    import fastavro

    from reference_impl.hudi.hfile import write_hfile

    b = Built(tmp_path, 9)
    full_commit(b.tb, t(7), b.done(7), action="commit")
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, fastavro.parse_schema(json.loads(_mdt_schema())),
                               {"key": "", "type": 2, "filesystemMetadata": {}})  # the partition list typed 2
    hf = write_hfile([(ALL.encode(), buf.getvalue())], file_info={"schema": _mdt_schema().encode()})
    block = LF.encode_block(LF.BlockType.HFILE_DATA, {LF.HeaderKey.INSTANT_TIME: t(7)}, hf)
    b.mdt_write(t(7), [block])  # no SCHEMA header: the HFile's own schema serves
    raises(InvalidTable, "HUDI-LAYOUT-016", "has type 2, not 1", M.read_files_partition, b.storage)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_unexpected_block_type(tmp_path):
    b = Built(tmp_path, 9)
    b.mdt_write(t(7), [LF.parquet_data_block(b"PAR1", "{}", instant_time=t(7))])
    full_commit(b.tb, t(7), b.done(7), action="commit")
    with pytest.raises(Unsupported, match="PARQUET_DATA"):
        M.read_files_partition(b.storage)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_metadata_table_must_be_mor_hfile_same_version(tmp_path):
    b = Built(tmp_path, 9)
    props = os.path.join(b.mdt.root, ".hoodie", "hoodie.properties")
    text = open(props).read()
    with open(props, "w") as fh:
        fh.write(text.replace("hoodie.table.base.file.format=HFILE", "hoodie.table.base.file.format=PARQUET"))
    raises(InvalidTable, "HUDI-LAYOUT-016", "not HFILE", M.read_files_partition, b.storage)
    with open(props, "w") as fh:
        fh.write(text.replace("hoodie.table.type=MERGE_ON_READ", "hoodie.table.type=COPY_ON_WRITE"))
    raises(InvalidTable, "HUDI-LAYOUT-016", "not MERGE_ON_READ", M.read_files_partition, b.storage)


@pytest.mark.rule("HUDI-LAYOUT-016")
def test_damaged_metadata_files_fail_cleanly(tmp_path):
    """Random damage to the metadata table's base file and logs gives a listing or InvalidTable/Unsupported,
    never another exception."""
    import random

    b = Built(tmp_path, 9)
    files_dir = os.path.join(b.mdt.root, "files")
    targets = sorted(n for n in os.listdir(files_dir) if n.endswith(".hfile") or ".log." in n)
    originals = {n: open(os.path.join(files_dir, n), "rb").read() for n in targets}
    rng = random.Random(7)
    for _ in range(300):
        name = rng.choice(targets)
        damaged = bytearray(originals[name])
        for _ in range(rng.choice((1, 2, 3))):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        with open(os.path.join(files_dir, name), "wb") as fh:
            fh.write(bytes(damaged))
        try:
            M.read_files_partition(b.storage)
        except (InvalidTable, Unsupported):
            pass
        with open(os.path.join(files_dir, name), "wb") as fh:
            fh.write(originals[name])
    assert M.read_files_partition(b.storage) == b.expected()
