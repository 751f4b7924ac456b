"""The evaluation suite: deterministic scoring of diagnosis reports against answer keys.

:mod:`opsmate.evaluation.scoring` holds the pure checks; :mod:`opsmate.evaluation.runner`
finds scenario bundles, runs the engine on them and scores the reports; the
``opsmate eval`` command (:mod:`opsmate.commands.evaluate`) prints the results.
"""

from opsmate.evaluation.scoring import CHECKS, Check, ScenarioScore, score_report

__all__ = ["CHECKS", "Check", "ScenarioScore", "score_report"]
