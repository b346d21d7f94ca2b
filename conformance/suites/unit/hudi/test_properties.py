"""hoodie.properties (reference_impl.hudi.properties): Java properties syntax, the checksum, typed table config.

Inputs are bytes written here from spec facts and from what Hudi 1.2.0 wrote for table versions 6,
8 and 9 (the property files below are copied from those tables, keys and values as written).
"""

from __future__ import annotations

import zlib

import pytest

from conformance.roundtrip import assert_roundtrip
from conformance.suites.unit._errors import raises
from reference_impl.errors import InvalidTable, Unsupported
from reference_impl.hudi import properties as P
from reference_impl.storage import LocalStorage

# What Hudi 1.2.0 (Spark 3.5) wrote for a COPY_ON_WRITE table at hoodie.write.table.version=6.
V6_FILE = b"""#Properties saved on 2026-11-26T11:06:45.691308475Z
#Thu Nov 26 11:06:45 UTC 2026
hoodie.table.keygenerator.type=SIMPLE
hoodie.table.type=COPY_ON_WRITE
hoodie.timeline.layout.version=1
hoodie.timeline.history.path=history
hoodie.table.checksum=2956704406
hoodie.datasource.write.drop.partition.columns=false
hoodie.record.merge.strategy.id=eeb8d96f-b1e4-49fd-bbf8-28ac514178e5
hoodie.table.format=native
hoodie.datasource.write.hive_style_partitioning=true
hoodie.datasource.write.partitionpath.urlencode=false
hoodie.table.version=6
hoodie.compaction.payload.class=org.apache.hudi.common.model.DefaultHoodieRecordPayload
hoodie.table.partition.fields=p
hoodie.archivelog.folder=history
hoodie.table.cdc.enabled=false
hoodie.table.timeline.timezone=LOCAL
hoodie.table.name=cow_v6
hoodie.table.recordkey.fields=id
hoodie.timeline.path=timeline
hoodie.table.ordering.fields=ts
hoodie.populate.meta.fields=true
hoodie.table.base.file.format=PARQUET
"""

BASE = {P.NAME: "t", P.TYPE: "MERGE_ON_READ", P.VERSION: "8", P.TIMELINE_LAYOUT_VERSION: "2"}


def config(**overrides):
    props = {**BASE, **{k.replace("__", "."): v for k, v in overrides.items()}}
    return P.parse_table_config({k: v for k, v in props.items() if v is not None})


# --- Java properties syntax -----------------------------------------------------------------------

@pytest.mark.rule("HUDI-LAYOUT-002")
def test_comments_blank_lines_and_separators():
    data = b"# a comment\n! another = not a key\n\n   \na=1\nb : 2\nc   3\nd\te\n  f=  \ng\n"
    assert P.parse_properties(data) == {"a": "1", "b": "2", "c": "3", "d": "e", "f": "", "g": ""}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_only_the_first_separator_splits_and_later_ones_stay_in_the_value():
    # Java: whitespace, then at most one '=' or ':', then whitespace, are all separator.
    assert P.parse_properties(b"k = = v\nx:a:b\ny  :  z=1\n") == {"k": "= v", "x": "a:b", "y": "z=1"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_escaped_separators_belong_to_the_key_and_value():
    data = b"a\\=b\\:c\\ d=x\\:y\\=z\npath=file\\:///tmp/t\n"
    assert P.parse_properties(data) == {"a=b:c d": "x:y=z", "path": "file:///tmp/t"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_line_continuation_drops_leading_whitespace_of_the_next_line():
    data = b"k=one \\\n      two\\\n\tthree\nnext=1\n"
    assert P.parse_properties(data) == {"k": "one twothree", "next": "1"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_even_backslashes_do_not_continue_and_a_comment_never_continues():
    data = b"a=x\\\\\nb=2\n# comment \\\nc=3\n"
    assert P.parse_properties(data) == {"a": "x\\", "b": "2", "c": "3"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_a_continued_line_starting_with_hash_is_data_and_crlf_ends_lines():
    data = b"a=1\\\r\n  #2\r\nb=3\rc=4"
    assert P.parse_properties(data) == {"a": "1#2", "b": "3", "c": "4"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_backslash_at_end_of_input_is_dropped():
    assert P.parse_properties(b"a=x\\") == {"a": "x"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_escapes_unicode_and_latin1():
    data = b"t=a\\tb\\nc\\rd\\fe\\qf\nu=caf\\u00E9 \\u00e9\nl=caf\xe9\ns=\\uD83D\\uDE00\n"
    props = P.parse_properties(data)
    assert props["t"] == "a\tb\nc\rd\fe" + "qf"
    assert props["u"] == "caf\u00e9 \u00e9"
    assert props["l"] == "caf\u00e9"  # load(InputStream) reads ISO-8859-1, not UTF-8
    assert props["s"] == "\U0001F600"  # a UTF-16 surrogate pair is one character


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_malformed_unicode_escape_is_invalid():
    raises(InvalidTable, "HUDI-LAYOUT-002", "malformed \\uxxxx", P.parse_properties, b"a=\\u12G4\n")
    raises(InvalidTable, "HUDI-LAYOUT-002", "malformed \\uxxxx", P.parse_properties, b"a=\\u12")


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_last_duplicate_wins():
    assert P.parse_properties(b"a=1\na=2\n") == {"a": "2"}


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_writer_escapes_as_java_store_does():
    out = P.format_properties({"k y": " lead: a=b #c !d\tx", "u": "\u00e9\u4e2d", "b": "c\\d"}).decode("latin-1")
    assert out == "k\\ y=\\ lead\\: a\\=b \\#c \\!d\\tx\nu=\\u00E9\\u4E2D\nb=c\\\\d\n"


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_writer_round_trips_hostile_values():
    props = {"a b": " x:=#!\\ \t\r\n\f", "\u00e9": "\U0001F600", "": "empty key", "k": ""}
    assert_roundtrip(props, P.format_properties, P.parse_properties)


@pytest.mark.rule("HUDI-LAYOUT-002", "HUDI-LAYOUT-003")
def test_real_v6_file_parses():
    props = P.parse_properties(V6_FILE)
    assert props[P.NAME] == "cow_v6" and props[P.VERSION] == "6" and len(props) == 22


# --- checksum -------------------------------------------------------------------------------------

@pytest.mark.rule("HUDI-LAYOUT-005")
def test_checksum_is_crc32_of_database_dot_table():
    assert P.table_checksum("cow_v6") == 2956704406  # what Hudi wrote for table cow_v6, no database
    assert P.table_checksum("cow_v8") == 1468241809
    assert P.table_checksum("t", "db") == zlib.crc32(b"db.t")
    assert P.table_checksum("t\u00e9") == zlib.crc32(".t\u00e9".encode())


@pytest.mark.rule("HUDI-LAYOUT-005")
def test_checksum_matches():
    assert P.checksum_matches(P.parse_properties(V6_FILE)) is True
    assert P.checksum_matches({P.NAME: "t"}) is None
    assert P.checksum_matches({P.NAME: "t", P.CHECKSUM: "1"}) is False
    assert P.checksum_matches({P.NAME: "t", P.CHECKSUM: "abc"}) is False
    assert P.checksum_matches({P.NAME: "t", P.DATABASE: "db", P.CHECKSUM: str(zlib.crc32(b"db.t"))}) is True


@pytest.mark.rule("HUDI-LAYOUT-005", "HUDI-LAYOUT-002")
def test_writer_puts_checksum_last():
    data = P.write_properties({P.NAME: "t", P.CHECKSUM: "0", P.TYPE: "COPY_ON_WRITE"})
    lines = data.decode().splitlines()
    assert lines[0].startswith("#") and lines[-1] == f"hoodie.table.checksum={zlib.crc32(b'.t')}"
    assert P.checksum_matches(P.parse_properties(data)) is True


@pytest.mark.rule("HUDI-LAYOUT-005")
def test_bad_checksum_falls_back_to_backup(tmp_path):
    st = LocalStorage(str(tmp_path))
    st.write_atomic(".hoodie/hoodie.properties", V6_FILE.replace(b"checksum=2956704406", b"checksum=1"))
    raises(InvalidTable, "HUDI-LAYOUT-005", "does not match", P.read_table_config, st)
    st.write_atomic(".hoodie/hoodie.properties.backup", V6_FILE)
    assert P.read_table_config(st).name == "cow_v6"


@pytest.mark.rule("HUDI-LAYOUT-002")
def test_missing_properties_file(tmp_path):
    st = LocalStorage(str(tmp_path))
    raises(InvalidTable, "HUDI-LAYOUT-002", "not a Hudi table", P.read_table_config, st)
    st.write_atomic(".hoodie/hoodie.properties.backup", V6_FILE)  # Java reads the backup during an update
    assert P.read_table_config(st).version == 6


# --- typed config ---------------------------------------------------------------------------------

@pytest.mark.rule("HUDI-LAYOUT-003", "HUDI-LAYOUT-009", "HUDI-LAYOUT-012", "HUDI-LAYOUT-015")
def test_real_v6_config():
    c = P.parse_table_config(P.parse_properties(V6_FILE))
    assert (c.name, c.table_type, c.version, c.timeline_layout_version) == ("cow_v6", "COPY_ON_WRITE", 6, 1)
    assert c.record_key_fields == ("id",) and c.partition_fields == ("p",) and c.ordering_fields == ("ts",)
    assert c.hive_style_partitioning and not c.url_encode_partitioning and not c.drop_partition_columns
    assert c.key_generator_type == "SIMPLE" and c.key_generator_class == "org.apache.hudi.keygen.SimpleKeyGenerator"
    # Layout 1: the timeline is .hoodie itself; archives go to the archivelog folder (Hudi 1.2 says "history").
    assert c.timeline_dir == ".hoodie" and c.history_dir == ".hoodie/history"
    assert c.merge_mode == P.EVENT_TIME_ORDERING and c.checksum_ok is True


@pytest.mark.rule("HUDI-LAYOUT-003")
@pytest.mark.parametrize("key", [P.NAME, P.TYPE, P.VERSION])
def test_required_keys(key):
    raises(InvalidTable, "HUDI-LAYOUT-003", key, config, **{key.replace(".", "__"): None})


@pytest.mark.rule("HUDI-LAYOUT-003")
def test_table_type_and_version_must_be_valid():
    raises(InvalidTable, "HUDI-LAYOUT-003", "COPY_ON_WRITE or MERGE_ON_READ", config, hoodie__table__type="cow")
    raises(InvalidTable, "HUDI-LAYOUT-003", "non-negative integer", config, hoodie__table__version="eight")


@pytest.mark.rule("HUDI-LAYOUT-006")
@pytest.mark.parametrize("version,fragment", [("5", "table version 5"), ("7", "Hudi 0.16"), ("10", "newer than any known"),
                                              ("99", "newer than any known")])
def test_versions_other_than_6_8_9_are_unsupported(version, fragment):
    err = raises(Unsupported, "HUDI-LAYOUT-006", fragment, config, hoodie__table__version=version,
                 hoodie__timeline__layout__version=None)
    assert err.feature == f"hudi-table-version:{version}"


@pytest.mark.rule("HUDI-LAYOUT-004")
def test_layout_version_must_match_table_version():
    raises(InvalidTable, "HUDI-LAYOUT-004", "uses timeline layout 2", config, hoodie__timeline__layout__version="1")
    raises(InvalidTable, "HUDI-LAYOUT-004", "uses timeline layout 1", config, hoodie__table__version="6")
    assert config(hoodie__timeline__layout__version=None).timeline_layout_version == 2
    assert config(hoodie__table__version="6", hoodie__timeline__layout__version=None).timeline_layout_version == 1


@pytest.mark.rule("HUDI-LAYOUT-010", "HUDI-LAYOUT-012", "HUDI-LAYOUT-013", "HUDI-LAYOUT-014", "HUDI-LAYOUT-015")
def test_defaults_are_javas():
    c = config()
    assert c.base_file_format == "PARQUET" and c.timeline_timezone == "LOCAL"
    assert not c.hive_style_partitioning and not c.url_encode_partitioning and not c.drop_partition_columns
    assert c.populate_meta_fields and not c.cdc_enabled and c.table_format == "native"
    assert c.timeline_dir == ".hoodie/timeline" and c.history_dir == ".hoodie/timeline/history"
    assert config(hoodie__table__version="6", hoodie__timeline__layout__version="1").history_dir == ".hoodie/archived"
    assert config(hoodie__timeline__path="tl", hoodie__timeline__history__path="h").history_dir == ".hoodie/tl/h"


@pytest.mark.rule("HUDI-LAYOUT-015")
def test_booleans_parse_like_java():
    assert config(hoodie__datasource__write__hive_style_partitioning="TRUE").hive_style_partitioning
    assert not config(hoodie__datasource__write__hive_style_partitioning="yes").hive_style_partitioning


@pytest.mark.rule("HUDI-LAYOUT-007", "HUDI-LAYOUT-008")
def test_key_and_partition_fields():
    c = config()
    assert c.record_key_fields is None and c.partition_fields == () and not c.is_partitioned
    c = config(hoodie__table__recordkey__fields="a,,b", hoodie__table__partition__fields="year:simple,day:timestamp")
    assert c.record_key_fields == ("a", "b") and c.partition_fields == ("year", "day")
    assert config(hoodie__table__partition__fields="").partition_fields == ()


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_ordering_fields_prefer_the_v9_key():
    assert config(hoodie__table__precombine__field="ts").ordering_fields == ("ts",)
    assert config(hoodie__table__precombine__field="ts", hoodie__table__ordering__fields="a,b").ordering_fields == ("a", "b")


@pytest.mark.rule("HUDI-LAYOUT-009")
def test_merge_mode_inference():
    assert config().merge_mode == P.COMMIT_TIME_ORDERING
    assert config(hoodie__table__ordering__fields="ts").merge_mode == P.EVENT_TIME_ORDERING
    assert config(hoodie__record__merge__mode="CUSTOM").merge_mode == P.CUSTOM
    assert config(hoodie__compaction__payload__class=P.OVERWRITE_PAYLOAD,
                  hoodie__table__ordering__fields="ts").merge_mode == P.COMMIT_TIME_ORDERING
    assert config(hoodie__record__merge__strategy__id=P.COMMIT_TIME_STRATEGY_ID).merge_mode == P.COMMIT_TIME_ORDERING
    assert config(hoodie__compaction__payload__class="com.x.MyPayload").merge_mode == P.CUSTOM
    v6 = config(hoodie__table__version="6", hoodie__timeline__layout__version="1")
    assert v6.merge_mode == P.EVENT_TIME_ORDERING  # 0.x default payload: DefaultHoodieRecordPayload
    raises(InvalidTable, "HUDI-LAYOUT-009", "merge.mode", config, hoodie__record__merge__mode="LATEST")


@pytest.mark.rule("HUDI-LAYOUT-010")
def test_base_file_format():
    assert config(hoodie__table__base__file__format="ORC").base_file_format == "ORC"
    assert config(hoodie__table__ro__file__format="HFILE").base_file_format == "HFILE"
    raises(InvalidTable, "HUDI-LAYOUT-010", "base.file.format", config, hoodie__table__base__file__format="CSV")


@pytest.mark.rule("HUDI-LAYOUT-011")
def test_metadata_partitions():
    c = config(hoodie__table__metadata__partitions="files,column_stats",
               hoodie__table__metadata__partitions__inflight="record_index")
    assert c.metadata_partitions == {"files", "column_stats"} and c.metadata_partitions_inflight == {"record_index"}
    assert config().metadata_partitions == frozenset()


@pytest.mark.rule("HUDI-LAYOUT-013")
def test_timezone():
    assert config(hoodie__table__timeline__timezone="UTC").timeline_timezone == "UTC"
    raises(InvalidTable, "HUDI-LAYOUT-013", "LOCAL or UTC", config, hoodie__table__timeline__timezone="Europe/Paris")


@pytest.mark.rule("HUDI-LAYOUT-012")
@pytest.mark.parametrize("value", ["../x", "a/b", "", ".."])
def test_timeline_directories_stay_under_hoodie(value):
    raises(InvalidTable, "HUDI-LAYOUT-012", "one directory", config, hoodie__timeline__path=value)
