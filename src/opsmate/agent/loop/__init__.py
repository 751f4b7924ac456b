"""The investigation loop: plan, call through the executor, record, until a stop condition.

- :mod:`.investigation`: the loop itself (:class:`~.investigation.Investigation`).
- :mod:`.steps`: one step: run a check, store its evidence, observe, propose follow-ups.
- :mod:`.engine`: the long-lived parts a session's investigations share, and the budgets.
- :mod:`.events`: what the loop emits as it goes (TUI, progress, tests).
"""
