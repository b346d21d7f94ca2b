"""The instant a user names for time travel, as epoch milliseconds (every format's "as of" reads)."""

from __future__ import annotations

import datetime as dt

from reference_impl.errors import InvalidTable

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def to_epoch_ms(value: int | float | str | dt.datetime) -> int:
    """Epoch milliseconds of an int or float (milliseconds already), an ISO-8601 text (``Z`` allowed)
    or a datetime; a naive one is UTC. Integer arithmetic: an instant before 1970 floors to the
    millisecond at or before it (truncating toward zero would move it later)."""
    if isinstance(value, bool):
        raise InvalidTable(f"not a timestamp: {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidTable(f"not an ISO-8601 timestamp: {value!r}") from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return (value - _EPOCH) // dt.timedelta(milliseconds=1)
    raise InvalidTable(f"not a timestamp: {value!r}")
