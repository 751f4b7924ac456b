"""The dependency graph of the system under investigation, built from what the data shows.

Nodes are *components*: a workload (the Deployment / StatefulSet / DaemonSet / Job its
pods belong to, named as Kubernetes names it), an external host, and the objects a
workload stands on (``PersistentVolumeClaim/x``, ``ServiceAccount/x``, ``Node/x``,
``Ingress/x``). Edges say "A depends on B" and carry how we know (``via``) and the
evidence ids that show it:

- a container's env values, command and args that name a host, a ``host:port`` or a URL
  (``*_HOST``, ``*_ADDR``, ``*_URL``, ``mongodb://user@db:27017``), resolved through the
  Services that exist (selector -> pods -> their workload) or pod / cluster IPs;
- error facts of a component that name a host, a Service or an IP it failed to reach;
- metric series whose labels name a caller and a callee (``source_workload`` /
  ``destination_service_name``, ``client`` / ``server``);
- an Ingress's backends; a pod's claims, ServiceAccount and node.

Nothing here knows an application: only Kubernetes shapes, address shapes and label
names. Pure functions over the object graph and the facts; cheap enough to rebuild
after every result.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.graph import ObjectGraph
from opsmate.loganalysis.signals import (
    ADDRESS_SETTING,
    NOT_A_HOST,
    SERVICE_NAME_SETTINGS,
    SOURCE_FILE,
    class_lines,
)
from opsmate.records.k8s import Container, Pod, Volume

# an object store's URI names a bucket, not a host (s3://bucket/prefix, gs://, abfss://)
_BUCKET_SCHEMES = r"(?:s3[an]?|gs|gcs|az|azure|abfss?|wasbs?|oss|cos|file)://"
_URL = re.compile(
    rf"\b(?!{_BUCKET_SCHEMES})[a-z][a-z0-9+.-]*://(?:[^@/\s\"']+@)?([a-z0-9][a-z0-9.-]*)(?::(\d+))?",
    re.I,
)
_K8S_TARGET = re.compile(r"\bk8s://([a-z0-9][a-z0-9-]*)/([a-z0-9][a-z0-9-]*)(?::(\d+))?", re.I)
_HOSTPORT = re.compile(r"(?<![\w./@-])([a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*):(\d{2,5})\b", re.I)
_IPPORT = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{2,5}))?(?![\d.])")
_CONN_KEY = re.compile(
    r"(?:^|;)\s*(?:server|host|data source|address|addr|hostname)\s*=\s*"
    r"((?:tcp:)?[a-z][a-z0-9.-]*)(?:[,:](\d{2,5}))?\s*(?=;|$)",
    re.I,
)
_HASH = re.compile(r"-[a-z0-9]{6,10}$")
_POD_HASH = re.compile(r"-[a-z0-9]{8,10}-[a-z0-9]{5}$")
_CALLER_LABELS = (
    "source_workload",
    "source_app",
    "source_service",
    "source",
    "client",
    "caller",
    "job",
)
_CALLEE_LABELS = (
    "destination_workload",
    "destination_service_name",
    "destination_app",
    "destination_service",
    "destination",
    "server",
    "callee",
    "peer_service",
    "upstream",
    "target_service",
    "grpc_service",
)
_LOCAL = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "::", "*", "+"}  # and listen addresses
# "read.lua:64", "main.go:37": a source line in a log prefix, not a host


@dataclass(frozen=True)
class DepEdge:
    """``src`` depends on ``dst``; ``via`` says how the data shows it."""

    src: str
    dst: str
    via: str
    evidence: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {"from": self.src, "to": self.dst, "via": self.via, "evidence": list(self.evidence)}


@dataclass
class DependencyGraph:
    edges: list[DepEdge] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)  # any name / IP -> component
    # port -> (namespace, component) of what listens on it (container ports, Service ports)
    ports: dict[str, set[tuple[str, str]]] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)  # component -> its namespace

    def add(self, src: str, dst: str, via: str, evidence: Iterable[str] = ()) -> None:
        if not src or not dst or src == dst:
            return
        ev = tuple(dict.fromkeys(e for e in evidence if e))
        for i, e in enumerate(self.edges):
            if e.src == src and e.dst == dst:
                if not set(ev) <= set(e.evidence):
                    self.edges[i] = DepEdge(
                        src, dst, e.via, tuple(dict.fromkeys([*e.evidence, *ev]))
                    )
                return
        self.edges.append(DepEdge(src, dst, via, ev))

    def component(self, name: str | None) -> str | None:
        """The component ``name`` (a pod, Service, host, IP, workload) belongs to."""
        if not name:
            return None
        low = name.lower().strip()
        if low in self.aliases:
            return self.aliases[low]
        for cut in (_POD_HASH, _HASH):
            base = cut.sub("", low)
            if base != low and base in self.aliases:
                return self.aliases[base]
        return None

    def resolve(self, host: str) -> str | None:
        """The component an address names (``scheme://user@host:port/path``, ``ipv4:IP:port``,
        a Service's DNS forms), or None."""
        h = host.lower().strip().split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1]
        h = h.removeprefix("ipv4:").removeprefix("dns:///").strip("[]")
        m = _IPPORT.fullmatch(h)
        h = m.group(1) if m else re.sub(r":\d+$", "", h)
        return (
            self.component(h)
            or (self.aliases.get(h.split(".")[0]) if "." in h and _svc_like(h) else None)
            or self._by_prefix(h)
        )

    def serving(self, port: str | None, src: str) -> str | None:
        """The one component in ``src``'s namespace, other than ``src``, that listens on
        ``port`` — what a call to an address nothing resolves (a cluster IP the bundle lacks,
        a name in a hidden setting) reached, when only one thing could answer there."""
        if not port:
            return None
        ns = self.namespaces.get(src)
        found = {c for n, c in self.ports.get(port, set()) if c != src and (ns is None or n == ns)}
        return next(iter(found)) if len(found) == 1 else None

    def _by_prefix(self, name: str) -> str | None:
        """A client's name for a component it extends with a role (``post-storage-client``,
        ``orders-db-pool``): the longest known name it starts with, followed by ``-``."""
        if "-" not in name or "." in name or ":" in name or name[:1].isdigit():
            return None
        best = max(
            (k for k in self.aliases if len(k) >= 4 and name.startswith(k + "-")),
            key=len,
            default=None,
        )
        return self.aliases[best] if best is not None else None

    def depends_on(self, src: str) -> list[DepEdge]:
        return [e for e in self.edges if e.src == src]

    def callers_of(self, dst: str) -> list[DepEdge]:
        return [e for e in self.edges if e.dst == dst]

    def reachable(self, src: str, max_depth: int = 4) -> dict[str, int]:
        """Components ``src`` depends on, directly or not, with their depth (1 = direct)."""
        out: dict[str, int] = {}
        todo: deque[tuple[str, int]] = deque([(src, 0)])
        while todo:
            node, d = todo.popleft()
            if d >= max_depth:
                continue
            for e in self.depends_on(node):
                if e.dst not in out and e.dst != src:
                    out[e.dst] = d + 1
                    todo.append((e.dst, d + 1))
        return out

    def path(self, src: str, dst: str, max_depth: int = 5) -> list[DepEdge]:
        """The shortest chain of edges from ``src`` to ``dst`` (empty when none)."""
        prev: dict[str, DepEdge] = {}
        todo: deque[tuple[str, int]] = deque([(src, 0)])
        seen = {src}
        while todo:
            node, d = todo.popleft()
            if node == dst:
                break
            if d >= max_depth:
                continue
            for e in self.depends_on(node):
                if e.dst not in seen:
                    seen.add(e.dst)
                    prev[e.dst] = e
                    todo.append((e.dst, d + 1))
        if dst not in prev:
            return []
        out: list[DepEdge] = []
        node = dst
        while node != src and node in prev:
            out.append(prev[node])
            node = prev[node].src
        return list(reversed(out))

    def to_json(self) -> list[dict[str, object]]:
        return [e.to_json() for e in self.edges]


def replicaset_workload(name: str) -> str:
    """``web-5d9f8c7b6`` -> ``web``: a ReplicaSet's name without its pod-template hash."""
    return _HASH.sub("", name)


def owner_workload(pod: Pod) -> str | None:
    """The workload that owns ``pod`` (a ReplicaSet's hash cut off), or None."""
    owner = pod.owner or ""
    if "/" in owner:
        kind, name = owner.split("/", 1)
        if kind == "ReplicaSet":
            return replicaset_workload(name).lower()
        if kind in ("StatefulSet", "DaemonSet", "Job", "Deployment", "CronJob"):
            return name.lower()
    return None


def workload_of(pod: Pod) -> str:
    """The workload a pod belongs to: its owner with a ReplicaSet's hash cut off, else its
    ``app`` label, else its name without the generated suffix."""
    owned = owner_workload(pod)
    if owned:
        return owned
    for key in ("app.kubernetes.io/name", "app", "k8s-app", "name"):
        if pod.labels.get(key):
            return pod.labels[key].lower()
    name = (pod.name or "").lower()
    return _POD_HASH.sub("", name) or name


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Whether a (non-empty) equality selector matches ``labels``."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


_ENV_REF = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_BARE_HOST = re.compile(r"\s*[a-z0-9][a-z0-9.-]*[a-z0-9]\s*$", re.I)


def expand_env(value: str, env: dict[str, str]) -> str:
    """``$(NAME)`` references expanded from the container's own env, as the kubelet does
    (``http://$(COLLECTOR):4317``); an unknown reference stays as written."""
    if "$(" not in value:
        return value
    return _ENV_REF.sub(lambda m: env.get(m.group(1), m.group(0)), value)


def hosts_in(text: str) -> list[tuple[str, str | None]]:
    """``(host, port)`` pairs a value names: URLs, ``host:port`` and IPs."""
    out: list[tuple[str, str | None]] = []
    for m in _K8S_TARGET.finditer(text):  # go-zero's k8s://<namespace>/<service>:<port>
        out.append((f"{m.group(2).lower()}.{m.group(1).lower()}", m.group(3)))
    text = _K8S_TARGET.sub(" ", text)
    for m in _URL.finditer(text):
        out.append((m.group(1).lower(), m.group(2)))
    for m in _HOSTPORT.finditer(text):
        pair = (m.group(1).lower(), m.group(2))
        if not any(pair[0] == h for h, _ in out):
            out.append(pair)
    for m in _IPPORT.finditer(text):
        if not any(m.group(1) == h for h, _ in out):
            out.append((m.group(1), m.group(2)))
    for m in _CONN_KEY.finditer(text):  # "Server=db,1433;Database=x" (ADO.NET, JDBC props)
        host = m.group(1).lower().removeprefix("tcp:")
        if not any(host == h for h, _ in out):
            out.append((host, m.group(2)))
    classes = class_lines(text)
    return [
        (h, p) for h, p in out if h not in _LOCAL and not SOURCE_FILE.search(h) and h not in classes
    ]


_NAME_LABELS = ("app", "app.kubernetes.io/name", "app.kubernetes.io/component", "component")
_GENERIC_NAMES = frozenset(
    {"server", "worker", "proxy", "sidecar", "backend", "frontend", "controller", "manager",
     "exporter", "metrics", "istio-proxy", "linkerd-proxy", "envoy", "daprd", "init"}
)  # fmt: skip


def build(graph: ObjectGraph, facts: Iterable[Fact] = ()) -> DependencyGraph:
    """The dependency graph the object graph and the facts show (see module doc)."""
    dg = DependencyGraph()
    pods = graph.pods()
    services = graph.all("Service")
    # components and their aliases: workloads, pods, pod IPs, Services (by selector)
    for p in pods:
        comp = workload_of(p)
        dg.aliases.setdefault(comp, comp)
        dg.namespaces.setdefault(comp, p.namespace or "")
        for c in p.containers:
            for spec in c.ports:
                num = spec.split("/", 1)[0].rsplit(":", 1)[-1]
                if num.isdigit():
                    dg.ports.setdefault(num, set()).add((p.namespace or "", comp))
        if p.name:
            dg.aliases[p.name.lower()] = comp
        if p.ip:
            dg.aliases[p.ip] = comp
    for kind in ("Deployment", "StatefulSet", "DaemonSet"):
        for w in graph.all(kind):
            name = str(getattr(w, "name", "") or "").lower()
            if name:
                dg.aliases.setdefault(name, name)
    for s in services:
        name = (s.name or "").lower()
        if not name:
            continue
        backing = [workload_of(p) for p in pods if selects(s.selector, p.labels)]
        comp = (
            max(sorted(set(backing)), key=backing.count) if backing else dg.aliases.get(name, name)
        )
        dg.aliases[name] = comp
        eid = graph.source_of("Service", s.namespace, s.name or "") or ""
        for other in sorted(set(backing) - {comp}):
            # one Service in front of several workloads (a database's racks, a canary): a
            # call to it depends on every one of them
            dg.add(comp, other, f"Service {name} routes to it too", [eid])
        if s.namespace:
            for suffix in (
                f".{s.namespace}",
                f".{s.namespace}.svc",
                f".{s.namespace}.svc.cluster.local",
            ):
                dg.aliases[name + suffix] = comp
        if s.cluster_ip and s.cluster_ip not in ("None", ""):
            dg.aliases[s.cluster_ip] = comp
        if backing:
            for sp in s.ports:
                if sp.port:
                    dg.ports.setdefault(str(sp.port), set()).add((s.namespace or "", comp))
    for ep in graph.all("Endpoints"):
        owner = dg.aliases.get((ep.service or ep.name or "").lower())
        for a in [*ep.ready, *ep.not_ready]:
            if owner and a.ip:
                dg.aliases.setdefault(a.ip, owner)

    # the names logs use for a workload: its container name, its app label (``columnstore``
    # for the pods of ``chi-metrics-store-0-0``), when only one workload has it
    used: dict[str, set[str]] = {}
    for p in pods:
        labels = p.labels or {}
        for n in [*(c.name for c in p.containers), *(labels.get(k) for k in _NAME_LABELS)]:
            if n and len(n) >= 5 and n.lower() not in _GENERIC_NAMES:
                used.setdefault(n.lower(), set()).add(workload_of(p))
    running = {workload_of(p) for p in pods}
    for n, comps in used.items():
        # a name taken only by a workload record without pods (a rollout read by that name)
        free = n not in dg.aliases or (dg.aliases[n] == n and n not in running)
        if len(comps) == 1 and free:
            dg.aliases[n] = next(iter(comps))

    # a public host name an Ingress of the cluster serves: a call to it goes to the backend
    # (one Service for every path of that host) through the ingress controller
    by_host: dict[str, set[str]] = {}
    for ing in graph.all("Ingress"):
        for rule in ing.rules:
            if rule.host and rule.service:
                by_host.setdefault(rule.host.lower(), set()).add(rule.service.lower())
    for host, svcs in by_host.items():
        if len(svcs) == 1 and host not in dg.aliases:
            svc = next(iter(svcs))
            dg.aliases[host] = dg.aliases.get(svc, svc)

    # env values, command and args that name addresses
    for p in pods:
        comp = workload_of(p)
        eid = graph.source_of("Pod", p.namespace, p.name or "") or ""
        for c in p.all_containers():
            values = {e.name: e.value for e in c.env if e.name and e.value is not None}
            for env in c.env:
                val = expand_env(env.value or "", values)
                if not val or env.value_hidden:
                    continue
                named = [h for h, _ in hosts_in(val)]
                if (
                    not named
                    and env.name
                    and ADDRESS_SETTING.search(env.name)
                    and env.name.upper() not in SERVICE_NAME_SETTINGS
                    and _BARE_HOST.match(val)
                    and val.strip().lower() not in NOT_A_HOST
                ):
                    named = [val.strip().lower()]
                for h in named:
                    dst = dg.resolve(h) or (f"host/{h}" if "." in h or ":" in val else None)
                    if dst:
                        dg.add(comp, dst, f"env {env.name}={val[:80]}", [eid])
            # settings read from a ConfigMap (envFrom, valueFrom) that name an address
            mounted = [v for v in p.volumes if v.name in {m.name for m in c.mounts}]
            for setting, val in _from_config_maps(graph, p.namespace, c, mounted):
                for h in [h for h, _ in hosts_in(val)] or [val.strip().lower()]:
                    dst = dg.resolve(h) or (f"host/{h}" if "." in h else None)
                    if dst:
                        dg.add(comp, dst, f"ConfigMap setting {setting}={val[:80]}", [eid])
            for arg in [*c.command, *c.args]:
                for h, _ in hosts_in(arg):
                    dst = dg.resolve(h)
                    if dst:
                        dg.add(comp, dst, f"argument {arg[:80]}", [eid])
        for v in p.volumes:
            if v.type == "persistentVolumeClaim" and v.ref_name:
                dg.add(comp, f"PersistentVolumeClaim/{v.ref_name}", f"volume {v.name}", [eid])
        if p.service_account and p.service_account != "default":
            dg.add(comp, f"ServiceAccount/{p.service_account}", "serviceAccountName", [eid])
    for ing in graph.all("Ingress"):
        eid = graph.source_of("Ingress", ing.namespace, ing.name or "") or ""
        for svc in ing.services():
            dst = dg.aliases.get(svc.lower(), svc.lower())
            dg.add(f"Ingress/{ing.name}", dst, f"backend Service {svc}", [eid])
    # what facts show: a component's failing calls, metric series naming caller and callee
    for f in facts:
        _from_fact(dg, f)
    return dg


def _from_config_maps(
    graph: ObjectGraph, namespace: str | None, c: Container, volumes: Iterable[Volume] = ()
) -> list[tuple[str, str]]:
    """The address settings a container reads from ConfigMaps that were read: every one of
    an ``envFrom`` source, the key a ``valueFrom`` names, those of the config files a
    ConfigMap volume mounts."""
    out: list[tuple[str, str]] = []
    for vol in volumes:
        if vol.type != "configMap" or not vol.ref_name:
            continue
        cm = graph.get("ConfigMap", namespace, vol.ref_name)
        out += list((getattr(cm, "addresses", None) or {}).items())
    for ef in c.env_from:
        if (ef.source or "").lower() != "configmap" or not ef.name:
            continue
        cm = graph.get("ConfigMap", namespace, ef.name)
        for k, val in (getattr(cm, "addresses", None) or {}).items():
            out.append((f"{ef.prefix or ''}{k}", val))
    for env in c.env:
        if (env.source or "") != "configmap" or not env.ref_name or not env.ref_key:
            continue
        cm = graph.get("ConfigMap", namespace, env.ref_name)
        val = (getattr(cm, "addresses", None) or {}).get(env.ref_key)
        if val:
            out.append((env.name or env.ref_key, str(val)))
    return out


def _svc_like(host: str) -> bool:
    parts = host.split(".")
    return len(parts) == 2 or (len(parts) >= 3 and parts[2] == "svc")


def fact_component(dg: DependencyGraph, f: Fact) -> str | None:
    """The component a fact is about (its subject, else its service)."""
    names = []
    if f.subject is not None and f.subject.kind not in ("host",):
        names.append(f.subject.name)
    if f.service:
        names.append(f.service)
    for n in names:
        comp = dg.component(n)
        if comp:
            return comp
    # a log template's writers (its records' pods), when the name it goes by is none of the
    # workload's (a "postgres" service field on the pods of a database StatefulSet)
    streams = f.detail.get("streams")
    if isinstance(streams, list) and streams:
        comps = {dg.component(str(s)) for s in streams}
        if len(comps) == 1:
            return comps.pop()
    return None


def _from_fact(dg: DependencyGraph, f: Fact) -> None:
    from opsmate.agent.observe.facts import FactKind as K

    labels = f.detail.get("labels") if isinstance(f.detail.get("labels"), dict) else None
    if labels:
        src = next((str(labels[k]) for k in _CALLER_LABELS if labels.get(k)), None)
        dst = next((str(labels[k]) for k in _CALLEE_LABELS if labels.get(k)), None)
        if src and dst and src.lower() not in ("unknown", "") and dst.lower() not in ("unknown",):
            a = dg.component(src) or src.lower()
            last = dst.rsplit(".", 1)[-1].lower()  # a gRPC service: package.Name
            b = dg.component(dst) or dg.component(dst.split(".")[0]) or dg.component(last)
            b = b or dst.lower()
            dg.add(a, b, "metric labels", f.evidence)
    if f.kind not in (K.DEPENDENCY_FAILURE, K.LOG_ERROR, K.LAST_WORDS, K.CONFIG_ERROR):
        return
    src_comp = fact_component(dg, f)
    if not src_comp:
        return
    targets: list[tuple[str, str | None]] = [
        (o.name, None) for o in f.objects if o.kind in ("host", "Service", "app")
    ]
    text = f"{f.quote or ''} {f.message or ''}"
    targets += hosts_in(text)
    for t, port in targets:
        dst = dg.resolve(t)
        via = f"its errors name {t}"
        if dst is None and f.kind == K.DEPENDENCY_FAILURE and _IPPORT.fullmatch(t):
            # an address no object of the bundle has: what listens on its port
            dst = dg.serving(port, src_comp)
            via = f"its errors name {t}:{port}, and only {dst} listens on port {port} there"
        if dst and dst != src_comp:
            dg.add(src_comp, dst, via, f.evidence)
