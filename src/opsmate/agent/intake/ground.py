"""Grounded intake: the names a question seems to carry, checked against what exists.

Intake reads names from words ("in namespace X", "the X deployment"); a word is only a
namespace or an object when something by that name exists. "the pod client under
namespace shop-3" must not make a namespace of "under", and "api-service namespace
app-108" must not make a namespace of the service. Grounding uses the inventory the
sources know without a call (a bundle's objects; the namespaces a live environment is
configured for); with no inventory nothing is changed. A name that resolves to nothing
is said in the notes, so the report can tell the reader instead of querying an empty
namespace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from opsmate.agent.intake.names import namespace_candidates
from opsmate.agent.intake.question import said_healthy
from opsmate.agent.intake.subject import Subject

_WORD = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")


@dataclass
class Inventory:
    """What exists: namespaces and object / service names (lower-case)."""

    namespaces: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    routes: dict[str, list[str]] = field(default_factory=dict)  # Ingress -> its Services
    objects: set[str] = field(default_factory=set)  # the objects' own names (no labels)
    placed: dict[str, list[str]] = field(default_factory=dict)  # workload -> namespaces

    @classmethod
    def of(
        cls,
        namespaces: Iterable[str],
        names: Iterable[str],
        routes: dict[str, list[str]] | None = None,
        objects: Iterable[str] = (),
        placed: dict[str, list[str]] | None = None,
    ) -> Inventory:
        return cls(
            {n.lower() for n in namespaces if n},
            {n.lower() for n in names if n},
            {k.lower(): list(v) for k, v in (routes or {}).items()},
            {n.lower() for n in objects if n},
            {k.lower(): list(v) for k, v in (placed or {}).items()},
        )

    def home(self, name: str) -> str | None:
        """The one namespace the workload or Service ``name`` lives in, else None."""
        where = self.placed.get(name.lower()) or []
        return where[0] if len(where) == 1 else None

    def has_object(self, name: str, *, own_name: bool = False) -> bool:
        """Whether an object, a service or a workload's pods go by ``name`` (``own_name``:
        an object's own name, not a label some pods carry)."""
        low = name.lower()
        pool = self.objects if own_name and self.objects else self.names
        return low in pool or any(n.startswith(low + "-") for n in pool)

    def known_as(self, name: str) -> str | None:
        """The one object a short name stands for ("worker" for the Deployment
        ``shop-worker-all-v2``, whose pods and ReplicaSets share its name): the
        name is a whole ``-``-separated part of it; None when none or several do."""
        low = name.lower()
        if len(low) < 4:
            return None
        pool = self.objects or self.names
        hits = sorted(n for n in pool if f"-{low}-" in f"-{n}-")
        bases = [n for n in hits if not any(n != b and n.startswith(b + "-") for b in hits)]
        return bases[0] if len(bases) == 1 else None


@dataclass
class Grounding:
    subject: Subject
    notes: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)  # names that matched nothing
    services: list[str] = field(default_factory=list)  # the focus services, grounded


def ground(
    question: str, subject: Subject, inventory: Inventory, services: Sequence[str] = ()
) -> Grounding:
    """``subject`` and the focus ``services`` with their namespace and names checked against
    ``inventory`` (see module doc)."""
    out = subject.model_copy(deep=True)
    notes: list[str] = []
    unresolved: list[str] = []
    focus = list(services)
    if inventory.namespaces:
        _ground_namespace(question, out, inventory, notes, unresolved)
    routed = [n for n in out.names if n.lower() in inventory.routes]
    if routed:
        # an Ingress named as the subject ("ingress shop-web is answering 500"): what it
        # routes to is what serves the errors
        # (a backend the question says works fine is not what it is about)
        healthy = said_healthy(question)
        backends = [s for n in routed for s in inventory.routes[n.lower()] if s not in healthy]
        out.names = list(dict.fromkeys([*(n for n in out.names if n not in routed), *backends]))
        out.names = out.names[:4]
        out.kind = "Service" if out.kind == "Ingress" else out.kind
        focus = [s for s in focus if s not in routed]
        notes.append("Ingress " + ", ".join(routed) + " routes to Service " + ", ".join(backends))
    ns = (out.namespace or "").lower()
    if ns and inventory.names and ns not in inventory.names:
        # "the TeaStore shop" in namespace teastore: the application, not a service of it
        focus = [s for s in focus if s.lower() != ns]
    if inventory.names and out.names:
        # a name no object has (a word, or only a pod label such as app=worker) that is a
        # whole part of exactly one object's name: that object (its logs, its rollouts)
        said = {
            n: inventory.known_as(n)
            for n in out.names
            if not inventory.has_object(n, own_name=True)
        }
        if any(said.values()):
            out.names = list(dict.fromkeys(said.get(n) or n for n in out.names))
            if out.kind_name is not None:
                out.kind_name = said.get(out.kind_name) or out.kind_name
            focus = list(dict.fromkeys(said.get(f) or f for f in focus))
            notes.extend(f"{n!r} is taken as {full}" for n, full in said.items() if full)
        known = [n for n in out.names if inventory.has_object(n)]
        unknown = [n for n in out.names if not inventory.has_object(n)]
        if known and unknown:
            # a word the question used as a name, naming nothing, when other names exist
            out.names = known
            notes.append(
                "no object named " + ", ".join(repr(n) for n in unknown) + " exists; "
                "the investigation follows " + ", ".join(known)
            )
        elif unknown and not known:
            # words the question used as names ("the acme-shop in ns s1"), naming nothing
            # that exists: the question is about its namespace as a whole
            unresolved.extend(unknown)
            out.names = []
            focus = [s for s in focus if s not in unknown or s in inventory.names]
            notes.append(
                "no object named " + ", ".join(repr(n) for n in unknown) + " exists; "
                "the investigation covers "
                + (f"the namespace {out.namespace}" if out.namespace else "every namespace")
            )
    if out.kind_name is not None and out.kind_name not in out.names:
        # the kind word went with a word that names nothing ("a bad node broke it"): the
        # subject found otherwise is not of that kind
        out.kind, out.kind_name = None, None
    return Grounding(out, notes, unresolved, focus)


def _ground_namespace(
    question: str,
    out: Subject,
    inv: Inventory,
    notes: list[str],
    unresolved: list[str],
) -> None:
    named = out.namespace
    if named and named in inv.namespaces:
        return
    cands = [c for c in namespace_candidates(question) if c in inv.namespaces]
    if not cands:
        # a known namespace written anywhere in the question ("... app-108 is slow"), unless
        # what the question asks about lives in one namespace, and not that one ("the
        # reports of app-a on the Billing source": app-a lives in its own, not in billing)
        words = _WORD.findall(question.lower())
        cands = [w for w in dict.fromkeys(words) if w in inv.namespaces and len(w) >= 3]
        cands = [c for c in cands if c not in _COMMON]
        homes = {h for n in out.names if (h := inv.home(n))}
        if homes and not homes & set(cands):
            cands = []  # the word names a namespace, not where the subject lives
    new = cands[0] if len(cands) == 1 or (cands and named is not None) else None
    if named is not None and named != new:
        if inv.has_object(named) and named not in out.names:
            out.names = [named, *out.names][:4]  # "api-service namespace app-108": a name
        msg = f"no namespace called '{named}' exists"
        if new:
            msg += f"; the question's namespace is '{new}'"
        else:
            msg += "; namespaces: " + ", ".join(sorted(inv.namespaces)[:8])
            unresolved.append(named)
        notes.append(msg)
    out.namespace = new if new else (None if named is not None else out.namespace)
    if named is None and new is not None:
        notes.append(f"the question names the namespace '{new}'")
    if new:
        out.names = [n for n in out.names if n != new]


# namespace names that are also everyday words: only an explicit phrase grounds them
_COMMON: Sequence[str] = ("default", "test", "prod", "production", "staging", "dev", "app")
