"""Read-only data sources behind one envelope and one executor."""
