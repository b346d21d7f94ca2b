"""Shared pytest set-up: hypothesis profiles chosen by HYPOTHESIS_PROFILE (dev / ci / thorough)."""

import os

from hypothesis import HealthCheck, settings

# dev: quick feedback; ci: enough examples to catch regressions within the CI time budget and
# derandomised so a red CI is reproducible; thorough: a long soak before a release.
settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

