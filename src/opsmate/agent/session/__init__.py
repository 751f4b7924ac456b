"""Sessions: what the TUI and ``diagnose`` drive.

- :mod:`.session`: :class:`~.session.Session`, a multi-turn investigation over a bundle or
  the live sources, stored and resumed as JSON.
- :mod:`.sources`: where an investigation looks (bundle replay or live), its executor.
- :mod:`.followup`: follow-up questions answered from the state first; :mod:`.intent`
  reads what a follow-up asks, :mod:`.answers` / :mod:`.answers_objects` answer it by
  intent over :mod:`.reads`, in the question's language (:mod:`.frames`).
- :mod:`.storage`: session files read with limits and a schema, written atomically.
- :mod:`.scope`: a session's scope (bundle, flags, constraints) signed when it starts.
"""
