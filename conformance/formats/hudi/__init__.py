"""Apache Hudi in the harness: cases, findings, facts, engines and drivers (see ``conformance.formats``)."""

from conformance.formats import FormatPlugin
from conformance.formats.hudi.facts import FACTS

_PKG = __name__


FORMAT = FormatPlugin(
    name="hudi",
    title="Apache Hudi",
    cases=f"{_PKG}.cases:cases",
    findings=f"{_PKG}.findings:FINDINGS",
    reference_format="reference_impl.hudi:FORMAT",
    facts=FACTS,
    engines={
        "hudi-rs": f"{_PKG}.engines.hudi_rs:HudiRsEngine",
    },
    drivers={
        "reference": f"{_PKG}.reference",
        "daft": f"{_PKG}.drivers.daft",
        "spark": f"{_PKG}.drivers.spark",
        "duckdb": f"{_PKG}.drivers.duckdb",
        "polars": f"{_PKG}.drivers.polars",
    },
    bench=f"{_PKG}.bench",
    hostile=f"{_PKG}.hostile:SPEC",
    versions=(
        "the count of completed data instants: 0 is the created table, N the table once its N-th commit, "
        "deltacommit or replacecommit completed (in completion order; v6: requested order)"
    ),
)
