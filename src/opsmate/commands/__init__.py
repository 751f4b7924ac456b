"""Command implementations behind the CLI (one module per command, imported lazily)."""
