"""Where an investigation looks: a bundle (replayed) or the configured live sources.

Builds the executor over the right registry, the runbook search (a bundle's own
runbooks first, then the configured index when one exists), and what intake needs
to know (service names, environments, the capture time and window).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from opsmate import paths
from opsmate.agent.plan.planner import Recorded
from opsmate.agent.runbooks.library import RunbookLibrary
from opsmate.capture.attach import attach_recorder
from opsmate.capture.recorder import Recorder
from opsmate.config import Settings
from opsmate.errors import BundleError, ConfigError, OpsmateError
from opsmate.knowledge.types import Retriever, SearchHit, SearchMode, SearchResponse
from opsmate.tools.base import Constraints
from opsmate.tools.executor import Executor
from opsmate.tools.redact import Redactor


@dataclass
class Sources:
    executor: Executor
    library: RunbookLibrary
    retriever: Retriever | None = None
    recorded: list[Recorded] | None = None
    namespace: str | None = None
    question: str | None = None
    environment: str | None = None
    window: tuple[datetime, datetime] | None = None
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    known_services: list[str] = field(default_factory=list)
    known_envs: list[str] = field(default_factory=list)
    bundle_path: str | None = None
    bundle_root: str | None = None  # the directory holding bundle.yaml (an archive's extraction)
    bundle_digest: str | None = None  # SHA-256 of that bundle.yaml: what the session is pinned to
    notes: list[str] = field(default_factory=list)
    recorder: Recorder | None = None  # what the tools read, for --save-bundle
    index_used: str = "none"  # which runbooks the investigation searches (report ``index``)
    # what exists, to ground the names a question carries (empty: unknown, nothing grounded)
    known_namespaces: list[str] = field(default_factory=list)
    known_objects: list[str] = field(default_factory=list)
    # object name -> the namespaces objects of that name live in (workloads and Services)
    object_namespaces: dict[str, list[str]] = field(default_factory=dict)
    # names that stand for other objects: an Ingress -> the Services it routes to
    ingress_backends: dict[str, list[str]] = field(default_factory=dict)
    # live: reads what exists (the fields above) for an environment within some seconds,
    # before intake
    inventory: Callable[[str | None, float], None] | None = None

    def describe(self) -> dict[str, Any]:
        """Where the session looks, as stored (and signed) in a saved session."""
        return {
            "bundle": self.bundle_path,
            "live": self.bundle_path is None,
            "bundle_digest": self.bundle_digest,
        }


class CombinedRetriever:
    """Searches several retrievers in order; earlier ones' hits come first (deduplicated)."""

    def __init__(self, parts: list[Retriever]) -> None:
        self.parts = parts

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        include_deprecated: bool = False,
    ) -> SearchResponse:
        hits: list[SearchHit] = []
        seen: set[tuple[str, str]] = set()
        low = True
        warnings: list[str] = []
        for part in self.parts:
            resp = part.search(
                query,
                top_k=top_k,
                mode=mode,
                filters=filters,
                include_deprecated=include_deprecated,
            )
            low = low and resp.low_evidence
            warnings += resp.warnings
            for h in resp.hits:
                key = (h.source, h.chunk_id)
                if key not in seen:
                    seen.add(key)
                    hits.append(h.model_copy(update={"rank": len(hits) + 1}))
        return SearchResponse(
            query=query,
            hits=hits[: max(top_k, 1) * len(self.parts)],
            low_evidence=low,
            mode=mode,
            warnings=warnings,
        )


def demo_bundle_path() -> Path:
    """The first built-in demo bundle (``<demo_dir>/01-*``)."""
    root = paths.demo_dir()
    found = sorted(p for p in root.glob("01-*") if p.is_dir()) if root.is_dir() else []
    if not found:
        raise BundleError(
            f"no demo bundle found in {root}",
            hint="reinstall opsmate; the demo ships with the package",
        )
    return found[0]


def configured_retriever(settings: Settings, index_dir: str | Path | None) -> Retriever | None:
    """The configured runbook index, or None when there is none yet."""
    folder = settings.resolved_index_dir(index_dir)
    shared = settings.knowledge.backend != "embedded"  # the index lives on a server
    if not shared and (not folder.is_dir() or not any(folder.iterdir())):
        return None
    try:
        from opsmate.knowledge.retrieve import open_retriever

        return open_retriever(Path(index_dir) if index_dir else None, settings)
    except OpsmateError:
        return None


def bundle_retriever(
    runbooks_dir: Path | None, settings: Settings, notes: list[str]
) -> Retriever | None:
    if runbooks_dir is None:
        return None
    try:
        from opsmate.knowledge.bundle_index import retriever_for_dir
    except ModuleNotFoundError as exc:
        notes.append(f"bundle runbook search is unavailable ({exc.name} missing)")
        return None
    try:
        return retriever_for_dir(runbooks_dir, settings)
    except OpsmateError as exc:
        notes.append(f"the bundle's runbooks could not be searched: {exc.message}")
        return None


def source_labeler(settings: Settings) -> Any:
    """``(source keys, environment) -> "Prometheus (test, http://host:9090)"``: how a
    source marked down is named (URL without credentials, from the config); the keys are
    :attr:`ToolSpec.source` (``elasticsearch,loki``: whichever the environment configures)."""

    def label(module: str, env: str | None) -> str:
        cfg = settings.environments.get(env) if env else None
        for attr in module.split(","):
            src = getattr(cfg, attr, None) if cfg is not None else None
            if src is None:
                continue
            name = {"elasticsearch": "Elasticsearch", "loki": "Loki"}.get(attr, attr.title())
            if attr == "kubernetes":  # its kubeconfig's context and API server
                from opsmate.tools.kubernetes import api_server

                return f"Kubernetes API ({env}, {api_server(src)})"  # no credentials in it
            where = getattr(src, "url", None) or "default"
            return f"{name} ({env}, {strip_credentials(str(where))})"
        return f"{module} ({env})" if env else module

    return label


def strip_credentials(url: str) -> str:
    """``http://user:pw@host:9090/x?token=..`` -> ``http://host:9090/x`` (no userinfo, query)."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("@")[-1]
    if not parts.scheme:
        return url.split("@")[-1]
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def open_sources(
    settings: Settings,
    *,
    bundle: str | Path | None = None,
    demo: bool = False,
    index_dir: str | Path | None = None,
    env: str | None = None,
) -> Sources:
    """Sources for a bundle / the demo, or the configured live sources.

    A bundle or the demo searches its own runbooks (none: the built-in set, when the
    package ships one), never the personal index unless ``index_dir`` names one, so a
    replay gives the same report on every machine. ``env`` other than the bundle's
    environment is a usage error before anything is called."""
    notes: list[str] = []
    redactor = Redactor(settings.tools.redact_patterns)
    if bundle is not None or demo:
        from opsmate.loganalysis.parse import configure as configure_log_fields
        from opsmate.tools.bundle import load_bundle
        from opsmate.tools.registry import ToolRegistry

        configure_log_fields(settings.logs)  # a site's own log field names, replay as live

        from opsmate.tools.bundle.load import check_bundle_environment

        path = Path(bundle) if bundle is not None else demo_bundle_path()
        b = load_bundle(path)
        check_bundle_environment(b.meta.environment, env)
        rb_dir = b.runbooks_dir or builtin_runbooks_dir()
        own = bundle_retriever(rb_dir, settings, notes)
        index = configured_retriever(settings, index_dir) if index_dir is not None else None
        parts = [r for r in (own, index) if r is not None]
        used = []
        if own is not None:
            used.append(
                "bundle runbooks" if b.runbooks_dir is not None else f"built-in runbooks {rb_dir}"
            )
        if index is not None:
            used.append(f"index {settings.resolved_index_dir(index_dir)}")
        retriever: Retriever | None = (
            parts[0] if len(parts) == 1 else (CombinedRetriever(parts) if parts else None)
        )
        registry = ToolRegistry(b.tool_specs(retriever=retriever))
        recorder = attach_recorder(registry, bundle=b)
        constraints = Constraints(
            environment=b.meta.environment,
            window_from=b.meta.window_from,
            window_to=b.meta.window_to,
        )
        executor = Executor(
            registry, constraints, config=settings.tools, now=b.meta.captured_at, redactor=redactor
        )
        executor.mark_down = False  # a replay has no network source to be down
        extra = settings.runbook_paths() if index_dir is not None else []
        roots = [r for r in [rb_dir, *extra] if r is not None]
        library = RunbookLibrary(roots)
        recorded: list[Recorded] = []
        for q in b.metrics:
            if all(r.query != q.query for r in recorded):
                recorded.append(Recorded(q.query, q.type, q.description or ""))
        return Sources(
            executor=executor,
            library=library,
            retriever=retriever,
            recorded=recorded,
            namespace=_single_namespace(b.objects),
            question=b.question,
            environment=b.meta.environment,
            window=(b.meta.window_from, b.meta.window_to),
            now=b.meta.captured_at,
            known_services=_services(b, library),
            known_envs=sorted({b.meta.environment, *settings.environments}),
            bundle_path=str(Path(b.source).resolve()),
            bundle_root=str(b.root),
            bundle_digest=_bundle_digest(b.root),
            notes=notes,
            known_namespaces=_namespaces(b.objects),
            known_objects=_object_names(b.objects),
            object_namespaces=_placement(b.objects),
            ingress_backends=_ingress_backends(b.objects),
            index_used="; ".join(used) or "none",
            recorder=recorder,
        )
    from opsmate.tools.registry import live_registry

    index = configured_retriever(settings, index_dir)
    registry = live_registry(settings, retriever=index)
    if not any(n != "search_runbooks" for n in registry.names()):
        raise ConfigError(
            "no live data sources are configured",
            hint="add environments (prometheus / elasticsearch / kubernetes) to the config, "
            "or investigate a bundle: opsmate diagnose --demo / --bundle PATH",
        )
    if index is None:
        notes.append(
            "no runbook index found; run `opsmate index` to let investigations use runbooks"
        )
    recorder = attach_recorder(registry)
    executor = Executor(registry, Constraints(), config=settings.tools, redactor=redactor)
    executor.source_label = source_labeler(settings)
    library = RunbookLibrary(settings.runbook_paths())
    services = sorted(library.services())
    live = Sources(
        executor=executor,
        library=library,
        retriever=index,
        known_services=services,
        known_envs=sorted(settings.environments),
        notes=notes,
        index_used=f"index {settings.resolved_index_dir(index_dir)}" if index else "none",
        recorder=recorder,
    )
    from opsmate.agent.session.inventory import live_inventory

    live.inventory = live_inventory(live)  # what exists, read when the first question comes
    return live


def bundle_digest(root: Path) -> str:
    """SHA-256 of the ``bundle.yaml`` a bundle was loaded from (what a session is pinned to)."""
    import hashlib

    h = hashlib.sha256()
    with (Path(root) / "bundle.yaml").open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _bundle_digest(root: Path) -> str | None:
    try:
        return bundle_digest(root)
    except OSError:
        return None


def builtin_runbooks_dir() -> Path | None:
    """The runbooks shipped with the package (``opsmate/data/runbooks``), when there are any."""
    folder = paths.demo_dir().parent / "runbooks"
    return folder if folder.is_dir() and any(folder.rglob("*.md")) else None


def _meta(o: Any) -> dict[str, Any]:
    """An object's metadata as a mapping (a malformed object gives an empty one)."""
    meta = o.get("metadata") if isinstance(o, dict) else None
    return meta if isinstance(meta, dict) else {}


def _single_namespace(objects: list[dict[str, Any]]) -> str | None:
    found = {
        str(_meta(o).get("namespace"))
        for o in objects
        if isinstance(o, dict)
        and o.get("kind") in ("Pod", "Deployment", "Service", "ReplicaSet", "StatefulSet", "Job")
        and isinstance(_meta(o).get("namespace"), str)
    }
    return next(iter(found)) if len(found) == 1 else None


def _namespaces(objects: list[Any]) -> list[str]:
    """Every namespace the bundle's objects live in (or are: kind Namespace)."""
    out: set[str] = set()
    for o in objects:
        meta = _meta(o)
        if (
            isinstance(o, dict)
            and o.get("kind") == "Namespace"
            and isinstance(meta.get("name"), str)
        ):
            out.add(meta["name"])
        if isinstance(meta.get("namespace"), str) and meta["namespace"]:
            out.add(meta["namespace"])
    return sorted(out)


def _ingress_backends(objects: list[Any]) -> dict[str, list[str]]:
    """Ingress name (lower-case) -> the Services its rules and default backend name."""
    out: dict[str, list[str]] = {}
    for o in objects:
        if not isinstance(o, dict) or o.get("kind") != "Ingress":
            continue
        name = _meta(o).get("name")
        spec: dict[str, Any] = o["spec"] if isinstance(o.get("spec"), dict) else {}
        backends: list[Any] = [spec.get("defaultBackend") or spec.get("backend")]
        for rule in spec.get("rules") or []:
            http = rule.get("http") if isinstance(rule, dict) else None
            paths = http.get("paths") if isinstance(http, dict) else None
            backends += [p.get("backend") for p in paths or [] if isinstance(p, dict)]
        svcs: list[str] = []
        for be in backends:
            if not isinstance(be, dict):
                continue
            svc = (
                (be.get("service") or {}).get("name")
                if isinstance(be.get("service"), dict)
                else None
            )
            svc = svc or be.get("serviceName")
            if isinstance(svc, str) and svc and svc not in svcs:
                svcs.append(svc)
        if isinstance(name, str) and name and svcs:
            out[name.lower()] = svcs
    return out


def _object_names(objects: list[Any]) -> list[str]:
    """The names of the bundle's objects (not Events), lower-case."""
    out: set[str] = set()
    for o in objects:
        if isinstance(o, dict) and o.get("kind") not in ("Event", None):
            name = _meta(o).get("name")
            if isinstance(name, str) and name:
                out.add(name.lower())
    return sorted(out)


_PLACED = ("Deployment", "StatefulSet", "DaemonSet", "Service", "CronJob", "Job")


def _placement(objects: list[Any]) -> dict[str, list[str]]:
    """Workload and Service names (lower-case) -> the namespaces they live in."""
    out: dict[str, set[str]] = {}
    for o in objects:
        if isinstance(o, dict) and o.get("kind") in _PLACED:
            meta = _meta(o)
            name, ns = meta.get("name"), meta.get("namespace")
            if isinstance(name, str) and name and isinstance(ns, str) and ns:
                out.setdefault(name.lower(), set()).add(ns)
    return {k: sorted(v) for k, v in out.items()}


def _services(b: Any, library: RunbookLibrary) -> list[str]:
    names: set[str] = set()
    names |= library.services()
    app_of: dict[str, set[str]] = {}  # app label -> the workloads and Services carrying it
    for o in b.objects:
        if not isinstance(o, dict):
            continue
        meta = _meta(o)
        kind_ok = o.get("kind") in ("Deployment", "StatefulSet", "Service", "DaemonSet")
        if kind_ok and isinstance(meta.get("name"), str) and meta["name"]:
            names.add(meta["name"])
        labels = meta.get("labels")
        if isinstance(labels, dict) and isinstance(labels.get("app"), str) and labels["app"]:
            owners = app_of.setdefault(labels["app"], set())
            if kind_ok and isinstance(meta.get("name"), str):
                owners.add(meta["name"])
    # an app label several workloads share names the application ("app: teastore" on every
    # TeaStore pod), not a service of it
    names |= {app for app, owners in app_of.items() if len(owners - {app}) <= 1}
    for rec in b.logs[:5000]:
        svc = rec.get("service")
        if isinstance(svc, str) and svc:
            names.add(svc)
    return sorted(names)
