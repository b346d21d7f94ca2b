"""The raw log surgery behind the Delta corpus does what each case says it does.

A raw step that silently did nothing would turn a negative case into a trivially passing one,
so each helper is checked on a small table built with the reference writer.
"""

from __future__ import annotations

import json
import struct

import pyarrow as pa
import pytest

from conformance.formats.delta import raw


@pytest.fixture()
def table(tmp_path):
    """A (storage, versions) pair: version 0 create, 1 and 2 appends, partitioned by p."""
    writer = pytest.importorskip("reference_impl.delta.writer")
    from reference_impl.storage import open_storage

    storage = open_storage(str(tmp_path / "t"))
    schema = pa.schema([("p", pa.string()), ("id", pa.int64())])
    writer.create_table(storage, schema, partition_by=("p",))
    writer.append(storage, pa.table({"p": ["a", None], "id": [1, 2]}, schema=schema))
    writer.append(storage, pa.table({"p": ["b"], "id": [3]}, schema=schema))
    return storage


@pytest.mark.rule("DELTA-DV-012")
def test_z85_matches_the_z85_spec_vector() -> None:
    """The ZeroMQ RFC 32 test vector: 86 4F D2 6F B5 59 F7 5B -> HelloWorld."""
    assert raw.z85_encode(bytes.fromhex("864FD26FB559F75B")) == "HelloWorld"


@pytest.mark.rule("DELTA-DV-013", "DELTA-DV-007", "DELTA-DV-010")
def test_inline_dv_is_portable_roaring_with_magic() -> None:
    """Magic 1681511377 little-endian, one bucket, and the reference decodes the same rows."""
    data = raw.serialize_dv([3, 4, 7, 11, 18, 29])
    assert struct.unpack("<I", data[:4])[0] == 1681511377
    assert struct.unpack("<Q", data[4:12])[0] == 1
    dv = raw.inline_dv([29, 3, 4, 7, 11, 18, 4])
    assert dv["cardinality"] == 6 and dv["sizeInBytes"] == len(data) and "offset" not in dv
    deletion_vector = pytest.importorskip("reference_impl.delta.deletion_vector")
    decoded = deletion_vector.z85_decode(dv["pathOrInlineDv"])[: dv["sizeInBytes"]]
    assert list(deletion_vector.deserialize_bitmap(decoded)) == [3, 4, 7, 11, 18, 29]


def test_spec_inline_example_uses_the_native_layout() -> None:
    """A finding, kept as a fact: the spec's inline example is not the layout its text prescribes.

    It decodes to magic 1681511376 (big-endian) + count + size, the older 'native' layout, not
    magic 1681511377 (little-endian) + portable bitmap. The corpus writes the prescribed one.
    """
    text = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L"
    out = b""
    for i in range(0, len(text), 5):
        n = 0
        for ch in text[i : i + 5]:
            n = n * 85 + raw.Z85_ALPHABET.index(ch)
        out += n.to_bytes(4, "big")
    assert len(out) == 40
    assert struct.unpack(">I", out[:4])[0] == 1681511376


@pytest.mark.rule("DELTA-ACTION-027")
def test_inject_unknown_fields_touches_every_action(table) -> None:
    """Every action of every commit gains futureField; the format struct gains one too."""
    raw.inject_unknown_fields()(table)
    for v in raw.commit_versions(table):
        for action in raw.read_actions(table, v):
            body = next(iter(action.values()))
            assert body["futureField"]["flag"] is True
            if "metaData" in action:
                assert action["metaData"]["format"]["futureFormatField"] == 1


@pytest.mark.rule("DELTA-LOG-005")
def test_truncate_line_breaks_json(table) -> None:
    """The truncated line no longer parses."""
    raw.truncate_line(1, -1)(table)
    last = table.read(raw.commit_path(1)).decode().splitlines()[-1]
    with pytest.raises(json.JSONDecodeError):
        json.loads(last)


@pytest.mark.rule("DELTA-LOG-001")
def test_delete_commits_and_version_bookkeeping(table) -> None:
    """Deleting a commit leaves a gap; append_commit continues after the newest one."""
    raw.delete_commits([1])(table)
    assert raw.commit_versions(table) == [0, 2]
    fn = raw.add_txn("app", 7)
    assert fn.new_commits == 1
    fn(table)
    assert raw.commit_versions(table) == [0, 2, 3]
    assert any("txn" in a and a["txn"]["version"] == 7 for a in raw.read_actions(table, 3))


@pytest.mark.rule("DELTA-FEATURE-004")
def test_set_protocol_replaces_the_protocol(table) -> None:
    """Exactly one protocol action, the new one."""
    raw.set_protocol(0, {"minReaderVersion": 4, "minWriterVersion": 2})(table)
    protocols = [a["protocol"] for a in raw.read_actions(table, 0) if "protocol" in a]
    assert protocols == [{"minReaderVersion": 4, "minWriterVersion": 2}]


@pytest.mark.rule("DELTA-ACTION-012")
def test_duplicate_first_add(table) -> None:
    """Commit 1 holds two identical add lines."""
    adds = [a for a in raw.read_actions(table, 1) if "add" in a]
    raw.duplicate_first_add(1)(table)
    after = [a for a in raw.read_actions(table, 1) if "add" in a]
    assert len(after) == len(adds) + 1 and after[0] == after[1]


@pytest.mark.rule("DELTA-PART-001")
def test_rewrite_null_partition_as_empty_string(table) -> None:
    """The null partition value becomes "" in the log."""
    raw.rewrite_partition_values(1, "p", {None: ""})(table)
    values = sorted(a["add"]["partitionValues"]["p"] for a in raw.read_actions(table, 1) if "add" in a)
    assert values == ["", "a"]


@pytest.mark.rule("DELTA-PART-004")
def test_reformat_timestamp_partitions(tmp_path) -> None:
    """Three adds end up in the three serialised forms, same instants."""
    writer = pytest.importorskip("reference_impl.delta.writer")
    from reference_impl.storage import open_storage

    storage = open_storage(str(tmp_path / "ts"))
    schema = pa.schema([("ts", pa.timestamp("us", tz="UTC")), ("id", pa.int32())])
    writer.create_table(storage, schema, partition_by=("ts",))
    import datetime as dt

    utc = dt.timezone.utc
    values = [dt.datetime(2021, 1, 1, tzinfo=utc), dt.datetime(2021, 6, 1, 12, 30, 45, 123456, tzinfo=utc), dt.datetime(2022, 1, 1, 0, 0, 1, tzinfo=utc)]
    writer.append(storage, pa.table({"ts": values, "id": [1, 2, 3]}, schema=schema))
    raw.reformat_timestamp_partitions(1, "ts", ("iso_utc", "space_micros", "space"))(storage)
    got = sorted(a["add"]["partitionValues"]["ts"] for a in raw.read_actions(storage, 1) if "add" in a)
    assert got == ["2021-01-01T00:00:00.000000Z", "2021-06-01 12:30:45.123456", "2022-01-01 00:00:01"]


@pytest.mark.rule("DELTA-CRC-001")
def test_write_crc_files(table) -> None:
    """One .crc per commit with the replayed counts."""
    raw.write_crc_files()(table)
    crc = json.loads(table.read(raw.crc_path(2)))
    assert crc["numFiles"] == 3 and crc["numMetadata"] == 1 and crc["numProtocol"] == 1
    assert crc["tableSizeBytes"] == sum(a["size"] for a in crc["allFiles"])


@pytest.mark.rule("DELTA-ICT-003")
def test_pin_in_commit_timestamps(tmp_path) -> None:
    """Each commitInfo gets start + v * step."""
    writer = pytest.importorskip("reference_impl.delta.writer")
    from reference_impl.storage import open_storage

    storage = open_storage(str(tmp_path / "ict"))
    schema = pa.schema([("id", pa.int32())])
    writer.create_table(storage, schema, properties={"delta.enableInCommitTimestamps": "true"}, features=("inCommitTimestamp",))
    writer.append(storage, pa.table({"id": [1]}, schema=schema))
    raw.pin_in_commit_timestamps(1000, 10)(storage)
    for v in (0, 1):
        first = raw.read_actions(storage, v)[0]
        assert first["commitInfo"]["inCommitTimestamp"] == 1000 + 10 * v


@pytest.mark.rule("DELTA-CKPT-014")
def test_delete_checkpoint_part_needs_a_part(table) -> None:
    """Asking to delete a part that does not exist is an error, not a silent no-op."""
    with pytest.raises(RuntimeError, match="no part 2"):
        raw.delete_checkpoint_part(2, 2)(table)


@pytest.mark.rule("DELTA-ACTION-017")
def test_move_first_file_percent_encodes(table) -> None:
    """The new add.path is the encoded URI of the new name, and the object exists under the decoded name."""
    raw.move_first_file("dir with space/f #1 100%.parquet")(table)
    last = raw.read_actions(table, raw.latest_version(table))
    add = next(a["add"] for a in last if "add" in a)
    assert add["path"] == "dir%20with%20space/f%20%231%20100%25.parquet"
    assert add["dataChange"] is False
    assert table.exists("dir with space/f #1 100%.parquet")
