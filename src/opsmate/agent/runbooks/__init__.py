"""Runbooks as the engine uses them.

- :mod:`.library`: documents, applicability, conflicts and declared checks.
- :mod:`.plan`: search, load and queue the checks and commands of matching runbooks.
- :mod:`.commands`: commands in runbook code blocks: read-only ones become tool calls,
  the rest mitigations.
"""
