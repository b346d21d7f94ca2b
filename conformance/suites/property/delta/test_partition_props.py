"""Property (4): partition value round trip for every type, timestamp forms, Hive path escaping."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from conformance.roundtrip import assert_roundtrip, nan_safe_equal
from conformance.strategies import arrow as sa
from conformance.formats.delta import strategies as sd
from reference_impl.delta import partition as dp
from reference_impl.delta.schema import PrimitiveType

ALL_RULES = ("DELTA-PART-001", "DELTA-PART-002", "DELTA-PART-003", "DELTA-PART-004", "DELTA-PART-006", "DELTA-PART-007", "DELTA-PART-008")


def _canonical(value, dtype):
    """A value as its Arrow type sees it: aware/naive instants, float32 rounding, decimal scale."""
    if value is None:
        return None
    return pa.scalar(value, type=sd.arrow_type_of(dtype)).as_py()


def _empty(value) -> bool:
    return value == "" or value == b""


@pytest.mark.rule(*ALL_RULES)
@given(sd.partition_values())
def test_partition_value_round_trip(tv):
    dtype, value = tv
    if value is not None and _empty(value):
        # "" means null for every type (DELTA-PART-001): an empty string cannot survive
        assert dp.parse_partition_value(dp.serialize_partition_value(value, dtype), dtype) is None
        return
    assert_roundtrip(
        value,
        lambda v: dp.serialize_partition_value(v, dtype),
        lambda t: dp.parse_partition_value(t, dtype),
        normalize=lambda v: _canonical(v, dtype),
        equal=nan_safe_equal,
        label=str(dtype),
    )


@pytest.mark.rule("DELTA-PART-002", "DELTA-PART-003", "DELTA-PART-006", "DELTA-PART-007")
@given(sd.partition_values())
def test_partition_value_text_shape(tv):
    dtype, value = tv
    text = dp.serialize_partition_value(value, dtype)
    if value is None:
        assert text is None
        return
    name = getattr(dtype, "name", "decimal")
    if name in ("long", "integer", "short", "byte"):
        assert text == str(value)
    elif name == "boolean":
        assert text == ("true" if value else "false")
    elif name == "date":
        assert re.fullmatch(r"\d{4,}-\d{2}-\d{2}", text), text
    elif name == "timestamp_ntz":
        assert not text.endswith("Z") and re.fullmatch(r"\d{4,}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?", text), text
    elif name == "decimal":
        assert "e" not in text.lower(), text


@pytest.mark.rule("DELTA-PART-004")
@given(sa.utc_datetime_values())
def test_every_timestamp_form_parses_to_the_same_instant(value):
    t = PrimitiveType(name="timestamp")
    for form in sd.timestamp_partition_forms(value):
        assert _canonical(dp.parse_partition_value(form, t), t) == value, form


@pytest.mark.rule("DELTA-PART-006")
@given(sa.naive_datetime_values())
def test_ntz_forms_parse(value):
    t = PrimitiveType(name="timestamp_ntz")
    for form in sd.timestamp_partition_forms(value):
        if form.endswith("Z"):
            continue
        parsed = dp.parse_partition_value(form, t)
        assert parsed.replace(tzinfo=None) == value, form


@pytest.mark.rule("DELTA-PART-001")
@given(sd.leaf_types(sd.PARTITION_PRIMITIVE_NAMES))
def test_empty_and_null_mean_null(dtype):
    assert dp.parse_partition_value("", dtype) is None
    assert dp.parse_partition_value(None, dtype) is None
    assert dp.serialize_partition_value(None, dtype) is None


@pytest.mark.rule("DELTA-LOG-003")
@given(sa.text_values(max_size=30))
def test_hive_path_escaping_round_trip(text):
    escaped = assert_roundtrip(text, dp.escape_partition_path_component, dp.unescape_partition_path_component, label="hive escape")
    # nothing that would split or confuse a path segment, and no control character (Hive escapes < 0x20)
    assert not set(escaped) & (set('/=:"#?\\') | {chr(c) for c in range(0x20)}), escaped


@pytest.mark.rule("DELTA-LOG-003", "DELTA-PART-001")
# the literal Hive default name is inherently indistinguishable from null in a directory name
@given(st.lists(st.tuples(sd.field_names("plain"), st.one_of(st.none(), sa.text_values().filter(lambda v: v != dp.HIVE_DEFAULT_PARTITION))), min_size=1, max_size=3, unique_by=lambda c: c[0]))
def test_partition_directory_round_trip(columns):
    directory = dp.partition_directory(columns)
    assert directory.count("/") == len(columns) - 1
    parsed = dp.parse_partition_directory(directory)
    # the directory cannot tell a null from an empty string: both are the Hive default partition
    assert parsed == [(k, None if v in (None, "") else v) for k, v in columns] or parsed == [(k, v) for k, v in columns]
