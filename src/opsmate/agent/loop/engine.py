"""The long-lived parts one session's investigations share, and the budgets of one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.model.context import ContextBuilder
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.agent.plan.planner import Recorded
from opsmate.agent.runbooks.library import RunbookDoc, RunbookLibrary
from opsmate.knowledge.types import Retriever
from opsmate.llm.base import ChatModel
from opsmate.tools.executor import Executor


@dataclass
class Limits:
    max_steps: int = 12
    max_tokens: int = 60_000
    timeout_s: float = 300.0


@dataclass
class Engine:
    """The long-lived parts one session's investigations share."""

    executor: Executor
    store: EvidenceStore
    library: RunbookLibrary
    retriever: Retriever | None = None
    model: ChatModel | None = None
    builder: ContextBuilder | None = None
    recorded: list[Recorded] | None = None
    namespace: str | None = None
    answer_tokens: int = 512
    docs: dict[str, tuple[str, RunbookDoc]] = field(default_factory=dict)  # source -> (R id, doc)
    planned: set[str] = field(default_factory=set)  # sources whose checks were queued
    graph: ObjectGraph = field(default_factory=ObjectGraph)  # every object seen this session
    # runbooks (URL or path, e.g. an alert's runbook_url) read before any search hit
    preferred_runbooks: list[str] = field(default_factory=list)

    _describe: list[dict[str, Any]] | None = None

    @property
    def tool_names(self) -> list[str]:
        return self.executor.registry.names()

    def describe(self) -> list[dict[str, Any]]:
        """The registry's tool descriptions (computed once: the tool list never changes)."""
        if self._describe is None:
            self._describe = self.executor.registry.describe()
        return self._describe
