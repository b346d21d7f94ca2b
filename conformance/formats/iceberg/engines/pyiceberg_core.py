"""iceberg-rust through the ``pyiceberg-core`` wheel, read with DataFusion.

pyiceberg-core 0.11.0 exposes to Python only the transforms, manifest readers and one table
provider, ``pyiceberg_core.datafusion.IcebergDataFusionTable(identifier, metadata_location,
file_io_properties)``; a ``datafusion`` ``SessionContext`` registers it (the Arrow FFI table
provider capsule) and runs ``SELECT``. The wheel is built against DataFusion 54.1.0, so the
``datafusion`` package must be 54.1.x (its FFI structs change between majors); it installs
beside pyarrow 19 (it needs pyarrow>=16).

The provider always scans the *current* snapshot of the metadata file it is given; it takes no
snapshot id, ref or timestamp. So only the latest version is read through it, plus version 0,
which the kit reads from the last metadata file before the first snapshot (an empty scan with
that file's schema); other versions, timestamps and refs are declared unsupported. Measured on
0.11.0: position deletes, deletion vectors and equality deletes are all applied; the location
must be a URL (``file:///...``), a plain path is "relative URL without a base". Found while
measuring (see the findings): it refuses to load v1 metadata whose partition fields carry no
``field-id``, v3 metadata with an ``unknown`` column or an unknown transform ("data did not match
any variant of untagged enum TableMetadataEnum"; the ``unknown`` type is declared as a gap), and
a v1 spec whose dropped identity field became ``void`` under the column's name.
"""

from __future__ import annotations

from typing import Sequence

import pyarrow as pa

from conformance.formats.iceberg import facts as F
from conformance.engines._common import missing_module, package_version
from conformance.engines.base import REF_TRAVEL, TIME_TRAVEL, TIMESTAMP_TRAVEL, Capabilities, Engine
from conformance.engines.errors import refusals
from conformance.formats.iceberg.errors import ICEBERG_RUST
from conformance.model import TableRef

DATAFUSION_VERSION = "54.1"  # the DataFusion the pyiceberg-core 0.11.0 wheel is built against

_NO_TRAVEL = (
    "pyiceberg-core's IcebergDataFusionTable(identifier, metadata_location, file_io_properties) scans the "
    "metadata file's current snapshot; it has no snapshot id, ref or timestamp parameter"
)


def file_io_properties(table: TableRef) -> dict[str, str]:
    """iceberg-rust FileIO properties (the same ``s3.*`` keys as PyIceberg's, plus path style)."""
    from conformance.engines._common import s3_config
    from conformance.formats.iceberg.s3 import iceberg_rust_properties

    cfg = s3_config(table)
    return iceberg_rust_properties(cfg) if cfg is not None else {}


class PyIcebergCoreEngine(Engine):
    """iceberg-rust (pyiceberg-core) + DataFusion."""

    name = "pyiceberg-core"

    def version(self) -> str:
        return f"{package_version('pyiceberg-core')} (datafusion {package_version('datafusion')})"

    def available(self) -> str | None:
        reason = missing_module("pyiceberg_core.datafusion") or missing_module("datafusion")
        if reason:
            # Not an extra of the kit: pyiceberg 0.12's own extra pins an older pyiceberg-core.
            return reason + " (pip install --no-deps pyiceberg-core==0.11.0 datafusion==54.1.0)"
        have = package_version("datafusion")
        if not have.startswith(DATAFUSION_VERSION + "."):
            return (
                f"datafusion {have} installed; pyiceberg-core {package_version('pyiceberg-core')} is built against "
                f"DataFusion {DATAFUSION_VERSION} and its FFI table provider needs datafusion=={DATAFUSION_VERSION}.*"
            )
        return None

    def capabilities(self) -> Capabilities:
        return Capabilities(
            read=frozenset({"iceberg"}),
            read_features={"iceberg": None},
            unsupported={"iceberg": {
                TIME_TRAVEL: _NO_TRAVEL, TIMESTAMP_TRAVEL: _NO_TRAVEL, REF_TRAVEL: _NO_TRAVEL,
                F.UNKNOWN_TYPE: "iceberg-rust (pyiceberg-core 0.11.0) does not know the v3 'unknown' type: metadata with an "
                "unknown column in any schema fails to load ('data did not match any variant of untagged enum TableMetadataEnum')",
            }},
        )

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        # the DataFusion provider reads the metadata file's current snapshot only
        return ("def read():\n" + F.reproduction_prelude(table, None)
                + "    from datafusion import SessionContext\n"
                "    from pyiceberg_core.datafusion import IcebergDataFusionTable\n"
                "    ctx = SessionContext()\n"
                "    ctx.register_table('t', IcebergDataFusionTable(identifier=['repro', 't'],\n"
                "                                                   metadata_location='file://' + META,\n"
                "                                                   file_io_properties={}))\n"
                "    return ctx.sql('SELECT * FROM t').to_arrow_table()\n")

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        from datafusion import SessionContext
        from pyiceberg_core.datafusion import IcebergDataFusionTable

        from reference_impl.errors import Unsupported

        if timestamp is not None:
            raise Unsupported(_NO_TRAVEL, feature=TIMESTAMP_TRAVEL)
        if ref is not None and ref != F.MAIN:
            raise Unsupported(_NO_TRAVEL, feature=REF_TRAVEL)
        sel = F.selection(table, at=at)
        if at is not None and sel.snapshot_id is not None:
            # The version may be the current snapshot, but the provider cannot be pinned to it.
            current = F.snapshot_id_for(table)
            if current != sel.snapshot_id:
                raise Unsupported(_NO_TRAVEL, feature=TIME_TRAVEL)
        with refusals(ICEBERG_RUST, table.uri):
            provider = IcebergDataFusionTable(
                identifier=["lakeconf", "t"], metadata_location=sel.metadata_location,
                file_io_properties=file_io_properties(table),
            )
            ctx = SessionContext()
            ctx.register_table("t", provider)
            select = ", ".join('"' + c.replace('"', '""') + '"' for c in columns) if columns else "*"
            return ctx.sql(f"SELECT {select} FROM t").to_arrow_table()
