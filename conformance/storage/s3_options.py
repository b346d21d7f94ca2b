"""S3 options per client, from one ``S3Config``: the only place that knows each client's spelling.

Every engine reaches the same endpoint with different keys: the Rust object_store crate (under
several Rust engines) takes its options in upper- and lower-case spellings, DuckDB a
``CREATE SECRET`` statement, Daft an ``IOConfig``, Spark Hadoop ``fs.s3a.*`` settings. Spellings
of one format's own libraries live with that format (``conformance/formats/<format>/``). The
values hold secrets: never log what these functions return.
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import urlparse

from reference_impl.storage import S3Config


def config_from_options(options: Mapping[str, str] | None) -> S3Config | None:
    """The ``S3Config`` a table's storage options describe (object_store ``AWS_*`` spelling, any case).

    The harness hands every engine a ``TableRef`` whose ``storage_options`` come from
    ``object_store_options``; each adapter turns them back into a config here and then into its own
    client's spelling with the functions below. ``None`` when the options name no S3 setting.
    """
    opts = {k.upper(): v for k, v in (options or {}).items()}
    if not any(k.startswith("AWS_") for k in opts):
        return None
    return S3Config(
        endpoint_url=opts.get("AWS_ENDPOINT_URL") or None,
        access_key_id=opts.get("AWS_ACCESS_KEY_ID") or None,
        secret_access_key=opts.get("AWS_SECRET_ACCESS_KEY") or None,
        region=opts.get("AWS_REGION") or "us-east-1",
        allow_http=opts.get("AWS_ALLOW_HTTP", "true").lower() == "true",
    )


def _endpoint(cfg: S3Config) -> tuple[str | None, bool]:
    """(host:port, use_ssl) of the endpoint; (None, True) for AWS itself."""
    if not cfg.endpoint_url:
        return None, True
    parsed = urlparse(cfg.endpoint_url)
    return parsed.netloc or parsed.path, parsed.scheme != "http"


def object_store_options(cfg: S3Config) -> dict[str, str]:
    """The Rust object_store crate's ``AWS_*`` options (what its users take as ``storage_options``)."""
    opts = {"AWS_REGION": cfg.region, "AWS_ALLOW_HTTP": "true" if cfg.allow_http else "false"}
    if cfg.endpoint_url:
        opts["AWS_ENDPOINT_URL"] = cfg.endpoint_url
    if cfg.access_key_id:
        opts["AWS_ACCESS_KEY_ID"] = cfg.access_key_id
    if cfg.secret_access_key:
        opts["AWS_SECRET_ACCESS_KEY"] = cfg.secret_access_key
    return opts


def polars_options(cfg: S3Config) -> dict[str, str]:
    """``storage_options`` for Polars scans (object_store's lower-case keys)."""
    opts = {"aws_region": cfg.region, "aws_allow_http": "true" if cfg.allow_http else "false"}
    if cfg.endpoint_url:
        opts["aws_endpoint_url"] = cfg.endpoint_url
    if cfg.access_key_id:
        opts["aws_access_key_id"] = cfg.access_key_id
    if cfg.secret_access_key:
        opts["aws_secret_access_key"] = cfg.secret_access_key
    return opts


def _sql_literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def duckdb_secret_sql(cfg: S3Config, *, name: str = "lakeconf_s3", scope: str | None = None) -> str:
    """A DuckDB ``CREATE OR REPLACE SECRET`` (TYPE s3) statement for the endpoint (needs httpfs loaded)."""
    host, use_ssl = _endpoint(cfg)
    parts = ["TYPE s3", f"REGION {_sql_literal(cfg.region)}"]
    if cfg.access_key_id:
        parts.append(f"KEY_ID {_sql_literal(cfg.access_key_id)}")
    if cfg.secret_access_key:
        parts.append(f"SECRET {_sql_literal(cfg.secret_access_key)}")
    if host:
        # A custom endpoint (MinIO) is addressed by path, never by bucket sub-domain.
        parts += [f"ENDPOINT {_sql_literal(host)}", "URL_STYLE 'path'", f"USE_SSL {'true' if use_ssl else 'false'}"]
    if scope:
        parts.append(f"SCOPE {_sql_literal(scope)}")
    if not name.replace("_", "").isalnum():
        raise ValueError(f"DuckDB secret name must be an identifier: {name!r}")
    return f"CREATE OR REPLACE SECRET {name} ({', '.join(parts)})"


def daft_io_config(cfg: S3Config) -> Any:
    """A ``daft.io.IOConfig`` for the endpoint."""
    from daft.io import IOConfig
    from daft.io import S3Config as DaftS3Config

    _host, use_ssl = _endpoint(cfg)
    kwargs: dict[str, Any] = {"region_name": cfg.region, "use_ssl": use_ssl}
    if cfg.endpoint_url:
        kwargs["endpoint_url"] = cfg.endpoint_url
        kwargs["force_virtual_addressing"] = False
    if cfg.access_key_id:
        kwargs["key_id"] = cfg.access_key_id
    if cfg.secret_access_key:
        kwargs["access_key"] = cfg.secret_access_key
    return IOConfig(s3=DaftS3Config(**kwargs))


def spark_s3a_conf(cfg: S3Config) -> dict[str, str]:
    """Spark settings (``spark.hadoop.fs.s3a.*``) for s3a:// paths; hadoop-aws must be on the classpath."""
    host, use_ssl = _endpoint(cfg)
    p = "spark.hadoop.fs.s3a."
    conf = {
        p + "impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",  # s3:// URIs too
        p + "endpoint.region": cfg.region,
        p + "connection.ssl.enabled": "true" if use_ssl else "false",
    }
    if host:
        conf[p + "endpoint"] = cfg.endpoint_url or host
        conf[p + "path.style.access"] = "true"
    if cfg.access_key_id and cfg.secret_access_key:
        conf[p + "aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
        conf[p + "access.key"] = cfg.access_key_id
        conf[p + "secret.key"] = cfg.secret_access_key
    return conf


def boto3_client_kwargs(cfg: S3Config) -> dict[str, Any]:
    """Keyword arguments for ``boto3.client("s3", ...)`` (path-style addressing for custom endpoints)."""
    from botocore.config import Config

    return {
        "endpoint_url": cfg.endpoint_url,
        "aws_access_key_id": cfg.access_key_id,
        "aws_secret_access_key": cfg.secret_access_key,
        "region_name": cfg.region,
        "config": Config(s3={"addressing_style": "path"} if cfg.endpoint_url else {}, retries={"max_attempts": 5}),
    }


def redact(text: str, cfg: S3Config | None) -> str:
    """``text`` with ``cfg``'s keys replaced by ``***`` (for error messages that echo options)."""
    if cfg is None:
        return text
    for secret in (cfg.secret_access_key, cfg.access_key_id):
        if secret:
            text = text.replace(secret, "***")
    return text
