"""Shared bits of the Hudi property suites: hudi-rs as a peer reader (skipped where it is not installed, unless
every engine must run: LAKECONF_REQUIRE_ENGINES) and row comparison."""

from __future__ import annotations

import importlib.util
import os
from typing import Any, Iterable

import pytest


def require_engines() -> bool:
    return os.environ.get("LAKECONF_REQUIRE_ENGINES", "") not in ("", "0", "false")


def hudi_rs_available() -> bool:
    return importlib.util.find_spec("hudi") is not None


def need_hudi_rs() -> None:
    """Skip the calling test when hudi-rs is absent; fail instead when every engine must run."""
    if not hudi_rs_available():
        if require_engines():
            pytest.fail("hudi-rs (pip install lakeconf[hudi]) is not installed, and every engine must run")
        pytest.skip("hudi-rs (pip install lakeconf[hudi]) is not installed")


def hudi_rs_read(path: str, version: int | None = None, ref: str | None = None):
    """hudi-rs's data columns of the table at the kit's version number (its own time travel)."""
    from conformance.formats.hudi.engines.hudi_rs import HudiRsEngine
    from conformance.model import TableRef

    return HudiRsEngine().read(TableRef(format="hudi", uri=path), at=version, ref=ref)


def canonical(rows: Iterable[dict[str, Any]], columns: list[str]) -> list[tuple]:
    """Rows as a sorted list of tuples of ``columns`` (None sorts first)."""
    return sorted((tuple(r.get(c) for c in columns) for r in rows),
                  key=lambda t: tuple((v is not None, v if v is not None else 0) for v in t))
