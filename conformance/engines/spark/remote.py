"""A Spark line in a Python of its own: where its interpreter is, and how the kit sets one up.

pyspark 3.5 and 4.0 cannot share one Python environment, so a line whose pyspark is not installed
here runs in a virtual environment made for it (``setup``), driven through the worker isolation
(``conformance.isolation.RemoteEngine``): the same adapter and drivers, in that interpreter.

The environment is found at LAKECONF_SPARK_PYTHON_<line> (``LAKECONF_SPARK_PYTHON_3_5``), else
``<cache>/spark-<line>/bin/python``, the cache being LAKECONF_CACHE_DIR, else ``.cache/`` of a
checkout, else ``~/.cache/lakeconf``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata

from conformance.engines.spark import lines

# What the kit imports in a Spark worker, pinned to the versions installed here (the worker
# exchanges pickled Arrow tables with this process, so pyarrow must be the same release).
WORKER_PACKAGES = ("pyarrow", "numpy", "fastavro", "pyroaring", "mmh3", "duckdb", "boto3")


def cache_dir() -> str:
    """Where the kit keeps what it builds for itself (environments, binaries)."""
    explicit = os.environ.get("LAKECONF_CACHE_DIR")
    if explicit:
        return explicit
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if os.path.exists(os.path.join(root, "pyproject.toml")) and os.path.isdir(os.path.join(root, ".git")):
        return os.path.join(root, ".cache")
    return os.path.join(os.path.expanduser("~"), ".cache", "lakeconf")


def env_var(line: lines.SparkLine) -> str:
    """The variable naming a line's interpreter."""
    return "LAKECONF_SPARK_PYTHON_" + line.name.replace(".", "_")


def venv_dir(line: lines.SparkLine) -> str:
    """Where ``setup`` puts the line's environment."""
    return os.path.join(cache_dir(), f"spark-{line.name}")


def interpreter(line: lines.SparkLine) -> str | None:
    """The Python of the line's environment, if there is one."""
    explicit = os.environ.get(env_var(line))
    if explicit:
        return explicit
    path = os.path.join(venv_dir(line), "bin", "python")
    return path if os.path.exists(path) else None


def setup_hint(line: lines.SparkLine) -> str:
    """What to run to get the line's environment."""
    return f"python -m conformance.engines.spark setup --line {line.name} (or set {env_var(line)})"


def _pins() -> list[str]:
    out = []
    for name in WORKER_PACKAGES:
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            continue
    return out


def setup(line: lines.SparkLine, *, quiet: bool = True) -> str:
    """Create (or complete) the line's environment; returns its interpreter. Idempotent."""
    target = venv_dir(line)
    python = os.path.join(target, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", target], check=True)
    wanted = [f"pyspark=={line.pyspark}", *_pins()]
    stamp = os.path.join(target, "lakeconf-requirements.txt")
    if os.path.exists(stamp) and open(stamp).read().split() == wanted:
        return python
    flags = ["--quiet", "--disable-pip-version-check"] if quiet else ["--disable-pip-version-check"]
    subprocess.run([python, "-m", "pip", "install", *flags, *wanted], check=True)
    with open(stamp + ".tmp", "w") as fh:
        fh.write("\n".join(wanted) + "\n")
    os.replace(stamp + ".tmp", stamp)
    return python
