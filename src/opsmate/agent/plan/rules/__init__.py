"""Rule families, one module each; every module registers its rules on import."""
