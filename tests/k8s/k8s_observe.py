"""Feeding hand-built objects through the real analyzers (the registry), as the engine does."""

from __future__ import annotations

from typing import Any

from k8s_build import NS

from opsmate.agent.intake.subject import Subject
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.agent.observe.registry import observe, observe_graph
from opsmate.tools.base import ToolResult
from opsmate.tools.k8s_kinds import KINDS
from opsmate.tools.kubernetes.shaping_objects import shape_object
from opsmate.tools.shaping import event_summary, node_summary, pod_summary


class Feed:
    """An observe context and a counter of evidence ids; ``add`` runs a result through the
    registered result analyzers, ``facts`` runs the graph analyzers."""

    def __init__(self, subject: Subject | None = None, focus: list[str] | None = None) -> None:
        self.ctx = ObserveContext(subject=subject or Subject(), focus=focus or [])
        self.n = 0

    def _run(
        self,
        tool: str,
        data: dict[str, Any],
        args: dict[str, Any],
        scope: dict[str, Any],
        complete: bool = True,
        status: str = "success",
    ) -> str:
        self.n += 1
        eid = f"E{self.n}"
        self.ctx.eid = eid
        res = ToolResult(
            call_id=f"call_{self.n:03d}",
            tool=tool,
            status=status,
            data=data,  # type: ignore[arg-type]
            args=args,
            scope=scope,
            complete=complete,
        )
        observe(res, self.ctx)
        return eid

    def objects(
        self,
        kind: str,
        objs: list[dict[str, Any]],
        ns: str | None = NS,
        complete: bool = True,
        selector: str | None = None,
    ) -> str:
        """A ``list_objects`` answer of ``kind`` (in ``ns``)."""
        args: dict[str, Any] = {"kind": kind}
        scope: dict[str, Any] = {"source": "kubernetes", "kind": kind}
        if KINDS[kind].namespaced and ns:
            args["namespace"] = ns
            scope["namespace"] = ns
        if selector:
            args["label_selector"] = selector
        items = [shape_object(kind, o) for o in objs]
        data = {"kind": kind, "items": items, "count": len(items)}
        return self._run(
            "list_objects", data, args, scope, complete, "success" if items else "no_data"
        )

    def get(self, kind: str, o: dict[str, Any]) -> str:
        data = {
            "kind": kind,
            "name": o["metadata"]["name"],
            "found": True,
            "items": [shape_object(kind, o)],
            "count": 1,
        }
        return self._run(
            "get_object",
            data,
            {"kind": kind, "name": o["metadata"]["name"]},
            {"namespace": o["metadata"].get("namespace")},
        )

    def pods(self, objs: list[dict[str, Any]], ns: str = NS) -> str:
        data = {"pods": [pod_summary(p) for p in objs], "count": len(objs)}
        return self._run("list_pods", data, {"namespace": ns}, {"namespace": ns})

    def nodes(self, objs: list[dict[str, Any]]) -> str:
        return self._run("node_conditions", {"nodes": [node_summary(n) for n in objs]}, {}, {})

    def events(self, objs: list[dict[str, Any]], ns: str = NS) -> str:
        data = {"events": [event_summary(e) for e in objs], "count": len(objs)}
        return self._run("get_events", data, {"namespace": ns}, {"namespace": ns})

    def logs(self, messages: list[str]) -> str:
        items = [
            {"@timestamp": "2026-10-21T01:30:00Z", "message": m, "service": "cart"}
            for m in messages
        ]
        return self._run("search_logs", {"items": items}, {}, {})

    def facts(self, *kinds: FactKind) -> list[Fact]:
        """The graph analyzers' facts from Kubernetes objects (keys ``k8s:``), of ``kinds``."""
        out = [f for f in observe_graph(self.ctx) if f.key.startswith("k8s:")]
        assert self.ctx.notes == [], self.ctx.notes  # no analyzer raised
        return [f for f in out if not kinds or f.kind in kinds]
