"""Data types shared by the knowledge-base modules (no heavy imports here)."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field


class RunbookCheck(BaseModel):
    """A structured read-only check declared in a runbook's front matter."""

    model_config = ConfigDict(extra="forbid")

    name: str = ""
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    why: str | None = None


class RunbookMeta(BaseModel):
    """Front-matter metadata of a runbook (all optional)."""

    model_config = ConfigDict(extra="allow")

    title: str | None = None
    service: str | None = None
    environment: list[str] = Field(default_factory=list)
    version: str | None = None
    status: Literal["active", "deprecated", "draft"] = "active"
    owner: str | None = None
    alerts: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    checks: list[RunbookCheck] = Field(default_factory=list)
    supersedes: str | None = None
    # team domains this runbook belongs to; empty: its top folder (or "shared" at the top)
    domains: list[str] = Field(default_factory=list)


ChunkKind = Literal["text", "list", "code", "table", "mixed"]


class Section(BaseModel):
    """A parent: the enclosing section (capped in size) used as answer context."""

    id: str
    heading_path: list[str]
    text: str
    ordinal: int


class Chunk(BaseModel):
    """A child chunk: the unit of retrieval."""

    id: str  # stable: hash of (doc path, doc version, ordinal, strategy version)
    source: str  # path relative to the indexed root, POSIX separators
    heading_path: list[str]
    text: str  # displayed text (no heading header)
    parent_id: str
    ordinal: int  # position in the document
    kind: ChunkKind = "text"
    tokens: int = 0

    def index_text(self) -> str:
        """The text indexed: heading-path header in front of the chunk text."""
        header = " › ".join(h for h in self.heading_path if h)
        return f"{header}\n{self.text}" if header else self.text


class ParsedDocument(BaseModel):
    source: str
    doc_version: str  # content hash
    title: str
    meta: RunbookMeta
    sections: list[Section]
    chunks: list[Chunk]
    warnings: list[str] = Field(default_factory=list)


class SearchHit(BaseModel):
    """One ranked runbook chunk (contracts section 1, ``search --json``)."""

    rank: int
    score: float
    chunk_id: str
    source: str
    heading_path: list[str]
    text: str
    parent_text: str
    doc_version: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    # extensions
    bm25_rank: int | None = None
    vector_rank: int | None = None
    vector_similarity: float | None = None
    explain: dict[str, Any] | None = None  # why it ranked here (search --explain)


class SearchResponse(BaseModel):
    query: str
    hits: list[SearchHit]
    low_evidence: bool
    mode: str = "hybrid"
    warnings: list[str] = Field(default_factory=list)
    explain: dict[str, Any] | None = None  # how the query was understood (search --explain)


SearchMode = Literal["hybrid", "bm25", "vector"]


class Retriever(Protocol):
    """What the engine and the ``search_runbooks`` tool need from a knowledge base."""

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        include_deprecated: bool = False,
    ) -> SearchResponse: ...
