"""The kit's version numbers of a Hudi table as Hudi instants (``reference_impl.hudi.versions``).

Every engine is handed the case's version as the instant its own API takes (``as.of.instant``, an
incremental range), so the harness translates a version number once, by listing the table's timeline with
the reference's parser: which data instants completed, in which order. What an engine then reads at that
instant is its own work.
"""

from reference_impl.hudi.versions import DATA_ACTIONS, Point, point, points

__all__ = ["DATA_ACTIONS", "Point", "point", "points"]
