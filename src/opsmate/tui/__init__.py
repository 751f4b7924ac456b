"""The terminal UI (``opsmate tui``): Textual screens and widgets over the engine's Session.

The UI holds no investigation logic: :mod:`opsmate.tui.bridge` runs the engine's
:class:`~opsmate.agent.session.session.Session` in thread workers and turns its events into
the messages of :mod:`opsmate.tui.messages`; widgets only display them. Nothing in
``opsmate.agent``, ``opsmate.tools`` or ``opsmate.knowledge`` imports this package.
Importing this package itself loads nothing heavy; ``opsmate.tui.app`` loads Textual.
"""
