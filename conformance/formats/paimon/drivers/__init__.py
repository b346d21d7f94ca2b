"""Paimon drivers of the multi-format engines (Daft, Spark): one module per engine family."""
