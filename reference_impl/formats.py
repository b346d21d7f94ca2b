"""Which table format lives at a location, and where the reference keeps each format's entry points.

Each format package declares itself (``FORMAT = Format(...)`` in ``reference_impl/<format>/__init__.py``):
the directory its spec puts the table's metadata in, the file endings that mark it there, and its
reader and validator. The command line and the harness ask this table instead of knowing formats
themselves. Formats of other packages join through the entry-point group ``lakeconf.formats``
(an object with a ``reference_format`` of ``"module:attribute"``) or ``register``.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping

from reference_impl.errors import Internal, InvalidTable, LakeconfError, Unsupported

ENTRY_POINT_GROUP = "lakeconf.formats"


@dataclass(frozen=True, slots=True)
class Selector:
    """A format's own way of naming a version to read (``lakeconf read --snapshot-id 123``)."""

    flag: str  # the command-line option: "--snapshot-id"
    keyword: str  # the reader's keyword argument it fills: "snapshot_id"
    kind: type  # int or str
    help: str  # what the value names, in the format's words


@dataclass(frozen=True, slots=True)
class Located:
    """Where a user's location puts a table: its root, and what the location pins down.

    ``options`` are keyword arguments for both the reader and the validator (the metadata file a
    catalog points at); ``note`` tells the user a choice the location left open and how to make
    another (empty: nothing was uncertain).
    """

    root: str
    options: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""


@dataclass(frozen=True, slots=True)
class Format:
    """How the reference recognises, reads and validates one format."""

    name: str
    directory: str  # the directory the spec puts the table's metadata in
    suffixes: tuple[str, ...]  # a file ending so in that directory marks the format
    reader: str  # "module:function" -> read_table(storage, *, version=..., columns=..., **options, **selected)
    validator: str  # "module:function" -> validate_table(storage, **options) -> list of violations
    # "module:function" -> locate(location) -> Located: the table a user's location means, for a
    # table root of this format or a file ending in one of ``files`` (e.g. a catalog's metadata file)
    locator: str | None = None
    files: tuple[str, ...] = ()  # endings of a file that names a whole table by itself
    selectors: tuple[Selector, ...] = ()  # ways to name a version besides the kit's version number
    prefixes: tuple[str, ...] = ()  # or a file whose name starts so in that directory ("schema-0")

    def load(self, which: str) -> Callable[..., Any]:
        """The reader or validator function, held to the error kinds (see ``guarded``)."""
        module, _, name = getattr(self, which).partition(":")
        return guarded(getattr(importlib.import_module(module), name), f"{self.name} {which}")


def guarded(fn: Callable[..., Any], what: str) -> Callable[..., Any]:
    """``fn``, raising only the kit's named kinds.

    Each format's code turns what is wrong with a table into ``InvalidTable`` or ``Unsupported``
    where it finds it; anything else that escapes is the kit's own bug and says so (``Internal``),
    except a file that is not there, which is always the table's fault.
    """

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except LakeconfError:
            raise
        except FileNotFoundError as exc:
            raise InvalidTable(f"a file the table refers to is missing: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - the boundary of the named kinds
            raise Internal(f"the reference {what} failed: {type(exc).__name__}: {exc}") from exc

    return call


def _resolve(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


_extra: list[Format] = []


@lru_cache(maxsize=None)
def _all() -> tuple[Format, ...]:
    found: list[Format] = []
    package = importlib.import_module("reference_impl")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.ispkg:
            declared = getattr(importlib.import_module(f"reference_impl.{info.name}"), "FORMAT", None)
            if isinstance(declared, Format):
                found.append(declared)
    from importlib import metadata

    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        spec = getattr(ep.load(), "reference_format", None)
        if isinstance(spec, str):
            declared = _resolve(spec)
            if isinstance(declared, Format):
                found.append(declared)
    found.extend(_extra)
    unique: dict[str, Format] = {}
    for f in found:
        unique.setdefault(f.name, f)
    return tuple(unique.values())


def all_formats() -> tuple[Format, ...]:
    """Every format the reference implements."""
    return _all()


def register(fmt: Format) -> None:
    """Add a format at run time; ``unregister`` takes it back."""
    _extra.append(fmt)
    _all.cache_clear()


def unregister(fmt: Format) -> None:
    """Remove a format added with ``register``."""
    _extra.remove(fmt)
    _all.cache_clear()


def get(name: str) -> Format:
    """The format called ``name``; ``Unsupported`` naming the known ones otherwise."""
    for f in _all():
        if f.name == name:
            return f
    raise Unsupported(f"unknown table format {name!r} (known: {', '.join(f.name for f in _all())})")


def locate(location: str, storage: Callable[[str], Any]) -> tuple[str, Located]:
    """(format, Located) for a user's location: a file some format names a table by (a catalog's
    metadata file), or a table root, detected by its metadata directory (``storage(location)``
    opens it). ``InvalidTable`` when nothing is recognised."""
    name = location.rstrip("/")
    for f in _all():
        if f.locator and f.files and name.endswith(f.files):
            return f.name, f.load("locator")(name)
    fmt = detect(storage(location))
    found = get(fmt)
    return fmt, found.load("locator")(location) if found.locator else Located(location)


def detect(storage: Any) -> str:
    """The one format whose metadata directory holds a marker file; InvalidTable if none or several."""
    found = []
    for f in _all():
        names = storage.list(f.directory)
        if any(info.path.endswith(f.suffixes) or info.path.rsplit("/", 1)[-1].startswith(f.prefixes) for info in names):
            found.append(f.name)
    if len(found) == 1:
        return found[0]
    if not found:
        wanted = "; ".join(f"{f.name}: {f.directory}/" + (f"*{f.suffixes[0]}" if f.suffixes else f"{f.prefixes[0]}*")
                           for f in _all())
        raise InvalidTable(f"no table format recognised (looked for {wanted})")
    raise InvalidTable(f"the location holds metadata of several formats ({', '.join(found)}); point at one table")
