"""Alerts as where investigations start: webhook bodies, incidents, the ``watch`` receiver.

- :mod:`.webhook`: the Alertmanager webhook body (version 4), parsed and checked.
- :mod:`.incident`: alerts -> the question, environment, onset and preferred runbook.
- :mod:`.resolve`: ``diagnose --alert`` / ``--alert-file`` -> an incident.
- :mod:`.receiver`: the HTTP receiver with its bounded queue (``opsmate watch``).

Nothing here imports Textual or the engine at import time.
"""
