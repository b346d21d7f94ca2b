"""Apache Paimon in the harness: cases, findings, facts, engines and drivers (see ``conformance.formats``)."""

from conformance.formats import FormatPlugin
from conformance.formats.paimon.facts import FACTS

_PKG = __name__

FORMAT = FormatPlugin(
    name="paimon",
    title="Apache Paimon",
    cases=f"{_PKG}.cases:cases",
    findings=f"{_PKG}.findings:FINDINGS",
    reference_format="reference_impl.paimon:FORMAT",
    facts=FACTS,
    engines={
        "pypaimon": f"{_PKG}.engines.pypaimon:PyPaimonEngine",
        "pypaimon-rust": f"{_PKG}.engines.pypaimon_rust:PyPaimonRustEngine",
        "paimon-java": f"{_PKG}.java.engine:PaimonJavaEngine",
    },
    drivers={
        "reference": f"{_PKG}.reference",
        "daft": f"{_PKG}.drivers.daft",
        "duckdb": f"{_PKG}.drivers.duckdb",
        "spark": f"{_PKG}.drivers.spark",
    },
    bench=f"{_PKG}.bench",
    hostile=f"{_PKG}.hostile:SPEC",
    versions=(
        "the snapshot id: 0 is the table before its first commit, N the snapshot snapshot/snapshot-N "
        "(--snapshot-id, --tag and --as-of name a snapshot the Paimon way)"
    ),
)
