"""Object stores in a Spark session: per-bucket ``fs.s3a.*`` settings, so stores with different
endpoints can share one session. The endpoint and keys come from the table's storage options;
``s3://`` is mapped to S3AFileSystem too (some formats store ``s3://`` locations)."""

from __future__ import annotations

from urllib.parse import urlparse

from conformance.engines.spark import session
from conformance.model import TableRef
from reference_impl.storage import S3Config


def bucket_conf(bucket: str, cfg: S3Config) -> dict[str, str]:
    """Per-bucket Hadoop settings (``fs.s3a.bucket.<bucket>.*``) for one endpoint."""
    from conformance.storage.s3_options import spark_s3a_conf

    out = {}
    for key, value in spark_s3a_conf(cfg).items():
        if key.startswith("spark.hadoop.fs.s3a.") and not key.endswith(".impl"):
            out[f"fs.s3a.bucket.{bucket}." + key[len("spark.hadoop.fs.s3a.") :]] = value
    return out


def configured_endpoint(bucket: str) -> tuple:
    """(endpoint, key id) a bucket was configured with in this session (no secret), or (None, None)."""
    return session.state("s3-buckets", dict).get(bucket, (None, None))[:2]


def configure(spark, table: TableRef) -> None:
    """Point the session's s3a file systems for the table's bucket at its endpoint (once per endpoint)."""
    from conformance.storage.s3_options import config_from_options
    from reference_impl.errors import Unsupported

    parsed = urlparse(table.uri)
    if parsed.scheme not in ("s3", "s3a"):
        return
    if not session.has_s3():
        raise Unsupported("the Spark session was started without hadoop-aws (LAKECONF_SPARK_S3=0)", feature="s3")
    with session.state_lock:
        cfg = config_from_options(table.storage_options) or S3Config.from_env()
        bucket = parsed.netloc
        key = (cfg.endpoint_url, cfg.access_key_id, cfg.secret_access_key, cfg.region)
        buckets = session.state("s3-buckets", dict)
        if buckets.get(bucket) == key:
            return
        hconf = spark.sparkContext._jsc.hadoopConfiguration()
        for name, value in bucket_conf(bucket, cfg).items():
            hconf.set(name, value)
        hconf.set("fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem")
        hconf.set("fs.s3.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem")
        jvm = spark.sparkContext._jvm
        uris = [jvm.java.net.URI(f"{scheme}://{bucket}/") for scheme in ("s3a", "s3")]
        if bucket in buckets:
            # Hadoop caches one FileSystem per bucket: a new endpoint for a known bucket needs a fresh one.
            for uri in uris:
                jvm.org.apache.hadoop.fs.FileSystem.get(uri, hconf).close()
        # Create the bucket's FileSystems now, from the session's configuration. Catalogs that copy the
        # Hadoop configuration when they start (possibly before this bucket was configured) then ask
        # the same per-bucket cache, which ignores the configuration it is handed: the first
        # FileSystem created for a bucket is the one every reader and writer gets.
        for uri in uris:
            jvm.org.apache.hadoop.fs.FileSystem.get(uri, hconf)
        buckets[bucket] = key
