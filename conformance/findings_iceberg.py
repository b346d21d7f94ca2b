"""Known engine disagreements on Iceberg cases (see ``conformance/findings.py`` for the rules).

``section`` names the section of the Iceberg table spec (format/spec.md) the spec side rests on.
"""

from __future__ import annotations

from conformance.findings import Finding

ICEBERG_FINDINGS: tuple[Finding, ...] = ()
