"""Apache Iceberg in the harness: cases, findings, facts, engines and drivers (see ``conformance.formats``)."""

from conformance.formats import FormatPlugin
from conformance.formats.iceberg.facts import FACTS

_PKG = __name__

FORMAT = FormatPlugin(
    name="iceberg",
    title="Apache Iceberg",
    cases=f"{_PKG}.cases:cases",
    findings=f"{_PKG}.findings:FINDINGS",
    reference_format="reference_impl.iceberg:FORMAT",
    facts=FACTS,
    engines={
        "pyiceberg": f"{_PKG}.engines.pyiceberg:PyIcebergEngine",
        "pyiceberg-core": f"{_PKG}.engines.pyiceberg_core:PyIcebergCoreEngine",
    },
    drivers={
        "reference": f"{_PKG}.reference",
        "duckdb": f"{_PKG}.drivers.duckdb",
        "polars": f"{_PKG}.drivers.polars",
        "daft": f"{_PKG}.drivers.daft",
        "spark": f"{_PKG}.drivers.spark",
    },
    bench=f"{_PKG}.bench",
    hostile=f"{_PKG}.hostile:SPEC",
    versions=(
        "the kit's numbering: 0 is the table before its first snapshot, N the main-history snapshot with "
        "sequence number N (v2, v3) or the N-th snapshot from the root (v1)"
    ),
)
