"""reference_impl.common.timestamps: the instant of an "as of" read, exactly."""

from __future__ import annotations

import datetime as dt

import pytest

from reference_impl.common.timestamps import to_epoch_ms
from reference_impl.errors import InvalidTable


def test_every_spelling_names_the_same_millisecond():
    want = 1_767_225_600_123  # 2026-01-01T00:00:00.123Z
    aware = dt.datetime(2026, 1, 1, 0, 0, 0, 123000, tzinfo=dt.timezone.utc)
    for value in (want, float(want), "2026-01-01T00:00:00.123Z", "2026-01-01T01:00:00.123+01:00", aware,
                  aware.replace(tzinfo=None)):
        assert to_epoch_ms(value) == want, value


def test_milliseconds_are_exact_and_instants_before_1970_floor():
    for micros in range(0, 1_000_000, 1000):
        t = dt.datetime(2009, 2, 13, 23, 31, 30, micros, tzinfo=dt.timezone.utc)
        assert to_epoch_ms(t) == 1_234_567_890_000 + micros // 1000
    assert to_epoch_ms(dt.datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=dt.timezone.utc)) == -1  # floor


@pytest.mark.parametrize("bad", [True, "yesterday", None, [1]])
def test_anything_else_is_refused_by_name(bad):
    with pytest.raises(InvalidTable, match="timestamp"):
        to_epoch_ms(bad)
