"""Hudi file names and partition paths (reference_impl.hudi.naming): base and log file names as Hudi 1.2.0 and 0.15.0
wrote them, write tokens, file ids, which slice a log joins per table version, Hive-style partition path escaping
and the partition metadata file."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import naming as N

# Names from tables Spark 3.5.9 + Hudi 1.2.0 wrote (table versions 6, 8 and 9), one from Hudi 0.15.0.
BASE = "0789847e-0a74-4d88-94f4-63c861e41b9f-0_0-3-3_20261126110537170.parquet"
LOG_V6 = ".306f23e5-45b0-4401-8314-4aef3c43db0e-0_20261126110800301.log.3_0-20-25"
LOG_V8 = ".980fe1ae-d6c9-4467-a86a-a12911bce4b1-0_20261126110829147.log.1_0-144-145"
LOG_CDC = ".973bfb93-d3d8-4dbc-a24e-c23fe9bfb784-0_20261126110913620.log.1_1-558-557.cdc"
LOG_ROLLBACK_015 = ".e0992328-7175-4668-8313-4526ac95b8d6-0_20261126111400501.log.3_1-0-1"
# Java's .hoodie_partition_metadata as Properties.store wrote it (Hudi 1.2.0).
PARTITION_METAFILE = (b"#partition metadata\n#Thu Nov 26 11:06:49 UTC 2026\n"
                      b"commitTime=20261126110640748\npartitionDepth=1\n")


# ---------------------------------------------------------------------------------------------
# Base files, write tokens, file ids


@pytest.mark.rule("HUDI-FILE-004", "HUDI-FILE-005")
def test_base_file_name_parts_and_round_trip():
    b = N.parse_base_file_name(BASE)
    assert b.file_id == "0789847e-0a74-4d88-94f4-63c861e41b9f-0"
    assert b.write_token == N.WriteToken(task_partition_id=0, stage_id=3, task_attempt_id=3)
    assert b.instant == "20261126110537170" and b.extension == "parquet"
    assert str(b) == BASE
    assert N.format_base_file_name("f-0", "1-0-1", "00000000000001", "hfile") == "f-0_1-0-1_00000000000001.hfile"


@pytest.mark.rule("HUDI-FILE-004")
@pytest.mark.parametrize("name", [
    "f-0_0-3-3_20261126110537170",  # no extension
    "f-0_0-3_20261126110537170.parquet",  # two-part token
    "f-0_0-3-3_2026112611.parquet",  # instant too short
    "f-0_x-3-3_20261126110537170.parquet",
    "f_0_0-3-3_20261126110537170.parquet",  # Java splits on '_': the id would be "f"
    "dir/f-0_0-3-3_20261126110537170.parquet", "",
])
def test_bad_base_file_names_are_invalid(name):
    with pytest.raises(InvalidTable) as exc:
        N.parse_base_file_name(name)
    assert exc.value.rule == "HUDI-FILE-004"


@pytest.mark.rule("HUDI-FILE-004", "HUDI-FILE-009")
def test_base_file_extensions():
    for ext in ("parquet", "orc", "hfile", "lance"):
        assert N.parse_base_file_name(f"f-0_0-1-2_20261126110537170.{ext}").extension == ext
    with pytest.raises(Unsupported, match=".csv"):
        N.parse_base_file_name("f-0_0-1-2_20261126110537170.csv")
    with pytest.raises(InvalidTable, match="free of '_'"):
        N.format_base_file_name("a_b", "0-1-2", "20261126110537170")


@pytest.mark.rule("HUDI-FILE-005")
def test_write_tokens():
    assert N.parse_write_token("1-0-1") == N.WriteToken(task_partition_id=1, stage_id=0, task_attempt_id=1)
    assert str(N.parse_write_token("12-345-6789012345")) == "12-345-6789012345"  # the attempt id is a long
    for bad in ("1-0", "1-0-1-2", "a-0-1", "-1-0-1", "1 -0-1"):
        with pytest.raises(InvalidTable):
            N.parse_write_token(bad)
    with pytest.raises(InvalidTable, match="overflows"):
        N.parse_write_token("2147483648-0-1")


@pytest.mark.rule("HUDI-FILE-001")
def test_file_ids():
    assert N.split_file_id("0789847e-0a74-4d88-94f4-63c861e41b9f-0") == ("0789847e-0a74-4d88-94f4-63c861e41b9f", 0)
    assert N.split_file_id("files-0000-0") == ("files-0000", 0)  # metadata table file groups
    assert N.is_uuid_file_id("0789847e-0a74-4d88-94f4-63c861e41b9f-12")
    assert not N.is_uuid_file_id("files-0000-0") and not N.is_uuid_file_id("0789847E-0A74-4D88-94F4-63C861E41B9F-0")
    assert N.format_file_id("0789847e-0a74-4d88-94f4-63c861e41b9f", 3) == "0789847e-0a74-4d88-94f4-63c861e41b9f-3"
    with pytest.raises(InvalidTable):
        N.split_file_id("no-number-")


# ---------------------------------------------------------------------------------------------
# Log files


@pytest.mark.rule("HUDI-FILE-006", "HUDI-FILE-008")
@pytest.mark.parametrize("name, file_id, instant, version, token, cdc", [
    (LOG_V6, "306f23e5-45b0-4401-8314-4aef3c43db0e-0", "20261126110800301", 3, "0-20-25", False),
    (LOG_V8, "980fe1ae-d6c9-4467-a86a-a12911bce4b1-0", "20261126110829147", 1, "0-144-145", False),
    (LOG_CDC, "973bfb93-d3d8-4dbc-a24e-c23fe9bfb784-0", "20261126110913620", 1, "1-558-557", True),
    (LOG_ROLLBACK_015, "e0992328-7175-4668-8313-4526ac95b8d6-0", "20261126111400501", 3, "1-0-1", False),
    (".f1-0_20170101134598.log.2", "f1-0", "20170101134598", 2, None, False),  # before write tokens (< 0.10)
])
def test_log_file_names_parse_and_round_trip(name, file_id, instant, version, token, cdc):
    log = N.parse_log_file_name(name)
    assert (log.file_id, log.instant, log.version, log.is_cdc) == (file_id, instant, version, cdc)
    assert (str(log.write_token) if log.write_token else None) == token
    assert log.extension == "log" and N.is_log_file_name(name)
    assert str(log) == name


@pytest.mark.rule("HUDI-FILE-006")
def test_log_file_name_writer_and_special_forms():
    assert N.format_log_file_name("f-0", "20261126110913620", 1, "1-558-557", cdc=True) == \
        ".f-0_20261126110913620.log.1_1-558-557.cdc"
    assert N.format_log_file_name("f-0", "20261126110913620", 2) == ".f-0_20261126110913620.log.2"
    # the v6 archived timeline: extension "archive", no instant at all
    arch = N.parse_log_file_name(".commits_.archive.1_1-0-1")
    assert (arch.file_id, arch.instant, arch.extension) == ("commits", "", "archive")
    # Java's pattern is greedy: the file id runs to the last '_' before <instant>.log.
    assert N.parse_log_file_name(".a_b-0_20261126110913620.log.1_0-1-2").file_id == "a_b-0"
    # '-cdc' (which Java's '.cdc' pattern also takes) is kept as written
    assert str(N.parse_log_file_name(".f-0_20261126110913620.log.1_1-2-3-cdc")).endswith("-cdc")


@pytest.mark.rule("HUDI-FILE-006", "HUDI-FILE-008")
@pytest.mark.parametrize("name, rule", [
    ("f-0_20261126110800301.log.1_0-20-25", "HUDI-FILE-006"),  # no leading dot
    (".f-0_20261126110800301.log.1_0-20", "HUDI-FILE-006"),
    (".f-0_20261126110800301.parquet.1_0-20-25", "HUDI-FILE-006"),
    (".f-0_2026112611.log.1_0-20-25", "HUDI-FILE-006"),  # not an instant
    (".f-0_20261126110800301.log.x_0-20-25", "HUDI-FILE-006"),
    (".f-0_20261126110800301.log.1_0-20-25.crc", "HUDI-FILE-006"),
    (".f-0_20261126110800301.log.0_0-20-25", "HUDI-FILE-008"),  # versions start at 1
])
def test_bad_log_file_names_are_invalid(name, rule):
    with pytest.raises(InvalidTable) as exc:
        N.parse_log_file_name(name)
    assert exc.value.rule == rule


@pytest.mark.rule("HUDI-FILE-007", "HUDI-FILE-011", "HUDI-FILE-012")
def test_which_slice_a_log_joins_depends_on_the_table_version():
    bases = ["20261126110800000", "20261126120000000"]
    log = N.parse_log_file_name(".f-0_20261126110900000.log.1_0-1-2")
    # up to version 7 the name carries the base instant: that is the slice, whatever completed when
    assert N.slice_base_instant(log, 6, bases) == "20261126110900000"
    completions = {"20261126110900000": "20261126121500000"}
    # from version 8 the name carries the delta commit's requested time; it completed after the second base
    # file's instant (a compaction that started while it ran), so it joins that slice
    assert N.slice_base_instant(log, 8, bases, completions.get) == "20261126120000000"
    assert N.slice_base_instant(log, 9, bases[:1], completions.get) == "20261126110800000"
    assert N.slice_base_instant(log, 8, bases, {}.get) is None  # not completed: in no slice
    assert N.slice_base_instant(log, 8, [], completions.get) == "20261126110900000"  # a log-only file group
    with pytest.raises(InvalidTable):
        N.slice_base_instant(log, 8, bases)


@pytest.mark.rule("HUDI-FILE-011")
def test_log_order_within_a_slice():
    a = N.parse_log_file_name(".f-0_20261126110900000.log.1_0-1-2")
    b = N.parse_log_file_name(".f-0_20261126110800000.log.1_0-1-2")
    c = N.parse_log_file_name(".f-0_20261126110800000.log.2_0-1-1")
    # by completion time first (v8+): a completed before b
    assert sorted([a, b], key=lambda x: N.log_sort_key(x, {a: "3", b: "4"}[x])) == [a, b]
    # without completion times: instant, then version
    assert sorted([c, a, b], key=N.log_sort_key) == [b, c, a]


# ---------------------------------------------------------------------------------------------
# Partition paths


@pytest.mark.rule("HUDI-LAYOUT-015")
def test_partition_path_of_a_real_table():
    # hive-style, URL-encoded: the value "a b/c:d%e" and a null value, as Hudi 1.2.0 wrote the directories
    assert N.format_partition_path([("part", "a b/c:d%e")], hive_style=True, url_encode=True) == "part=a b%2Fc%3Ad%25e"
    assert N.format_partition_path({"part": None}, hive_style=True, url_encode=True) == \
        "part=__HIVE_DEFAULT_PARTITION__"
    assert N.parse_partition_path("part=a b%2Fc%3Ad%25e", ["part"], hive_style=True, url_encode=True) == \
        {"part": "a b/c:d%e"}
    assert N.parse_partition_path("part=__HIVE_DEFAULT_PARTITION__", ["part"], hive_style=True) == {"part": None}


@pytest.mark.rule("HUDI-LAYOUT-015")
def test_escape_set_is_hives():
    escaped = "".join(chr(c) for c in range(0x20)) + "\"#%'*/:=?\\\x7f{[]^"
    assert N.escape_path_name(escaped) == "".join(f"%{ord(c):02X}" for c in escaped)
    kept = " !$&()+,-.;<>@_`|}~abcXYZ019é€"
    assert N.escape_path_name(kept) == kept
    assert N.unescape_path_name(N.escape_path_name("x" + escaped + "x")) == "x" + escaped + "x"


@pytest.mark.rule("HUDI-LAYOUT-015")
def test_unescape_keeps_javas_quirks():
    assert N.unescape_path_name("a%2Fb") == "a/b"
    assert N.unescape_path_name("a%2F") == "a/"
    assert N.unescape_path_name("a%2") == "a%2" and N.unescape_path_name("a%") == "a%"  # too short: kept
    assert N.unescape_path_name("%zz%2Fx") == "%zz/x"
    assert N.unescape_path_name("%+Fx") == "\x0fx" and N.unescape_path_name("%-0x") == "\x00x"  # parseInt signs
    assert N.unescape_path_name("%-1x") == "%-1x"  # negative: left as it is


@pytest.mark.rule("HUDI-LAYOUT-015", "HUDI-COMMIT-005")
def test_partition_paths_by_style():
    values = [("year", 2026), ("city", "san francisco"), ("tag", "")]
    assert N.format_partition_path(values) == "2026/san francisco/__HIVE_DEFAULT_PARTITION__"
    assert N.format_partition_path(values, hive_style=True) == \
        "year=2026/city=san francisco/tag=__HIVE_DEFAULT_PARTITION__"
    assert N.format_partition_path([("p", "a/b")]) == "a/b"  # without URL encoding a '/' makes a directory
    assert N.format_partition_path([]) == ""
    assert N.parse_partition_path("2026/sf/default", ["year", "city", "tag"]) == {"year": "2026", "city": "sf",
                                                                                  "tag": None}
    assert N.parse_partition_path("", []) == {}
    with pytest.raises(InvalidTable, match="segments"):
        N.parse_partition_path("a/b", ["p"])
    with pytest.raises(InvalidTable, match="does not start with"):
        N.parse_partition_path("q=1", ["p"], hive_style=True)
    with pytest.raises(InvalidTable) as exc:
        N.parse_partition_path("x", [])
    assert exc.value.rule == "HUDI-COMMIT-005"


# ---------------------------------------------------------------------------------------------
# Partition metadata


@pytest.mark.rule("HUDI-LAYOUT-015")
def test_partition_metadata_text_reads_and_writes_javas_bytes():
    meta = N.parse_partition_metadata(PARTITION_METAFILE, depth=1)
    assert meta == N.PartitionMetadata(commit_time="20261126110640748", partition_depth=1)
    assert N.format_partition_metadata(meta, date_comment="Thu Nov 26 11:06:49 UTC 2026") == PARTITION_METAFILE
    with pytest.raises(InvalidTable, match="depth 1, the partition is 2 deep"):
        N.parse_partition_metadata(PARTITION_METAFILE, depth=2)
    with pytest.raises(InvalidTable, match="lacks partitionDepth"):
        N.parse_partition_metadata(b"commitTime=1\n")
    with pytest.raises(InvalidTable, match="not a number"):
        N.parse_partition_metadata(b"commitTime=1\npartitionDepth=x\n")


@pytest.mark.rule("HUDI-LAYOUT-015")
def test_partition_metadata_in_base_format():
    assert N.partition_metafile_name() == ".hoodie_partition_metadata"
    assert N.partition_metafile_name("parquet") == ".hoodie_partition_metadata.parquet"
    assert N.is_partition_metafile(".hoodie_partition_metadata.orc") and not N.is_partition_metafile(".hoodie")
    sink = pa.BufferOutputStream()
    table = pa.table({"x": pa.array([], pa.int32())}).replace_schema_metadata(
        {"commitTime": "20261126110640748", "partitionDepth": "2"})
    pq.write_table(table, sink)
    meta = N.parse_partition_metadata(sink.getvalue().to_pybytes(), ".hoodie_partition_metadata.parquet")
    assert meta == N.PartitionMetadata(commit_time="20261126110640748", partition_depth=2)
    with pytest.raises(InvalidTable, match="not Parquet"):
        N.parse_partition_metadata(b"nope", ".hoodie_partition_metadata.parquet")
    with pytest.raises(Unsupported):
        N.partition_metafile_name("hfile")
