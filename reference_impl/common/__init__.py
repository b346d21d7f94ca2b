"""Spec code more than one format uses: Roaring bitmaps, sandboxed SQL expressions, the validation framework.

Nothing here names a format: each format wraps these with its own framing (magic numbers, CRCs,
rule ids) in its own package, so no format package imports another.
"""
