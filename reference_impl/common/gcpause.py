"""Pausing Python's cyclic garbage collector while a snapshot's metadata is turned into objects."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many acyclic objects.

    Each generation-2 pass walks every live object, so while a big snapshot is read the collector
    would rescan the entries already built again and again: cost that grows with the square of the
    size (a third of some 100,000-file plans), for objects that hold no cycles to collect.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
