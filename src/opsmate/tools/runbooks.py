"""``search_runbooks``: the runbook knowledge base as a tool.

Wraps any :class:`~opsmate.knowledge.types.Retriever` (the local hybrid index, a
bundle's runbooks, a shared index). Each hit carries its chunk id, source path,
heading path, document version and metadata, so evidence can cite it exactly.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from opsmate.errors import OpsmateError
from opsmate.knowledge.types import Retriever, SearchHit
from opsmate.tools.base import CallContext, ToolFailure, ToolOutput, ToolSpec
from opsmate.tools.schemas import DESCRIPTIONS, SearchRunbooksArgs

PARENT_CHARS = 1200  # the expanded section, capped: the child text is the precise match


def runbook_ref(hit: SearchHit) -> str:
    """``runbook://<source>#<chunk id>``: the source ref of one hit."""
    return f"runbook://{hit.source}#{hit.chunk_id}"


def _hit_data(hit: SearchHit) -> dict[str, Any]:
    parent = hit.parent_text or ""
    if len(parent) > PARENT_CHARS:
        parent = parent[:PARENT_CHARS] + "…"
    return {
        "rank": hit.rank,
        "score": round(hit.score, 4),
        "chunk_id": hit.chunk_id,
        "source": hit.source,
        "heading_path": list(hit.heading_path),
        "doc_version": hit.doc_version,
        "version": hit.metadata.get("version"),
        "metadata": dict(hit.metadata),
        "text": hit.text,
        "parent_text": parent,
    }


def search_runbooks_spec(retriever: Retriever) -> ToolSpec:
    """The ``search_runbooks`` tool over ``retriever``."""

    def run(args: BaseModel, ctx: CallContext) -> ToolOutput:
        assert isinstance(args, SearchRunbooksArgs)
        filters: dict[str, Any] = {}
        if args.service:
            filters["service"] = args.service
        if args.environment:
            filters["environment"] = args.environment
        try:
            response = retriever.search(args.query, top_k=args.top_k, filters=filters or None)
        except OpsmateError as exc:
            raise ToolFailure("not_available", f"runbook search unavailable: {exc}") from exc
        hits = [_hit_data(h) for h in response.hits]
        scope: dict[str, Any] = {"query": args.query, "top_k": args.top_k}
        data: dict[str, Any] = {"hits": hits, "low_evidence": response.low_evidence}
        if response.warnings:
            data["warnings"] = list(response.warnings)
        return ToolOutput(
            data=data,
            status="success" if hits else "no_data",
            scope=scope,
            source_refs=[runbook_ref(h) for h in response.hits],
        )

    return ToolSpec(
        name="search_runbooks",
        description=DESCRIPTIONS["search_runbooks"],
        args_model=SearchRunbooksArgs,
        run=run,
        timeout_s=30.0,
        idempotent=True,
        token_budget=2500,
    )
