"""The diagnosis report (contracts section 3).

- :mod:`.model`: the report model, citation repair and Markdown.
- :mod:`.assemble`: state + evidence + analysis -> a checked, redacted report.
- :mod:`.next_steps`: the check and the human mitigation for a confirmed cause.
"""
