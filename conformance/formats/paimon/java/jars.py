"""The jars and the compiled class of the Paimon Java engine: downloaded and built once, in the kit's cache.

The jars come from Maven Central, pinned by version and SHA-1 (the digests Maven Central publishes
in its ``.sha1`` files, copied here so a tampered or truncated download is refused). Each download
goes to a temporary file renamed into place only once its digest matches, so an interrupted run
never leaves a half jar behind. ``LakeconfPaimon.java`` is compiled with ``javac`` into a directory
named by a hash of the source and the jar list, so editing either rebuilds it and nothing else does.

Cache: ``LAKECONF_CACHE_DIR`` (the kit's variable), else ``.cache/`` of a checkout, else
``~/.cache/lakeconf``; the engine's files live in ``<cache>/paimon-java/``. ``LAKECONF_MAVEN_REPO``
points at another Maven repository (a mirror) with the same layout.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass

PAIMON_VERSION = "1.4.2"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "LakeconfPaimon.java")
MAIN_CLASS = "LakeconfPaimon"


@dataclass(frozen=True, slots=True)
class Jar:
    """One Maven artifact, pinned by its SHA-1."""

    group: str
    artifact: str
    version: str
    sha1: str

    @property
    def file_name(self) -> str:
        return f"{self.artifact}-{self.version}.jar"

    def url(self, repo: str) -> str:
        return f"{repo.rstrip('/')}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.file_name}"


# paimon-bundle carries Paimon's core and its (shaded) format readers; its Parquet/ORC readers and
# the Hadoop FileIO need Hadoop's client classes (the shaded client jars Spark 3.5 ships), which in
# turn log through commons-logging and slf4j (slf4j-nop: nothing of Paimon's logging reaches the
# protocol or the user).
JARS: tuple[Jar, ...] = (
    Jar("org.apache.paimon", "paimon-bundle", PAIMON_VERSION, "a3c37915303646fda01f20d81f7160a5947b513f"),
    Jar("org.apache.hadoop", "hadoop-client-api", "3.3.4", "6339a8f7279310c8b1f7ef314b592d8c71ca72ef"),
    Jar("org.apache.hadoop", "hadoop-client-runtime", "3.3.4", "21f7a9a2da446f1e5b3e5af16ebf956d3ee43ee0"),
    Jar("commons-logging", "commons-logging", "1.1.3", "f6f66e966c70a83ffbdb6f17a0919eaf7c8aca7f"),
    Jar("org.slf4j", "slf4j-api", "1.7.36", "6c62681a2f655b49963a5983b8b0950a6120ae14"),
    Jar("org.slf4j", "slf4j-nop", "1.7.36", "a3c1eb685d59414527faa93623acae311c184032"),
)

# Paimon's S3 FileIO (a plugin jar with its own shaded hadoop-aws and AWS SDK), fetched only when a
# table in S3 is used; FileIO.copyFile, which object stores use (branches copy tag, snapshot and
# schema files), streams through commons-io, which paimon-bundle does not carry (local disk copies
# with java.nio).
S3_JARS: tuple[Jar, ...] = (
    Jar("org.apache.paimon", "paimon-s3", PAIMON_VERSION, "1059dd75a9781ad48734548766d0fe222b16780a"),
    Jar("commons-io", "commons-io", "2.16.1", "377d592e740dc77124e0901291dbfaa6810a200e"),
)


def cache_root() -> str:
    """The kit's cache directory (the same rule as ``conformance.engines.spark.remote.cache_dir``)."""
    explicit = os.environ.get("LAKECONF_CACHE_DIR")
    if explicit:
        return explicit
    here = os.path.abspath(__file__)
    root = here
    for _ in range(5):  # conformance/formats/paimon/java/jars.py -> the checkout
        root = os.path.dirname(root)
    if os.path.exists(os.path.join(root, "pyproject.toml")) and os.path.isdir(os.path.join(root, ".git")):
        return os.path.join(root, ".cache")
    return os.path.join(os.path.expanduser("~"), ".cache", "lakeconf")


def engine_dir() -> str:
    """Where the engine's jars and classes live."""
    return os.path.join(cache_root(), "paimon-java")


def jar_path(jar: Jar) -> str:
    return os.path.join(engine_dir(), "jars", jar.file_name)


def _sha1(path: str) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _log(msg: str) -> None:
    print(f"[paimon-java] {msg}", file=sys.stderr, flush=True)


def download(jar: Jar, *, repo: str | None = None, timeout: float = 120) -> str:
    """``jar`` in the cache (downloaded, digest-checked and renamed into place if absent)."""
    dest = jar_path(jar)
    if os.path.isfile(dest):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    url = jar.url(repo or os.environ.get("LAKECONF_MAVEN_REPO") or MAVEN_CENTRAL)
    fd, tmp = tempfile.mkstemp(prefix=jar.file_name + ".", suffix=".part", dir=os.path.dirname(dest))
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
            total = int(resp.headers.get("Content-Length") or 0)
            done, shown = 0, -1
            _log(f"downloading {url} ({total / 1e6:.1f} MB)" if total else f"downloading {url}")
            for block in iter(lambda: resp.read(1 << 20), b""):
                out.write(block)
                done += len(block)
                pct = done * 100 // total if total else -1
                if total and pct // 10 != shown:
                    shown = pct // 10
                    _log(f"  {jar.file_name}: {pct}% of {total / 1e6:.1f} MB")
        digest = _sha1(tmp)
        if digest != jar.sha1:
            raise OSError(f"{url}: SHA-1 {digest} is not the pinned {jar.sha1}")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest


def classpath_jars() -> list[str]:
    """Every jar, downloaded if needed (``OSError`` naming the one that failed)."""
    return [download(j) for j in JARS]


def build_key() -> str:
    """A hash of the Java source and the pinned jars: names the compiled class directory."""
    h = hashlib.sha256()
    with open(SOURCE, "rb") as fh:
        h.update(fh.read())
    for j in JARS:
        h.update(f"{j.group}:{j.artifact}:{j.version}:{j.sha1}\n".encode())
    return h.hexdigest()[:16]


def classes_dir() -> str:
    return os.path.join(engine_dir(), "classes", build_key())


def compile_source(jars: list[str], javac: str = "javac") -> str:
    """The directory of the compiled ``LakeconfPaimon`` class (compiled once per source/jar set)."""
    dest = classes_dir()
    if os.path.isfile(os.path.join(dest, MAIN_CLASS + ".class")):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="build-", dir=os.path.dirname(dest))
    try:
        _log(f"compiling {os.path.basename(SOURCE)}")
        proc = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "--release", "11", "-cp", os.pathsep.join(jars),
                               "-d", tmp, SOURCE], capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"javac failed: {proc.stderr.strip()[-2000:]}")
        try:
            os.replace(tmp, dest)
        except OSError:  # another process built it first
            if not os.path.isfile(os.path.join(dest, MAIN_CLASS + ".class")):
                raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def classpath(*, s3: bool = False) -> str:
    """The full class path of the engine (jars downloaded and the class compiled if needed);
    ``s3``: with Paimon's S3 FileIO too."""
    jars = classpath_jars()
    extra = [download(j) for j in S3_JARS] if s3 else []
    return os.pathsep.join([compile_source(jars), *jars, *extra])


if __name__ == "__main__":  # python -m conformance.formats.paimon.java.jars: fetch and build ahead of time
    print(classpath())
