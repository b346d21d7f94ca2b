"""Engines that read (and write) only Paimon tables: pypaimon, the Python implementation of Paimon."""
