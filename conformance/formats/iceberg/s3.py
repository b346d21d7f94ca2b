"""S3 options in the spellings of the Iceberg libraries (PyIceberg FileIO, iceberg-rust), from one ``S3Config``.

The values hold secrets: never log what these functions return.
"""

from __future__ import annotations

from reference_impl.storage import S3Config


def pyiceberg_properties(cfg: S3Config) -> dict[str, str]:
    """FileIO / catalog properties for pyiceberg (PyArrowFileIO reads these keys)."""
    props = {"s3.region": cfg.region}
    if cfg.endpoint_url:
        props["s3.endpoint"] = cfg.endpoint_url
        props["s3.force-virtual-addressing"] = "false"
    if cfg.access_key_id:
        props["s3.access-key-id"] = cfg.access_key_id
    if cfg.secret_access_key:
        props["s3.secret-access-key"] = cfg.secret_access_key
    return props


def polars_iceberg_options(cfg: S3Config) -> dict[str, str]:
    """``storage_options`` for Polars ``scan_iceberg``: PyIceberg's ``s3.*`` keys (PyIceberg reads
    the metadata; Polars translates them to object_store keys for its native Parquet reader) plus
    the object_store key ``aws_allow_http``, which has no PyIceberg spelling and which Polars passes
    through because it has no dot."""
    opts = pyiceberg_properties(cfg)
    opts["aws_allow_http"] = "true" if cfg.allow_http else "false"
    return opts


def iceberg_rust_properties(cfg: S3Config) -> dict[str, str]:
    """FileIO properties for iceberg-rust (pyiceberg-core): PyIceberg's ``s3.*`` keys plus
    ``s3.path-style-access`` for custom endpoints (MinIO serves buckets by path)."""
    props = pyiceberg_properties(cfg)
    if cfg.endpoint_url:
        props["s3.path-style-access"] = "true"
    return props
