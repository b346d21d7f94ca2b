"""Tables built and read with pypaimon's own API, for the Paimon unit tests: its file-system catalog,
its batch writer and its reader, as a pypaimon user calls them (the peer the reference is checked against)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import pyarrow as pa


def catalog(root: Path) -> tuple[Any, Path]:
    """A pypaimon file-system catalog warehoused at ``root`` with database ``db``; (catalog, the db directory)."""
    from pypaimon import CatalogFactory

    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("db", True)
    return cat, root / "db.db"


def create(cat_db: tuple[Any, Path], name: str, schema: pa.Schema, *, pk: Sequence[str] | None = None,
           partition: Sequence[str] | None = None, options: Mapping[str, str] | None = None) -> tuple[Any, str]:
    """``db.<name>`` created through the catalog; (the pypaimon table, its directory)."""
    from pypaimon import Schema

    cat, db = cat_db
    cat.create_table(f"db.{name}", Schema.from_pyarrow_schema(schema, partition_keys=partition, primary_keys=pk,
                                                              options=dict(options or {})), False)
    return cat.get_table(f"db.{name}"), str(db / name)


def write(table: Any, data: pa.Table) -> None:
    """One batch commit of ``data``."""
    wb = table.new_batch_write_builder()
    w, c = wb.new_write(), wb.new_commit()
    w.write_arrow(data)
    c.commit(w.prepare_commit())
    w.close()
    c.close()


def read(table: Any, options: Mapping[str, str] | None = None) -> pa.Table:
    """pypaimon's rows of ``table`` (time travel through ``options``, e.g. ``scan.snapshot-id``)."""
    if options:
        table = table.copy(dict(options))
    rb = table.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())
