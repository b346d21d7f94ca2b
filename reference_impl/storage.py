"""One small file-system interface for tables: local disk and S3, with atomic put-if-absent.

A ``Storage`` is rooted at a table's location; every path it takes is relative to that root and
uses ``/``. Paths that would leave the root (``..``, absolute paths of another location) are an
``InvalidTable`` error, so a hostile log can never make the kit read or write outside the table.

Commit safety rests on two primitives:
* ``put_if_absent``: the whole object appears at once or not at all, and never replaces an
  existing one (local: write a temp file, then ``os.link`` it, which fails if the name exists;
  S3: ``PutObject`` with ``If-None-Match: *``).
* ``write_atomic``: replace-or-create for files that may be overwritten (``_last_checkpoint``),
  through a temp file and ``os.replace`` (S3 PUTs are atomic by themselves).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
import tempfile
import threading
import uuid
from dataclasses import dataclass
from operator import attrgetter
from typing import Collection, Iterator, Mapping
from urllib.parse import unquote, urlparse

from reference_impl.errors import CommitConflict, InvalidTable


TEMP_PREFIX = ".tmp-lakeconf-"  # staging files of atomic writes; never listed
_BY_PATH = attrgetter("path")


@dataclass(frozen=True, slots=True, kw_only=True)
class FileInfo:
    """One listed object: path relative to the storage root, size in bytes, mtime in ms."""

    path: str
    size: int
    modification_time: int


def normalize_relative(path: str) -> str:
    """Normalise a root-relative path and refuse one that escapes the root."""
    if not path:
        raise InvalidTable("empty path")
    if path.startswith("/") or "\\" in path or "\x00" in path:
        raise InvalidTable(f"path {path!r} is not relative to the table root")
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../"):
        raise InvalidTable(f"path {path!r} escapes the table root")
    return norm


class Storage:
    """The interface; see ``LocalStorage`` and ``S3Storage``."""

    root: str  # URI of the root, without trailing slash

    def read(self, path: str) -> bytes:  # pragma: no cover - interface
        """Whole object; ``FileNotFoundError`` if absent."""
        raise NotImplementedError

    def list(self, prefix: str) -> list[FileInfo]:  # pragma: no cover - interface
        """Objects directly under directory ``prefix`` (not recursive), sorted by path."""
        raise NotImplementedError

    def walk(self, prefix: str = "") -> list[FileInfo]:  # pragma: no cover - interface
        """Every object under ``prefix``, recursively, sorted by path."""
        raise NotImplementedError

    def walk_pruned(self, prefix: str = "", prune: Collection[str] = ()) -> list[FileInfo]:
        """``walk(prefix)`` without the objects under the directories ``prune`` names (relative to ``prefix``).

        For readers that need a table's data files and not its metadata directory, which can hold more files
        than the data (a timeline, an archive, a metadata table of its own). This default filters ``walk``; a store
        that can leave the directories out of the listing itself does so.
        """
        base = prefix.strip("/")
        cut = len(base) + 1 if base else 0
        dirs = tuple(d.strip("/") + "/" for d in prune)
        return [f for f in self.walk(prefix) if not f.path[cut:].startswith(dirs)] if dirs else self.walk(prefix)

    def exists(self, path: str) -> bool:  # pragma: no cover - interface
        """Whether an object exists at ``path``."""
        raise NotImplementedError

    def put_if_absent(self, path: str, data: bytes) -> None:  # pragma: no cover - interface
        """Create ``path`` with ``data`` atomically; ``CommitConflict`` if it already exists."""
        raise NotImplementedError

    def write_atomic(self, path: str, data: bytes) -> None:  # pragma: no cover - interface
        """Create or replace ``path``; readers see the old or the new bytes, never a mix."""
        raise NotImplementedError

    def delete(self, path: str) -> None:  # pragma: no cover - interface
        """Remove ``path`` if present."""
        raise NotImplementedError

    def uri(self, path: str = "") -> str:
        """Absolute URI of a root-relative path."""
        if not path:
            return self.root
        return f"{self.root}/{normalize_relative(path)}"

    def resolve(self, path_or_uri: str) -> str:
        """Map a path found in a table (relative or absolute URI) to a root-relative path.

        Absolute URIs are accepted only when they point inside this root.
        """
        parsed = urlparse(path_or_uri)
        if parsed.scheme and len(parsed.scheme) > 1:  # len>1 keeps Windows drive letters out
            absolute = path_or_uri.rstrip("/")
            if not absolute.startswith(self.root + "/"):
                raise InvalidTable(f"path {path_or_uri!r} lies outside the table root {self.root}")
            return normalize_relative(absolute[len(self.root) + 1 :])
        if path_or_uri.startswith("/"):
            local_root = urlparse(self.root).path
            if not path_or_uri.startswith(local_root.rstrip("/") + "/"):
                raise InvalidTable(f"path {path_or_uri!r} lies outside the table root {self.root}")
            return normalize_relative(path_or_uri[len(local_root.rstrip("/")) + 1 :])
        return normalize_relative(path_or_uri)

    @property
    def storage_options(self) -> Mapping[str, str]:
        """Options an engine needs to reach this storage (empty for local disk)."""
        return {}


class LocalStorage(Storage):
    """A directory on the local file system."""

    def __init__(self, root: str) -> None:
        root = root[len("file://") :] if root.startswith("file://") else root
        self.base = os.path.abspath(root)
        self.root = "file://" + self.base
        # Confinement is judged on resolved paths: the root itself may sit behind links (/tmp on
        # some systems), but nothing inside it may lead out.
        self._real_base = os.path.realpath(self.base)
        self._real_dirs: dict[str, str] = {}

    def _os(self, path: str) -> str:
        """The OS path of a root-relative path, refused if a symbolic link on the way leads outside the root."""
        if not path:
            return self.base
        full = os.path.join(self.base, normalize_relative(path))
        self._confine(full, path)
        return full

    def local_path(self, path: str) -> str:
        """The OS path of a file of the table, for readers that open by path (confined like ``read``)."""
        full = self._os(path)
        if not os.path.isfile(full):
            raise FileNotFoundError(self.uri(path))
        return full

    def _confine(self, full: str, path: str) -> None:
        # Directories are resolved once (a table has few, and reads many files in each); the file
        # itself costs one lstat, and a full resolution only when it is a link.
        parent, name = os.path.split(full)
        real_parent = self._real_dirs.get(parent)
        if real_parent is None:
            real_parent = self._real_dirs[parent] = os.path.realpath(parent)
        try:
            is_link = stat.S_ISLNK(os.lstat(full).st_mode)
        except OSError:
            is_link = False  # absent (or unreadable): the caller's own open or stat says so
        real = os.path.realpath(full) if is_link else os.path.join(real_parent, name)
        if real != self._real_base and not real.startswith(self._real_base + os.sep):
            raise InvalidTable(f"{path} is a symbolic link (or lies under one) that leads outside the table root",
                               path=self.uri(path), hint="a table may only reference files inside its root")

    def read(self, path: str) -> bytes:
        try:
            with open(self._os(path), "rb") as fh:
                return fh.read()
        except (FileNotFoundError, NotADirectoryError):
            raise FileNotFoundError(self.uri(path)) from None
        except IsADirectoryError:
            raise InvalidTable(f"{path} is a directory where the table needs a file", path=self.uri(path)) from None
        except OSError as exc:  # too long a name, a link loop, no permission: the table cannot be read as given
            raise InvalidTable(f"cannot read {path}: {exc.strerror or exc}", path=self.uri(path),
                               hint="check the file and its permissions") from None

    def list(self, prefix: str) -> list[FileInfo]:
        # A listed link that leads outside is listed like any file: reading it (``_os``) refuses the
        # table, where leaving it out would silently drop a commit or a data file.
        directory = self._os(prefix)
        try:
            entries = list(os.scandir(directory))
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise InvalidTable(f"cannot list {prefix or '/'}: {exc.strerror or exc}", path=self.uri(prefix),
                               hint="check the directory and its permissions") from None
        out = []
        for entry in entries:
            # A concurrent committer's temp file may vanish between scandir and stat; temp files
            # are never part of a table, so they are left out rather than raced for.
            if entry.name.startswith(TEMP_PREFIX):
                continue
            try:
                if not entry.is_file():
                    continue
                st = entry.stat()
            except FileNotFoundError:
                continue
            rel = posixpath.join(prefix, entry.name) if prefix else entry.name
            out.append(FileInfo(path=rel, size=st.st_size, modification_time=int(st.st_mtime * 1000)))
        out.sort(key=_BY_PATH)
        return out

    def walk(self, prefix: str = "") -> list[FileInfo]:
        return self.walk_pruned(prefix)

    def walk_pruned(self, prefix: str = "", prune: Collection[str] = ()) -> list[FileInfo]:
        # os.walk's semantics (links to directories are not entered, unreadable directories are passed over),
        # with root-relative names built by concatenation: a table of 30,000 files is walked per read
        base = prefix.strip("/")
        pruned = {f"{base}/{d.strip('/')}" if base else d.strip("/") for d in prune}
        out = []
        stack = [(self._os(prefix), base)]
        while stack:
            directory, rel = stack.pop()
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            head = rel + "/" if rel else ""
            for entry in entries:
                name = entry.name
                path = head + name
                try:
                    if entry.is_dir():
                        if not entry.is_symlink() and path not in pruned:
                            stack.append((entry.path, path))
                        continue
                    if name.startswith(TEMP_PREFIX):
                        continue
                    st = entry.stat()
                except FileNotFoundError:
                    continue
                out.append(FileInfo(path=path, size=st.st_size, modification_time=int(st.st_mtime * 1000)))
        out.sort(key=_BY_PATH)
        return out

    def exists(self, path: str) -> bool:
        return os.path.exists(self._os(path))

    def _temp(self, target: str, data: bytes) -> str:
        directory = os.path.dirname(target)
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            os.unlink(tmp)
            raise
        return tmp

    def put_if_absent(self, path: str, data: bytes) -> None:
        target = self._os(path)
        tmp = self._temp(target, data)
        try:
            # link() is atomic and fails if the name exists: the object appears whole or not at all.
            os.link(tmp, target)
        except FileExistsError:
            raise CommitConflict(f"{path} already exists", path=path) from None
        finally:
            os.unlink(tmp)

    def write_atomic(self, path: str, data: bytes) -> None:
        target = self._os(path)
        tmp = self._temp(target, data)
        os.replace(tmp, target)

    def delete(self, path: str) -> None:
        try:
            os.unlink(self._os(path))
        except FileNotFoundError:
            pass


@dataclass(frozen=True, slots=True, kw_only=True)
class S3Config:
    """Where an S3-compatible endpoint is and how to reach it; secrets never printed."""

    endpoint_url: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    region: str = "us-east-1"
    allow_http: bool = True

    def __repr__(self) -> str:  # keep credentials out of logs and reports
        return f"S3Config(endpoint_url={self.endpoint_url!r}, region={self.region!r})"

    @classmethod
    def from_env(cls) -> "S3Config":
        """Read the usual AWS_* variables (AWS_ENDPOINT_URL, keys, AWS_REGION)."""
        return cls(
            endpoint_url=os.environ.get("AWS_ENDPOINT_URL"),
            access_key_id=os.environ.get("AWS_ACCESS_KEY_ID"),
            secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY"),
            region=os.environ.get("AWS_REGION", "us-east-1"),
            allow_http=os.environ.get("AWS_ALLOW_HTTP", "true").lower() == "true",
        )


_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]\Z")

# One S3 client per endpoint and credentials, shared by every S3Storage of the process (boto3
# clients are thread-safe). A run opens a storage per table read, validation and write: a client
# of its own each time cost 4 ms of CPU to build plus a new connection (measured).
_CLIENTS: dict[S3Config, object] = {}
_CLIENTS_LOCK = threading.Lock()


def _timestamp(text: str):
    """An S3 timestamp as a UTC datetime: ISO 8601 (listings) by the standard library, anything
    else (HTTP dates of HEAD and GET) by botocore's own parser. botocore parses every listed
    object's LastModified with dateutil: 21,881 parses took 13 s of the 268 s a profiled
    reference run of one format spent in S3 calls."""
    from datetime import datetime, timezone

    try:
        parsed = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        from botocore.utils import parse_timestamp

        return parse_timestamp(text)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def _client(config: S3Config):
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(config)
        if client is None:
            import botocore.session  # optional dependency: only S3 users need it
            from botocore.config import Config

            session = botocore.session.get_session()
            session.get_component("response_parser_factory").set_parser_defaults(timestamp_parser=_timestamp)
            client = _CLIENTS[config] = session.create_client(
                "s3",
                endpoint_url=config.endpoint_url,
                aws_access_key_id=config.access_key_id,
                aws_secret_access_key=config.secret_access_key,
                region_name=config.region,
                config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5},
                              max_pool_connections=32),
            )
        return client


class S3Storage(Storage):
    """A prefix in an S3 bucket (MinIO or AWS), through boto3 for conditional writes."""

    def __init__(self, root: str, config: S3Config | None = None) -> None:
        parsed = urlparse(root)
        if parsed.scheme not in ("s3", "s3a"):
            raise InvalidTable(f"not an s3:// URI: {root}")
        self.bucket = parsed.netloc
        if not _BUCKET.match(self.bucket) or ".." in self.bucket:
            # Refused here, in one line, rather than by the S3 client's multi-line validation error.
            raise InvalidTable(f"{self.bucket!r} is not a valid S3 bucket name",
                               hint="bucket names are 3 to 63 lowercase letters, digits, dots and hyphens, "
                                    "starting and ending with a letter or digit")
        self.prefix = parsed.path.strip("/")
        self.root = f"s3://{self.bucket}/{self.prefix}".rstrip("/")
        self.config = config or S3Config.from_env()
        self._client = _client(self.config)

    def _key(self, path: str) -> str:
        rel = normalize_relative(path) if path else ""
        return f"{self.prefix}/{rel}".strip("/") if self.prefix else rel

    def read(self, path: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            return self._client.get_object(Bucket=self.bucket, Key=self._key(path))["Body"].read()
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                raise FileNotFoundError(self.uri(path)) from None
            raise

    def _list(self, prefix: str, recursive: bool) -> Iterator[FileInfo]:
        key_prefix = self._key(prefix)
        key_prefix = key_prefix + "/" if key_prefix else ""
        kwargs = {"Bucket": self.bucket, "Prefix": key_prefix}
        if not recursive:
            kwargs["Delimiter"] = "/"
        base = f"{self.prefix}/" if self.prefix else ""
        for page in self._client.get_paginator("list_objects_v2").paginate(**kwargs):
            for obj in page.get("Contents", []):
                if obj["Key"].endswith("/"):
                    continue  # a directory marker (Hadoop's S3A writes them, so do consoles): no file
                yield FileInfo(
                    path=obj["Key"][len(base) :],
                    size=obj["Size"],
                    modification_time=int(obj["LastModified"].timestamp() * 1000),
                )

    def list(self, prefix: str) -> list[FileInfo]:
        return sorted(self._list(prefix, False), key=lambda f: f.path)

    def walk(self, prefix: str = "") -> list[FileInfo]:
        return sorted(self._list(prefix, True), key=lambda f: f.path)

    def exists(self, path: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._client.head_object(Bucket=self.bucket, Key=self._key(path))
            return True
        except ClientError:
            return False

    def put_if_absent(self, path: str, data: bytes) -> None:
        from botocore.exceptions import ClientError

        try:
            self._client.put_object(Bucket=self.bucket, Key=self._key(path), Body=data, IfNoneMatch="*")
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                raise CommitConflict(f"{path} already exists", path=path) from None
            raise

    def write_atomic(self, path: str, data: bytes) -> None:
        self._client.put_object(Bucket=self.bucket, Key=self._key(path), Body=data)

    def delete(self, path: str) -> None:
        self._client.delete_object(Bucket=self.bucket, Key=self._key(path))

    @property
    def storage_options(self) -> Mapping[str, str]:
        c = self.config
        opts = {"AWS_REGION": c.region, "AWS_ALLOW_HTTP": "true" if c.allow_http else "false"}
        if c.endpoint_url:
            opts["AWS_ENDPOINT_URL"] = c.endpoint_url
        if c.access_key_id:
            opts["AWS_ACCESS_KEY_ID"] = c.access_key_id
        if c.secret_access_key:
            opts["AWS_SECRET_ACCESS_KEY"] = c.secret_access_key
        return opts


def open_storage(uri: str, *, s3: S3Config | None = None) -> Storage:
    """Storage for a table location: a local path, ``file://`` URI or ``s3://`` URI."""
    parsed = urlparse(uri)
    if parsed.scheme in ("s3", "s3a"):
        return S3Storage(uri, s3)
    if parsed.scheme in ("", "file") or len(parsed.scheme) == 1:
        return LocalStorage(unquote(parsed.path) if parsed.scheme == "file" else uri)
    raise InvalidTable(f"unsupported location scheme {parsed.scheme!r} in {uri}", hint="use a local path, file:// or s3://")


def new_uuid() -> str:
    """A random UUID string (one place, so tests can see where names come from)."""
    return str(uuid.uuid4())
