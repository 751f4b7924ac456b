"""The checks ``opsmate doctor`` and the TUI's health view share: every configured data
source probed concurrently, the model and the runbook index.

It sits below the faces (``commands``, ``tui``) and above the sources it probes, so the
TUI reads health without importing a command module. Each check is a
:class:`opsmate.health.Check`.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from opsmate.config import Settings
from opsmate.health import (
    Check,
    Probes,
    check_elasticsearch,
    check_kubernetes,
    check_openai,
    check_prometheus,
)

__all__ = [
    "check_index",
    "check_model",
    "source_checks",
    "start_model_probe",
    "start_source_probes",
]


def start_source_probes(settings: Settings) -> Probes:
    """Start probing every configured source at once (results in config order)."""
    probes = Probes()
    for env, cfg in settings.environments.items():
        if cfg.prometheus:
            p = cfg.prometheus
            fix = f"is it running and reachable? check environments.{env}.prometheus.url"
            probes.start(
                f"prometheus[{env}]", fix, check_prometheus, env, p.url, p.timeout, p.verify_tls
            )
        if cfg.elasticsearch:
            e = cfg.elasticsearch
            fix = f"is it running and reachable? check environments.{env}.elasticsearch.url"
            probes.start(
                f"elasticsearch[{env}]",
                fix,
                check_elasticsearch,
                env,
                e.url,
                e.timeout,
                e.verify_tls,
            )
        if cfg.loki:
            from opsmate.tools.loki.health import check_loki

            fix = f"is it running and reachable? check environments.{env}.loki.url"
            probes.start(f"loki[{env}]", fix, check_loki, env, cfg.loki)
        if cfg.kubernetes:
            k = cfg.kubernetes
            fix = f"is the cluster of environments.{env}.kubernetes reachable from here?"
            probes.start(
                f"kubernetes[{env}]",
                fix,
                check_kubernetes,
                env,
                k.context,
                k.kubeconfig,
                k.timeout,
            )
        if cfg.alertmanager:
            from opsmate.tools.alertmanager.health import check_alertmanager

            a = cfg.alertmanager
            fix = f"is it running and reachable? check environments.{env}.alertmanager.url"
            probes.start(
                f"alertmanager[{env}]", fix, check_alertmanager, env, a.url, a.timeout, a.verify_tls
            )
    return probes


def source_checks(settings: Settings) -> list[Check]:
    """Probe every configured source concurrently; results in config order."""
    return start_source_probes(settings).results()


def start_model_probe(settings: Settings) -> Probes | None:
    """Start probing an OpenAI-compatible model server (None for other model kinds)."""
    from opsmate.errors import ModelError
    from opsmate.llm.base import parse_model_spec

    try:
        spec = parse_model_spec(settings.model)
    except ModelError:
        return None  # check_model reports it
    if spec.kind != "openai":
        return None
    probes = Probes()
    fix = "start the server (llama-server, Ollama, vLLM) or fix the model URL"
    probes.start("model", fix, check_openai, spec.base_url or "", spec.model or "")
    return probes


def check_model(settings: Settings) -> Check:
    """The configured model: none, a file that exists (and its runtime), or a server."""
    from opsmate.errors import ModelError
    from opsmate.llm.base import parse_model_spec

    try:
        spec = parse_model_spec(settings.model)
    except ModelError as exc:
        return Check("model", "fail", exc.message, exc.hint or "fix the model key")
    if spec.kind == "none":
        return Check("model", "ok", "none: the deterministic engine (no LLM)")
    if spec.kind in ("scripted", "gguf"):
        assert spec.path is not None
        if not spec.path.is_file():
            return Check("model", "fail", f"{spec.kind} file not found: {spec.path}", "fix model")
        if spec.kind == "gguf" and importlib.util.find_spec("llama_cpp") is None:
            return Check(
                "model",
                "fail",
                "llama-cpp-python is not installed",
                'CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install llama-cpp-python',
            )
        return Check("model", "ok", f"{spec.kind}: {spec.path}")
    return check_openai(spec.base_url or "", spec.model or "")


def check_index(settings: Settings, index_dir: Path | None) -> Check:
    """The runbook index: present, readable, how many documents and chunks."""
    path = settings.resolved_index_dir(index_dir)
    if not path.exists() or not any(path.iterdir()):
        return Check("index", "warn", f"no runbook index at {path}", "run: opsmate index PATH")
    try:
        kindex = importlib.import_module("opsmate.knowledge.index")
    except ImportError:
        return Check("index", "ok", f"{path} exists (details not available in this build)")
    stats_fn = getattr(kindex, "index_stats", None)
    if stats_fn is None:
        return Check("index", "ok", f"{path} exists")
    try:
        stats = stats_fn(path)
    except Exception as exc:
        return Check("index", "fail", f"{path}: {exc}", "rebuild it: opsmate index PATH")
    get = stats.get if isinstance(stats, dict) else lambda k: getattr(stats, k, None)
    return Check("index", "ok", f"{path}: {get('documents')} documents, {get('chunks')} chunks")
