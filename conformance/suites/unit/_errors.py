"""One check shared by the unit suites: a call refuses with the error kind, rule id and words expected."""

from __future__ import annotations

import pytest


def raises(kind, rule_id, fragment, fn, /, *args, **kw):
    """``fn(*args, **kw)`` raises ``kind`` naming rule ``rule_id``, with ``fragment`` in its message; the error."""
    with pytest.raises(kind) as info:
        fn(*args, **kw)
    assert info.value.rule == rule_id, info.value
    assert fragment in str(info.value), str(info.value)
    return info.value
