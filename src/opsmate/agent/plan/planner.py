"""The planner: which read-only call to make next, and never the same one twice.

Sources, in order of preference: (1) ``checks`` declared in the front matter of
matching runbooks, (2) read-only commands found in their code blocks, (3) rules
(a baseline survey, and reactions to what was found), (4) the model's proposal
(only with a model). Steps are held in reserve for the baseline survey so a long
runbook cannot starve it. Identical calls (same tool, same normalised arguments)
are never repeated, and a call whose answer is already contained in a complete
earlier one is skipped. When replaying a bundle, a PromQL query that was not
recorded is mapped onto the recorded query of the same metrics, or dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from opsmate.agent.observe.facts import FactKind
from opsmate.agent.signals import metric_names
from opsmate.agent.state import PendingCheck, TaskState
from opsmate.tools.shaping import normalize_promql

# tools whose answer for fewer arguments contains the answer for more (when complete)
_SUBSUMING = {"list_pods", "get_events", "node_conditions"}
_NAME_KEYED = {"rollout_history"}  # the namespace does not change which object is meant


def _same_pod_read(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Two reads of one pod's log: the same pod, the same instance (current or previous), the
    same container when both name one."""
    ca, cb = a.get("container"), b.get("container")
    return (
        a.get("name") == b.get("name")
        and bool(a.get("previous")) == bool(b.get("previous"))
        and (not ca or not cb or ca == cb)
    )


@dataclass
class Recorded:
    query: str
    type: str
    description: str = ""


# live metric discovery: the task state -> (queries worth asking, notes on what is missing)
Discoverer = Callable[[TaskState], tuple[list[Recorded], list[str]]]


def call_key(tool: str, args: dict[str, Any], environment: str | None = None) -> str:
    """A normalised identity of a call (the environment the executor fills in is left out)."""
    norm: dict[str, Any] = {}
    for k, v in sorted(args.items()):
        if v in (None, "", [], {}):
            continue
        if k == "environment" and environment and str(v) == environment:
            continue
        if k == "query" and tool == "query_metrics" and isinstance(v, str):
            v = normalize_promql(v)
        elif isinstance(v, str):
            v = re.sub(r"\s+", " ", v.strip())
        if tool in _NAME_KEYED and k == "namespace":
            continue
        norm[k] = v
    if tool == "query_metrics":
        norm.setdefault("type", "range")
    return tool + json.dumps(norm, sort_keys=True, ensure_ascii=False)


def _plain(args: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if v not in (None, "") and k != "environment"}


class Planner:
    """Holds the queue of pending checks (in the task state) and the calls already made."""

    def __init__(
        self,
        state: TaskState,
        *,
        tools: Iterable[str],
        recorded: list[Recorded] | None = None,
        discover: Discoverer | None = None,
    ) -> None:
        self.state = state
        self.tools = set(tools)
        self.recorded = recorded  # None: live sources (any query may be asked)
        self.discover = discover  # live: finds the PromQL worth asking (metric_candidates)
        self.discovered: list[Recorded] | None = None
        self.done: dict[str, tuple[dict[str, Any], bool]] = {}  # key -> (args, complete)
        self.skipped: list[str] = []
        for a in state.actions:  # a resumed session knows what it already did
            self.mark_done(a.tool, a.args, a.status in ("success", "no_data"))

    # -- bookkeeping -------------------------------------------------------------------
    def key(self, tool: str, args: dict[str, Any]) -> str:
        return call_key(tool, args, self.state.constraints.environment)

    def mark_done(self, tool: str, args: dict[str, Any], complete: bool) -> None:
        self.done[self.key(tool, args)] = (dict(args), complete)
        self.state.pending = [
            p for p in self.state.pending if self.key(p.tool, p.args) != self.key(tool, args)
        ]

    def is_done(self, tool: str, args: dict[str, Any]) -> bool:
        if self.key(tool, args) in self.done:
            return True
        if tool == "pod_logs" and any(
            k.startswith("pod_logs{") and _same_pod_read(dargs, args)
            for k, (dargs, _) in self.done.items()
        ):
            return True  # that pod's (same container's) log was read: a longer tail adds little
        if tool in _SUBSUMING:
            for key, (dargs, complete) in self.done.items():
                if not key.startswith(tool + "{") or not complete:
                    continue
                clean = {
                    k: v for k, v in dargs.items() if v not in (None, "") and k != "environment"
                }
                if all(args.get(k) == v for k, v in clean.items()):
                    return True
        return False

    # -- adding ------------------------------------------------------------------------------
    def add(self, check: PendingCheck) -> bool:
        """Queue ``check`` unless it is unknown, already done or already queued; True if queued."""
        if check.tool not in self.tools:
            return False
        args = {k: v for k, v in check.args.items() if v is not None}
        if check.tool == "query_metrics":
            adapted = self.adapt_query(args)
            if adapted is None:
                self.skipped.append(f"{args.get('query')} (not recorded in this bundle)")
                return False
            args = adapted
        check = check.model_copy(update={"args": args})
        if self.is_done(check.tool, args):
            return False
        if check.tool in _SUBSUMING and not self._merge_subsumed(check):
            return False
        key = self.key(check.tool, args)
        for p in self.state.pending:
            if self.key(p.tool, p.args) == key or (
                check.tool == p.tool == "pod_logs" and _same_pod_read(p.args, args)
            ):
                if check.priority < p.priority or (check.essential and not p.essential):
                    p.priority = min(p.priority, check.priority)
                    p.essential = p.essential or check.essential
                    self.state.pending.sort(key=lambda c: c.priority)
                return False
        self.state.add_pending(check)
        return True

    def _merge_subsumed(self, check: PendingCheck) -> bool:
        """Fold a narrower call into a broader pending one (or the reverse); False if covered."""
        new = _plain(check.args)
        for p in list(self.state.pending):
            if p.tool != check.tool:
                continue
            old = _plain(p.args)
            if all(new.get(k) == v for k, v in old.items()):  # the pending one is broader
                p.priority = min(p.priority, check.priority)
                p.essential = p.essential or check.essential
                p.runbook = p.runbook or check.runbook
                self.state.pending.sort(key=lambda c: c.priority)
                return False
            if all(old.get(k) == v for k, v in new.items()):  # the new one is broader
                self.state.pending.remove(p)
                check.priority = min(check.priority, p.priority)
                check.essential = check.essential or p.essential
                check.runbook = check.runbook or p.runbook
        return True

    def adapt_query(self, args: dict[str, Any]) -> dict[str, Any] | None:
        """Map a PromQL check onto a recorded query when replaying (same text / same metrics)."""
        if self.recorded is None:
            return args
        query = str(args.get("query") or "")
        want = normalize_promql(query)
        for r in self.recorded:
            if normalize_promql(r.query) == want:
                return {**args, "query": r.query, "type": r.type}
        names = set(metric_names(query))
        if not names:
            return None
        best: tuple[float, Recorded] | None = None
        for r in self.recorded:
            rn = set(metric_names(r.query))
            if not rn or not (names & rn):
                continue
            overlap = len(names & rn) / len(names | rn)
            labels_q = set(re.findall(r'"([^"]+)"', query))
            labels_r = set(re.findall(r'"([^"]+)"', r.query))
            if labels_q and labels_r and not (labels_q & labels_r):
                continue
            if best is None or overlap > best[0]:
                best = (overlap, r)
        if best is None or best[0] < 0.5:
            return None
        return {"query": best[1].query, "type": best[1].type}

    # -- choosing -----------------------------------------------------------------------------
    def next(
        self, steps_left: int, only: Callable[[PendingCheck], bool] | None = None
    ) -> PendingCheck | None:
        """The next check to run, keeping enough steps for the essential (baseline) ones;
        with ``only``, the first pending check it accepts."""
        pending = [p for p in self.state.pending if not self.is_done(p.tool, p.args)]
        self.state.pending = pending
        if only is not None:
            pending = [p for p in pending if only(p)]
        if not pending:
            return None
        self._relax_survey()
        essential = [p for p in pending if p.essential]
        choice = essential[0] if essential and len(essential) >= steps_left else pending[0]
        self.state.pending.remove(choice)
        return choice

    def _relax_survey(self) -> None:
        """The survey keeps two metric reads in reserve because the logs may say nothing;
        once the logs named a failure about the subject, one is enough: the second step goes
        to what that failure points at."""
        said = any(
            f.focus
            and f.severity == "error"
            and f.kind in _NAMED_FAILURES
            and f.detail.get("source") in ("log_stats", "pod_logs", None)
            for f in self.state.facts
        )
        if not said:
            return
        metrics = [p for p in self.state.pending if p.essential and p.tool == "query_metrics"]
        done = sum(1 for a in self.state.actions if a.tool == "query_metrics")
        for p in metrics[max(0, 1 - done) :]:
            p.essential = False
        # "who logs errors" over every service looks for a failure; it has been named: the
        # steps go to what would say why
        for p in self.state.pending:
            if p.essential and _error_search(p):
                p.essential = False

    # -- live metric discovery (issue 24) ----------------------------------------------------
    def metric_candidates(self) -> list[Recorded] | None:
        """The PromQL worth asking: a bundle's recorded queries, or, live, the queries built
        from the series discovered for the subject (discovered once, on first use; what
        discovery could not find goes into the state's notes). None: nothing to choose from."""
        if self.recorded is not None:
            return self.recorded
        if self.discover is None:
            return None
        if self.discovered is None:
            self.discovered, notes = self.discover(self.state)
            for note in notes:
                if note not in self.state.notes:
                    self.state.notes.append(note)
        return self.discovered

    def recorded_matching(self, words: Iterable[str], limit: int = 2) -> list[Recorded]:
        """Recorded queries (not yet run) mentioning any of ``words`` (service, symptom)."""
        if not self.recorded:
            return []
        low = [w.lower() for w in words if w and len(w) >= 3]
        out: list[Recorded] = []
        for r in self.recorded:
            text = f"{r.query} {r.description}".lower()
            if any(w in text for w in low) and not self.is_done(
                "query_metrics", {"query": r.query, "type": r.type}
            ):
                out.append(r)
        return out[:limit]


def _error_search(p: PendingCheck) -> bool:
    """The survey's search for error lines over every service (no service, no query): the
    summary of every service's errors (``log_stats``) stays, it says who else fails."""
    return p.tool == "search_logs" and not p.args.get("service") and not p.args.get("query")


_NAMED_FAILURES = frozenset(
    {FactKind.DEPENDENCY_FAILURE, FactKind.CONFIG_ERROR, FactKind.SATURATION, FactKind.LAST_WORDS}
)
