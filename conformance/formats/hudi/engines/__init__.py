"""Engines that read Hudi only."""
