"""Which workload a message means when it names software, not a host.

A client's error often names the product it talks to and no address ("Npgsql.PostgresException:
password authentication failed", "MongoServerError: Authentication failed"). The cluster says
which workload runs that product: the image of its containers (``bitnami/postgresql:16``,
``mongo:7``). Nothing here
knows a product: the words come from the images seen, and a message names a workload when
one of its words is an image's name (or the image's name begins it: ``postgres`` in
``PostgreSQL``, ``mongo`` in ``MongoDB``). Only an unambiguous answer counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from opsmate.agent.observe.depgraph import selects, workload_of
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.records.k8s import Pod

__all__ = ["backend_protocol", "image_word", "made_for", "runs_software", "software_target"]

_WORD = re.compile(r"[a-z][a-z0-9]*", re.I)
_MIN = 5  # shorter image names ("app", "api", "web", "db") name nothing reliably


def image_word(image: str | None) -> str | None:
    """``docker.io/bitnami/postgresql:16.2@sha256:..`` -> ``postgresql``; None for a name
    with a separator (``order-processor``: an application's own image, not a product) or
    shorter than five letters."""
    if not image:
        return None
    repo = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    if len(repo) < _MIN or not repo.isalnum() or not repo[0].isalpha():
        return None
    return repo


def _names(token: str, word: str) -> bool:
    return (
        token == word
        or (len(word) >= _MIN and token.startswith(word))
        or (len(token) >= _MIN + 2 and word.startswith(token))
    )


# what a client calls its dependency when it names no product ("error communicating with
# database", "cache unavailable"): the products that play that part, as images are named
ROLES: dict[str, tuple[str, ...]] = {
    "database": ("postgres", "postgresql", "mysql", "mariadb", "mongo", "mongodb", "percona",
                 "cockroach", "timescaledb", "postgis", "pgvector", "spilo", "yugabyte"),
    "cache": ("redis", "valkey", "memcached", "keydb", "dragonfly"),
    "broker": ("kafka", "rabbitmq", "nats", "pulsar", "activemq", "artemis", "redpanda"),
    "queue": ("kafka", "rabbitmq", "nats", "pulsar", "activemq", "artemis", "redpanda"),
}  # fmt: skip


def software_target(text: str, graph: ObjectGraph, *, own: str | None = None) -> str | None:
    """The Service (else the workload) whose pods run the software ``text`` names, when
    exactly one workload other than ``own`` does; else None. A message that names only the
    part its dependency plays (``database``, ``cache``, ``broker``) means the one workload in
    ``own``'s namespace that runs a product playing it."""
    tokens = {t.lower() for t in _WORD.findall(text or "")}
    if not tokens:
        return None
    hits = _running(graph, own, lambda word: any(_names(t, word) for t in tokens))
    if not hits:
        products = {p for t in tokens for p in ROLES.get(t, ())}
        if products:
            near = {p.namespace for p in graph.pods() if own and workload_of(p) == own.lower()}
            hits = {
                comp: pod
                for comp, pod in _running(
                    graph, own, lambda word: word in products, by_name=True
                ).items()
                if len(near) == 1 and pod.namespace in near
            }
    if len(hits) != 1:
        return None
    comp, pod = next(iter(hits.items()))
    for svc in graph.all("Service", pod.namespace):
        if selects(getattr(svc, "selector", None) or {}, pod.labels):
            return str(svc.name)
    return comp


def _running(
    graph: ObjectGraph, own: str | None, named: Callable[[str], bool], *, by_name: bool = False
) -> dict[str, Pod]:
    """Workloads other than ``own`` with a container whose image word ``named`` accepts
    (``by_name``: or whose container is named so — a ``postgres`` container of an image
    built on it)."""
    hits: dict[str, Pod] = {}
    for pod in graph.pods():
        comp = workload_of(pod)
        if own and comp == own.lower():
            continue
        for c in pod.containers:
            word = image_word(c.image)
            if (word and named(word)) or (by_name and c.name and named(c.name.lower())):
                hits.setdefault(comp, pod)
    return hits


def runs_software(
    products: tuple[str, ...], graph: ObjectGraph, *, near: str | None = None
) -> tuple[str, str] | None:
    """The one workload whose containers run one of ``products`` (an image named ``redis``,
    ``bitnami/redis``), as (workload, image); when several do, the one in namespace
    ``near``, if only one there. None when none or no single one."""
    hits: dict[str, tuple[str, str]] = {}
    for pod in graph.pods():
        for c in pod.containers:
            word = image_word(c.image)
            if word and any(_names(word, p) for p in products):
                hits.setdefault(workload_of(pod), (pod.namespace or "", str(c.image)))
    if len(hits) > 1 and near:
        hits = {w: v for w, v in hits.items() if v[0] == near}
    if len(hits) != 1:
        return None
    comp, (_, image) = next(iter(hits.items()))
    return comp, image


_TLS_VALUES = ("HTTPS", "GRPCS", "TRUE")


def backend_protocol(text: str, graph: ObjectGraph) -> str | None:
    """For a proxy's TLS handshake that failed on a plain-text answer: the Ingress whose
    annotation makes the controller speak TLS to its backends, as ``Ingress x
    (nginx.ingress.kubernetes.io/backend-protocol: HTTPS)`` — the one whose host the message
    names when several do; None when no Ingress read sets it."""
    setting = [
        ing
        for ing in graph.all("Ingress")
        if (ing.backend_protocol or "").rsplit(":", 1)[-1].strip().upper() in _TLS_VALUES
    ]
    low = (text or "").lower()
    named = [i for i in setting if any(r.host and r.host.lower() in low for r in i.rules)]
    pick = named or setting
    if len(pick) != 1:
        return None
    return f"Ingress {pick[0].name} ({pick[0].backend_protocol})"


# objects an operator makes for a purpose of its own, known by the label it sets on them
_MADE_FOR = (
    (
        "acme.cert-manager.io/http01-solver",
        "cert-manager's ACME HTTP-01 challenge solver: the certificate is issued or renewed "
        "only once the challenge is answered through it",
    ),
)


def made_for(labels: dict[str, str] | None) -> str | None:
    """What an operator made an object for, from the label it marks it with; else None."""
    for key, purpose in _MADE_FOR:
        if (labels or {}).get(key) not in (None, "", "false"):
            return purpose
    return None
