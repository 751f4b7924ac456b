"""The investigation engine: task state, planning, the loop, reports and sessions.

Rooms: :mod:`.intake` (question -> constraints and subject), :mod:`.plan` (what to check
next), :mod:`.loop` (the investigation), :mod:`.observe` (tool results -> facts),
:mod:`.judge` (facts -> causes), :mod:`.model` (the optional model's turns),
:mod:`.runbooks`, :mod:`.report` and :mod:`.session`; :mod:`.state` and :mod:`.evidence` are
the investigation's memory. Never imports Textual; the TUI and the CLI both drive
:class:`opsmate.agent.session.session.Session`.
"""
