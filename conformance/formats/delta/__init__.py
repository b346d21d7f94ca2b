"""Delta Lake in the harness: cases, findings, facts, engines and drivers (see ``conformance.formats``)."""

from conformance.formats import FormatPlugin
from conformance.formats.delta.facts import FACTS

_PKG = __name__

FORMAT = FormatPlugin(
    name="delta",
    title="Delta Lake",
    cases=f"{_PKG}.cases:cases",
    findings=f"{_PKG}.findings:FINDINGS",
    reference_format="reference_impl.delta:FORMAT",
    facts=FACTS,
    engines={
        "deltalake": f"{_PKG}.engines.deltalake:DeltalakeEngine",
        "deltalake-datafusion": f"{_PKG}.engines.deltalake:DeltalakeDataFusionEngine",
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
    versions="the commit version of the log (00000000000000000N.json)",
)
