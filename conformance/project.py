"""Where the kit runs from: a checkout of its repository, or an installed package.

Some commands only make sense in a checkout (``golden regenerate`` rewrites the repository's
``golden/``; ``coverage`` counts the repository's tests); they ask ``checkout_root`` and say what to
do otherwise. The version lives in one place, ``pyproject.toml``; an installed package carries it
in its metadata.
"""

from __future__ import annotations

from pathlib import Path

DISTRIBUTION = "lakeconf"
_ROOT = Path(__file__).resolve().parents[1]


def checkout_root() -> Path | None:
    """The repository root when running from a checkout (its pyproject.toml and golden/ beside the
    packages), else ``None``."""
    if (_ROOT / "pyproject.toml").is_file() and (_ROOT / "golden").is_dir():
        return _ROOT
    return None


def version() -> str:
    """The kit's version: the installed distribution's, else the checkout's pyproject.toml."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    import tomllib

    try:
        with open(_ROOT / "pyproject.toml", "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"]) + " (checkout)"
    except (OSError, KeyError, ValueError):
        return "unknown"


def install_hint(extra: str) -> str:
    """The one command that installs an optional part of the kit."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"
