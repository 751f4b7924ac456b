"""Sessions: what the TUI and ``diagnose`` drive.

- :mod:`.session`: :class:`~.session.Session`, a multi-turn investigation over a bundle or
  the live sources, stored and resumed as JSON.
- :mod:`.sources`: where an investigation looks (bundle replay or live), its executor.
- :mod:`.followup`: follow-up questions answered from the state first.
"""
