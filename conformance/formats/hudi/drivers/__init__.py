"""Hudi drivers of the multi-format engines."""
