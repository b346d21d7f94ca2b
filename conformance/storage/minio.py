"""A throw-away MinIO server for the S3 suites: a local binary, or a container when Docker works.

The local binary is built by ``.ci/install-minio`` (Go module proxy, no container engine needed)
into ``.cache/bin/minio``; ``MINIO_BINARY`` points at another one. Every server gets its own free
loopback ports, its own data directory and credentials generated for the run, and is torn down
completely (process ended, directory removed) when the context exits. The credentials never reach
a log: ``repr`` leaves them out, MinIO runs with ``--quiet`` (its banner prints the root password)
and any server output shown in an error is scrubbed first.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import weakref
from pathlib import Path

from reference_impl.storage import S3Config

REPO_ROOT = Path(__file__).resolve().parents[2]
INSTALL_HINT = (
    "build it with `bash .ci/install-minio` in a checkout (needs the Go toolchain; installs .cache/bin/minio), "
    "or `go install github.com/minio/minio@latest` (installs ~/go/bin/minio), or set MINIO_BINARY to a MinIO "
    "server binary"
)
_LIVE = weakref.WeakSet()  # servers to stop if the process exits without closing them


class MinioUnavailable(RuntimeError):
    """No way to run MinIO here (no binary, no working Docker); the message says what to do."""


def find_minio_binary() -> str | None:
    """Path of a MinIO server binary: MINIO_BINARY, the project's .cache/bin, $GOBIN, ~/go/bin, PATH."""
    env = os.environ.get("MINIO_BINARY")
    if env:
        return env if os.access(env, os.X_OK) else None
    candidates = [REPO_ROOT / ".cache" / "bin" / "minio"]
    if os.environ.get("LAKECONF_BIN"):
        candidates.insert(0, Path(os.environ["LAKECONF_BIN"]) / "minio")
    if os.environ.get("GOBIN"):
        candidates.append(Path(os.environ["GOBIN"]) / "minio")
    candidates.append(Path.home() / "go" / "bin" / "minio")
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return shutil.which("minio")


def docker_available() -> bool:
    """Whether a Docker engine answers (``docker info`` succeeds) and testcontainers is installed."""
    if shutil.which("docker") is None:
        return False
    try:
        import testcontainers.minio  # noqa: F401  (optional dependency)
    except ImportError:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=15)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def minio_unavailable_reason() -> str | None:
    """``None`` when a MinIO server can be started here, else why not and what to do."""
    if find_minio_binary() or docker_available():
        return None
    if os.environ.get("MINIO_BINARY"):
        return f"MINIO_BINARY={os.environ['MINIO_BINARY']} is not an executable file; {INSTALL_HINT}"
    return f"no MinIO server binary found and no working Docker engine; {INSTALL_HINT}"


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MinioServer:
    """One MinIO server with one bucket, as a context manager (``with MinioServer() as m: ...``)."""

    def __init__(
        self,
        *,
        bucket: str | None = None,
        binary: str | None = None,
        workdir: str | None = None,
        startup_timeout: float = 30.0,
        use_container: bool | None = None,
    ) -> None:
        # A bucket name per server: Hadoop's s3a caches one file system per bucket name, so two
        # servers in one process must never share a name.
        self.bucket = bucket or f"lakeconf-{secrets.token_hex(4)}"
        self.binary = binary
        self.workdir = workdir
        self.startup_timeout = startup_timeout
        self.use_container = use_container
        self.access_key = "lakeconf-" + secrets.token_hex(4)
        self.secret_key = secrets.token_urlsafe(24)
        self.endpoint_url: str | None = None
        self.console_url: str | None = None
        self.data_dir: str | None = None
        self.startup_seconds: float | None = None
        self._proc: subprocess.Popen | None = None
        self._log_path: str | None = None
        self._container = None

    def __repr__(self) -> str:  # never the credentials
        return f"MinioServer(endpoint_url={self.endpoint_url!r}, bucket={self.bucket!r})"

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> "MinioServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> "MinioServer":
        """Start the server, wait until it is live, create the bucket."""
        if self._proc is not None or self._container is not None:
            return self
        began = time.monotonic()
        binary = self.binary or find_minio_binary()
        container = self.use_container
        if container is None:
            container = binary is None and docker_available()
        if container:
            self._start_container()
        elif binary is None:
            raise MinioUnavailable(minio_unavailable_reason() or f"no MinIO binary; {INSTALL_HINT}")
        else:
            self._start_process(binary)
        _LIVE.add(self)
        try:
            self._create_bucket()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _start_process(self, binary: str) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="lakeconf-minio-", dir=self.workdir)
        self._log_path = os.path.join(self.data_dir, "minio.log")
        os.makedirs(os.path.join(self.data_dir, "data"))
        env = dict(os.environ)
        env.update(
            MINIO_ROOT_USER=self.access_key,
            MINIO_ROOT_PASSWORD=self.secret_key,
            MINIO_UPDATE="off",
            MINIO_BROWSER="off",  # the console is not needed; its port is still reserved apart
        )
        last_error = ""
        # A free port can be taken between picking it and MinIO binding it: retry a few times.
        for _attempt in range(3):
            port, console = free_port(), free_port()
            with open(self._log_path, "wb") as log:
                self._proc = subprocess.Popen(
                    [
                        binary,
                        "server",
                        os.path.join(self.data_dir, "data"),
                        "--address",
                        f"127.0.0.1:{port}",
                        "--console-address",
                        f"127.0.0.1:{console}",
                        "--quiet",
                    ],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C in the test run should not hit it first
                )
            self.endpoint_url = f"http://127.0.0.1:{port}"
            self.console_url = f"http://127.0.0.1:{console}"
            error = self._wait_live()
            if error is None:
                return
            last_error = error
            self._stop_process()
            if "address already in use" not in error.lower():
                break
        self._remove_dir()
        raise MinioUnavailable(f"MinIO did not start: {last_error}. Check the binary, or {INSTALL_HINT}")

    def _wait_live(self) -> str | None:
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.endpoint_url}/minio/health/live"
        while time.monotonic() < deadline:
            assert self._proc is not None
            if self._proc.poll() is not None:
                return f"the server exited with code {self._proc.returncode}: {self._log_tail()}"
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return None
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(0.1)
        return f"not live on {url} after {self.startup_timeout:.0f} s: {self._log_tail()}"

    def _log_tail(self, limit: int = 2000) -> str:
        try:
            text = Path(self._log_path).read_text(errors="replace") if self._log_path else ""
        except OSError:
            text = ""
        return self.scrub(text[-limit:].strip()) or "(no output)"

    def scrub(self, text: str) -> str:
        """``text`` with this server's credentials replaced by ``***``."""
        for value in (self.secret_key, self.access_key):
            text = text.replace(value, "***")
        return text

    def _start_container(self) -> None:
        from testcontainers.minio import MinioContainer  # optional; only with a Docker engine

        self._container = MinioContainer(access_key=self.access_key, secret_key=self.secret_key)
        self._container.start()
        host = self._container.get_container_host_ip()
        port = self._container.get_exposed_port(self._container.port)
        self.endpoint_url = f"http://{host}:{port}"

    def _create_bucket(self) -> None:
        import boto3
        from botocore.config import Config

        client = boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5}),
        )
        client.create_bucket(Bucket=self.bucket)

    def stop(self) -> None:
        """End the server and remove its data; safe to call twice."""
        _LIVE.discard(self)
        if self._container is not None:
            try:
                self._container.stop()
            finally:
                self._container = None
        self._stop_process()
        self._remove_dir()

    def _stop_process(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def _remove_dir(self) -> None:
        if self.data_dir and os.path.isdir(self.data_dir):
            shutil.rmtree(self.data_dir, ignore_errors=True)
        self.data_dir = None

    # -- what clients need ---------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether the server process (or container) is up."""
        if self._container is not None:
            return True
        return self._proc is not None and self._proc.poll() is None

    @property
    def s3_config(self) -> S3Config:
        """Endpoint and credentials as the reference's ``S3Config``."""
        if self.endpoint_url is None:
            raise RuntimeError("MinioServer is not started")
        return S3Config(
            endpoint_url=self.endpoint_url,
            access_key_id=self.access_key,
            secret_access_key=self.secret_key,
            region="us-east-1",
            allow_http=True,
        )


@atexit.register
def _stop_leftovers() -> None:
    for server in list(_LIVE):
        server.stop()
