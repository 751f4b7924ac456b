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
    check_openai,
)

__all__ = [
    "check_index",
    "check_model",
    "source_checks",
    "start_model_probe",
    "start_source_probes",
]


def start_source_probes(settings: Settings) -> Probes:
    """Start probing every configured source at once (environments in config order, each
    environment's sources in registration order)."""
    from opsmate.tools.source import discover

    sources = [source for _package, source in discover().sources if source.probe is not None]
    probes = Probes()
    for env in settings.environments:
        for source in sources:
            block = source.block(settings, env)
            if block is not None and source.probe is not None:
                probes.start(f"{source.key}[{env}]", source.fix_for(env), source.probe, env, block)
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
