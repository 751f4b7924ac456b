"""The object graph: every Kubernetes record seen so far, and what is known to be absent.

Analyzers that relate objects (a Service and the pods its selector matches, a PVC and
its StorageClass, a pod and the Secret it needs) read the graph, not raw results. An
object is *known to be absent* only with evidence: a complete list of its kind in its
namespace that does not hold it, or a get that answered that it does not exist; the
evidence id of that answer is what a "missing" fact cites.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from opsmate.records.base import Record
from opsmate.records.k8s import Event, Node, Pod, Rollout
from opsmate.tools.k8s_kinds import KIND_TABLE

CLUSTER_SCOPED = frozenset(k.kind for k in KIND_TABLE if not k.namespaced)


@dataclass
class Listing:
    """One list answer: which kind, where, whether complete, and its evidence id."""

    kind: str
    namespace: str | None
    selector: str | None
    complete: bool
    eid: str
    names: set[str] = field(default_factory=set)


@dataclass
class ObjectGraph:
    """Records by kind and (namespace, name); listings and explicit misses with their E ids."""

    objects: dict[str, dict[tuple[str | None, str], Record]] = field(default_factory=dict)
    sources: dict[tuple[str, str | None, str], str] = field(default_factory=dict)  # -> E id
    listings: list[Listing] = field(default_factory=list)
    misses: dict[tuple[str, str | None, str], str] = field(default_factory=dict)  # -> E id
    events: list[tuple[Event, str]] = field(default_factory=list)

    # -- adding ----------------------------------------------------------------------------
    def add(self, kind: str, record: Record, eid: str, namespace: str | None = None) -> None:
        name = str(getattr(record, "name", None) or "")
        if not name:
            return
        ns = None if kind in CLUSTER_SCOPED else (getattr(record, "namespace", None) or namespace)
        self.objects.setdefault(kind, {})[(ns, name)] = record
        self.sources[(kind, ns, name)] = eid

    def add_listing(
        self,
        kind: str,
        records: Iterable[Record],
        eid: str,
        *,
        namespace: str | None,
        selector: str | None = None,
        complete: bool = True,
    ) -> None:
        names: set[str] = set()
        for r in records:
            self.add(kind, r, eid, namespace)
            if getattr(r, "name", None):
                names.add(str(r.name))  # type: ignore[attr-defined]
        self.listings.append(Listing(kind, namespace, selector, complete, eid, names))

    def add_miss(self, kind: str, namespace: str | None, name: str, eid: str) -> None:
        ns = None if kind in CLUSTER_SCOPED else namespace
        self.misses[(kind, ns, name)] = eid

    def add_events(self, events: Iterable[Event], eid: str) -> None:
        seen = {(e.name, e.reason, e.object.name) for e, _ in self.events}
        for e in events:
            if (e.name, e.reason, e.object.name) not in seen:
                self.events.append((e, eid))

    # -- reading ---------------------------------------------------------------------------
    def get(self, kind: str, namespace: str | None, name: str) -> Record | None:
        ns = None if kind in CLUSTER_SCOPED else namespace
        found = self.objects.get(kind, {}).get((ns, name))
        if found is None and ns is None:  # namespace unknown: a unique name still identifies
            hits = [r for (_, n), r in self.objects.get(kind, {}).items() if n == name]
            found = hits[0] if len(hits) == 1 else None
        return found

    def source_of(self, kind: str, namespace: str | None, name: str) -> str | None:
        ns = None if kind in CLUSTER_SCOPED else namespace
        return self.sources.get((kind, ns, name))

    def all(self, kind: str, namespace: str | None = None) -> list[Any]:
        """Every record of ``kind`` (in ``namespace`` when given)."""
        return [
            r
            for (ns, _), r in self.objects.get(kind, {}).items()
            if namespace is None or ns is None or ns == namespace
        ]

    def pods(self, namespace: str | None = None) -> list[Pod]:
        return self.all("Pod", namespace)

    def nodes(self) -> list[Node]:
        return self.all("Node")

    def rollouts(self, namespace: str | None = None) -> list[Rollout]:
        return self.all("Deployment", namespace)

    def absent(self, kind: str, namespace: str | None, name: str) -> str | None:
        """The E id proving that ``kind/name`` does not exist, or None when not proven."""
        ns = None if kind in CLUSTER_SCOPED else namespace
        if self.get(kind, ns, name) is not None:
            return None
        if (kind, ns, name) in self.misses:
            return self.misses[(kind, ns, name)]
        for li in self.listings:
            if li.kind != kind or not li.complete or li.selector:
                continue
            covers = kind in CLUSTER_SCOPED or li.namespace is None or li.namespace == ns
            if covers and name not in li.names:
                return li.eid
        return None

    def listed(self, kind: str, namespace: str | None = None) -> str | None:
        """The E id of a complete, unfiltered list of ``kind`` covering ``namespace``."""
        for li in self.listings:
            covers = kind in CLUSTER_SCOPED or li.namespace in (None, namespace)
            if li.kind == kind and li.complete and not li.selector and covers:
                return li.eid
        return None
