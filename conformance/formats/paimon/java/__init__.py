"""Apache Paimon's Java implementation (paimon-bundle) as a reader engine: ``engine.PaimonJavaEngine``."""
