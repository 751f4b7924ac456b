"""A small client of the Chroma HTTP API (v2), the server of ``chroma run``.

opsmate talks to the team's Chroma server with ``httpx`` rather than chromadb's own
``HttpClient``: that client has no time-out at all (a hung server would hang a diagnosis)
and importing chromadb costs ~0.8 s per command. The handful of calls used are the
server's public REST API, the same requests chromadb's client sends:

- ``GET  /api/v2/heartbeat``
- ``GET  .../collections?limit&offset``, ``GET .../collections/{name}``,
  ``POST .../collections`` (create), ``PUT .../collections/{id}`` (new metadata, one
  write: the publish pointer flips with it), ``DELETE .../collections/{name}``
- ``POST .../collections/{id}/add``, ``/get`` (ids, where, limit, offset, include),
  ``/query`` (kNN with a ``where`` pre-filter), ``GET .../collections/{id}/count``

where ``...`` is ``/api/v2/tenants/{tenant}/databases/{database}``. Errors map onto
opsmate's tree: a refused connection or a time-out is :class:`SourceUnreachableError`
(exit 3), 401/403 name the token variable, anything else is a
:class:`KnowledgeIndexError` with the server's message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from opsmate.config import KnowledgeConfig
from opsmate.errors import ConfigError, KnowledgeIndexError, SourceUnreachableError


class NotFound(KnowledgeIndexError):
    """The server has no such collection."""


class AlreadyExists(KnowledgeIndexError):
    """A collection of that name exists already."""


@dataclass
class Collection:
    """A collection as the server describes it."""

    id: str
    name: str
    metadata: dict[str, Any]


class ChromaHTTP:
    """The Chroma server at ``url`` (tenant and database from ``knowledge``)."""

    def __init__(self, knowledge: KnowledgeConfig, url: str | None = None) -> None:
        url = url or knowledge.url
        if not url:
            raise ConfigError(
                "knowledge.url is not set: the Chroma server of the team index is unknown",
                hint="set knowledge.url (e.g. http://chroma.internal:8000), or pass --to URL",
            )
        self.url = url.rstrip("/")
        self.knowledge = knowledge
        headers = {"Accept": "application/json"}
        if knowledge.token_env:
            token = os.environ.get(knowledge.token_env)
            if not token:
                raise ConfigError(
                    f"knowledge.token_env names {knowledge.token_env}, which is not set",
                    hint=f"export {knowledge.token_env}=<the Chroma server's token>",
                )
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self.url,
            headers=headers,
            timeout=knowledge.timeout,
            verify=knowledge.verify_tls,
            trust_env=False,
        )
        t, d = quote(knowledge.tenant, safe=""), quote(knowledge.database, safe="")
        self._db = f"/api/v2/tenants/{t}/databases/{d}"

    # -- plumbing ---------------------------------------------------------------------
    def _call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            resp = self._http.request(method, path, **kw)
        except httpx.TimeoutException as exc:
            raise SourceUnreachableError(
                f"the Chroma server at {self.url} did not answer within "
                f"{self.knowledge.timeout:g} s",
                hint="check the server, or raise knowledge.timeout",
            ) from exc
        except httpx.HTTPError as exc:
            raise SourceUnreachableError(
                f"the Chroma server at {self.url} cannot be reached ({type(exc).__name__})",
                hint="is `chroma run` up there? knowledge.url names it",
            ) from exc
        if resp.status_code < 300:
            return resp.json() if resp.content else None
        try:
            body = resp.json()
            message = str(body.get("message") or body.get("error") or body)
        except ValueError:
            message = resp.text[:200]
        where = f"the Chroma server at {self.url}"
        if resp.status_code in (401, 403):
            var = self.knowledge.token_env or "knowledge.token_env"
            raise KnowledgeIndexError(
                f"{where} refused the request ({resp.status_code}: {message})",
                hint=f"check the token in {var}",
            )
        if resp.status_code == 404:
            raise NotFound(f"{where}: {message}")
        if resp.status_code == 409 or "already exists" in message:
            raise AlreadyExists(f"{where}: {message}")
        raise KnowledgeIndexError(f"{where} answered {resp.status_code}: {message}")

    def close(self) -> None:
        self._http.close()

    # -- server and collections -------------------------------------------------------
    def heartbeat(self) -> None:
        self._call("GET", "/api/v2/heartbeat")

    def list_collections(self) -> list[Collection]:
        out: list[Collection] = []
        while True:
            page = self._call(
                "GET", f"{self._db}/collections", params={"limit": 100, "offset": len(out)}
            )
            out += [_collection(c) for c in page or []]
            if not page or len(page) < 100:
                return out

    def get_collection(self, name: str) -> Collection:
        return _collection(self._call("GET", f"{self._db}/collections/{quote(name, safe='')}"))

    def create_collection(
        self, name: str, metadata: dict[str, Any], *, get_or_create: bool = False
    ) -> Collection:
        body = {
            "name": name,
            "metadata": metadata,
            "configuration": {"hnsw": {"space": "cosine"}},
            "get_or_create": get_or_create,
        }
        return _collection(self._call("POST", f"{self._db}/collections", json=body))

    def set_metadata(self, collection_id: str, metadata: dict[str, Any]) -> None:
        """Replace a collection's metadata (one write on the server)."""
        body = {"new_metadata": metadata}
        self._call("PUT", f"{self._db}/collections/{collection_id}", json=body)

    def delete_collection(self, name: str) -> None:
        self._call("DELETE", f"{self._db}/collections/{quote(name, safe='')}")

    # -- records ----------------------------------------------------------------------
    def add(
        self,
        collection_id: str,
        ids: list[str],
        embeddings: list[list[float]],
        documents: list[str],
        metadatas: list[dict[str, Any]],
    ) -> None:
        body = {"ids": ids, "embeddings": embeddings, "documents": documents,
                "metadatas": metadatas, "uris": None}  # fmt: skip
        self._call("POST", f"{self._db}/collections/{collection_id}/add", json=body)

    def get(
        self,
        collection_id: str,
        *,
        ids: list[str] | None = None,
        where: dict[str, Any] | None = None,
        limit: int | None = None,
        offset: int | None = None,
        include: list[str] | None = None,
    ) -> dict[str, Any]:
        body = {"ids": ids, "where": where, "limit": limit, "offset": offset,
                "where_document": None, "include": include or []}  # fmt: skip
        return dict(self._call("POST", f"{self._db}/collections/{collection_id}/get", json=body))

    def query(
        self,
        collection_id: str,
        vector: list[float],
        n: int,
        where: dict[str, Any] | None,
    ) -> tuple[list[str], list[float]]:
        """The ``n`` nearest ids of one query vector (cosine distances), ``where`` applied
        by the server before the neighbours are chosen."""
        body = {"ids": None, "query_embeddings": [vector], "n_results": n, "where": where,
                "where_document": None, "include": ["distances"]}  # fmt: skip
        res = self._call("POST", f"{self._db}/collections/{collection_id}/query", json=body)
        return list(res["ids"][0]), [float(d) for d in res["distances"][0]]

    def count(self, collection_id: str) -> int:
        return int(self._call("GET", f"{self._db}/collections/{collection_id}/count"))


def _collection(raw: dict[str, Any]) -> Collection:
    return Collection(str(raw["id"]), str(raw["name"]), dict(raw.get("metadata") or {}))
