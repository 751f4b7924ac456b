"""The investigation engine: task state, planning, the loop, reports and sessions.

Never imports Textual; the TUI and the CLI both drive :class:`opsmate.agent.session.Session`.
"""
