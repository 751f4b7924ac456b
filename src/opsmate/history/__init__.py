"""The incident history: past diagnoses kept in SQLite, listed by ``opsmate history`` and
named in a report's ``seen_before`` (context, never evidence)."""
