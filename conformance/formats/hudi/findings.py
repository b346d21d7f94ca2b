"""Reviewed Hudi findings: where a published engine disagrees with the spec, each with its evidence.

Entries follow ``conformance.findings`` (the registry's rules: spec side, rule ids, the engine versions that
show it). They come from runs of the main job and are verified by ``lakeconf findings verify``.
"""

from __future__ import annotations

from conformance.findings import Finding

FINDINGS: tuple[Finding, ...] = ()
