"""Tiers: how urgent a queued check is. Lower runs first.

- ``FOLLOW``: the evidence points straight at it (a crash-looping container's last log
  lines, the Secret a pod cannot find). Runs before anything else.
- ``EXPLAIN``: explains a symptom already seen (memory use against the limit of an
  OOM-killed container, the nodes a pod cannot be scheduled on).
- ``RUNBOOK``: a check declared by a runbook that matches the question.
- ``SURVEY``: the baseline survey every investigation makes (pods, events, logs).
- ``CORROBORATE``: more occurrences, related runbooks, wider context.
- ``BACKGROUND``: useful when steps remain (alerts).
"""

from __future__ import annotations

from enum import IntEnum


class Tier(IntEnum):
    FOLLOW = 10
    EXPLAIN = 15
    RUNBOOK = 20
    SURVEY = 30
    CORROBORATE = 40
    BACKGROUND = 50
