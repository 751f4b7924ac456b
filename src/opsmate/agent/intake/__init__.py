"""Intake: a question and the flags become the task's constraints and subject.

- :mod:`.question`: environment, namespace, window, symptom and the constraints.
- :mod:`.names`: the objects, namespace, hosts and symptom words a question names.
- :mod:`.ground`: those names checked against what exists (grounded intake).
- :mod:`.times`: clock times, dates and relative times in a question.
- :mod:`.subject`: the subject (what the user asked about) and name matching.
"""
