"""Shared bits of the Delta property suites: example budgets scaled by the hypothesis profile."""

from __future__ import annotations

import os

from hypothesis import settings


def examples(fraction: float, *, floor: int = 2, also_suppress: tuple = ()) -> settings:
    """Settings drawing ``fraction`` of the active profile's max_examples (slow properties use < 1);
    ``also_suppress``: health checks to suppress besides the profile's."""
    suppressed = list(settings.default.suppress_health_check) + list(also_suppress)
    return settings(max_examples=max(floor, int(settings.default.max_examples * fraction)), suppress_health_check=suppressed)


def profile() -> str:
    """The active hypothesis profile name (dev / ci / thorough)."""
    return os.environ.get("HYPOTHESIS_PROFILE", "dev")
