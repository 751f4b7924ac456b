"""Team domains: which runbooks a user may read, enforced before anything is ranked.

A runbook belongs to the domains of its front matter (``domains: [payments, shared]``,
or one name), else to its top folder under the indexed root (``payments/refunds.md`` is
in ``payments``), else - a file at the top of the root - to :data:`SHARED_DOMAIN`. Names
are lower-cased.

A user's config names the domains it reads (``knowledge.domains``; unset: all). The
restriction is not a filter on ranked results: :func:`.domain_view.restrict_corpus`
builds the corpus of the allowed runbooks alone - its own BM25 / BM25F statistics
(document counts, term frequencies, lengths), its own vocabulary for query understanding,
its own vector rows - so a search answers exactly what an index holding only those
runbooks would answer: another domain's runbook is never a hit, never a candidate, and
never moves a score, a count or the ``low_evidence`` decision. The shared backends do
the same from the other end: only the allowed domains' chunks are fetched from the
server and the server's kNN gets the domain clause in its ``where`` (see
:mod:`.chroma_server`, :mod:`.es_index`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

SHARED_DOMAIN = "shared"


def doc_domains(source: str, meta: dict[str, Any]) -> frozenset[str]:
    """The domains of the runbook at ``source`` (relative, POSIX) with front matter ``meta``."""
    raw = meta.get("domains") or []
    if isinstance(raw, str):
        raw = [raw]
    names = frozenset(str(d).strip().lower() for d in raw if str(d).strip())
    if names:
        return names
    top, sep, _rest = source.partition("/")
    return frozenset([top.strip().lower() if sep and top.strip() else SHARED_DOMAIN])


def allowed_domains(domains: Iterable[str] | None) -> frozenset[str] | None:
    """The config's ``knowledge.domains`` as a set (None: every domain)."""
    if domains is None:
        return None
    return frozenset(str(d).strip().lower() for d in domains if str(d).strip())
