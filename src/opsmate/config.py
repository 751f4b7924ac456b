"""Configuration: YAML file + ``OPSMATE_`` environment variables (``__`` between levels).

Found at ``--config``, ``OPSMATE_CONFIG``, or ``<user config dir>/config.yaml``.
Unknown keys are an error naming the key. Credentials never live here: they come
from the keyring or environment variables (see :mod:`opsmate.credentials`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from opsmate import paths
from opsmate.errors import ConfigError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PrometheusSource(_Strict):
    url: str
    timeout: float = 15.0
    verify_tls: bool = True


class ElasticsearchSource(_Strict):
    url: str
    index: str = "logs-*"
    timeout: float = 15.0
    verify_tls: bool = True
    # field names in the log documents
    time_field: str = "@timestamp"
    message_field: str = "message"
    service_field: str = "service"
    environment_field: str = "environment"
    level_field: str = "level"


class KubernetesSource(_Strict):
    context: str | None = None
    kubeconfig: str | None = None
    namespaces: list[str] = Field(default_factory=list)
    timeout: float = 15.0


class EnvironmentConfig(_Strict):
    prometheus: PrometheusSource | None = None
    elasticsearch: ElasticsearchSource | None = None
    kubernetes: KubernetesSource | None = None


class EmbeddingConfig(_Strict):
    # onnx: all-MiniLM-L6-v2 from chromadb's cache; gguf: llama.cpp embedding model;
    # openai: any OpenAI-compatible /embeddings endpoint; none: BM25 only.
    backend: Literal["onnx", "gguf", "openai", "none"] = "onnx"
    model_path: str | None = None  # gguf file, or a folder with model.onnx + tokenizer.json
    url: str | None = None  # openai backend base URL
    model: str | None = None  # openai backend model name
    batch_size: int = 32


class RetrievalConfig(_Strict):
    candidates: int = 30  # top-N from each of BM25 and vectors
    rrf_k: int = 60
    top_k: int = 5
    bm25_backend: Literal["bm25s", "rank_bm25"] = "bm25s"
    # numpy: brute-force matrix per index generation (fast, no start-up cost);
    # chroma: chromadb PersistentClient collection in <index_dir>/chroma
    vector_backend: Literal["numpy", "chroma"] = "numpy"
    low_evidence_threshold: float | None = None  # None: the calibrated default


class LLMConfig(_Strict):
    n_ctx: int = 8192
    n_threads: int | None = None
    n_gpu_layers: int = 0
    max_answer_tokens: int = 512
    temperature: float = 0.0
    timeout: float = 120.0


class BudgetConfig(_Strict):
    max_steps: int = 12
    max_tokens: int = 60_000
    timeout_seconds: float = 300.0


class ToolsConfig(_Strict):
    timeout_seconds: float = 20.0
    max_retries: int = 2
    max_window_hours: float = 6.0
    max_page_size: int = 200
    result_token_budget: int = 1500
    redact_patterns: list[str] = Field(default_factory=list)
    audit_log: str | None = None  # default: <user data dir>/audit.jsonl


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="OPSMATE_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    model: str = "none"
    runbooks: list[str] = Field(default_factory=list)
    index_dir: str | None = None
    default_environment: str | None = None
    environments: dict[str, EnvironmentConfig] = Field(default_factory=dict)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # environment variables override the YAML file (passed as init kwargs)
        return (env_settings, init_settings)

    # -- derived paths -------------------------------------------------------
    def resolved_index_dir(self, override: str | Path | None = None) -> Path:
        if override:
            return Path(override).expanduser()
        if self.index_dir:
            return Path(self.index_dir).expanduser()
        return paths.default_index_dir()

    def runbook_paths(self) -> list[Path]:
        return [Path(p).expanduser() for p in self.runbooks]

    def environment(self, name: str | None) -> EnvironmentConfig | None:
        if name is None:
            return None
        return self.environments.get(name)


_NOT_SET = object()


def config_path(explicit: str | Path | None = None) -> tuple[Path | None, bool]:
    """The config file to read and whether the user named it explicitly."""
    if explicit:
        return Path(explicit).expanduser(), True
    env = os.environ.get("OPSMATE_CONFIG")
    if env:
        return Path(env).expanduser(), True
    default = paths.config_dir() / "config.yaml"
    return (default if default.exists() else None), False


def _format_validation_error(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err.get("loc", ()))
        if err.get("type") == "extra_forbidden":
            lines.append(f"{source}: unknown key '{loc}'")
        else:
            lines.append(f"{source}: key '{loc}': {err.get('msg')}")
    return "\n".join(lines)


def load_settings(path: str | Path | None = None) -> Settings:
    """Load settings from YAML (if any) and ``OPSMATE_`` variables; raise ConfigError."""
    import yaml

    cfg_path, explicit = config_path(path)
    data: dict[str, Any] = {}
    source = "environment"
    if cfg_path is not None:
        source = str(cfg_path)
        if not cfg_path.exists():
            if explicit:
                raise ConfigError(
                    f"config file not found: {cfg_path}",
                    hint="check --config / OPSMATE_CONFIG, or copy configs/example.yaml",
                )
        else:
            try:
                loaded = yaml.safe_load(cfg_path.read_text(encoding="utf-8"))
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f"{cfg_path}:{mark.line + 1}" if mark is not None else str(cfg_path)
                raise ConfigError(f"{where}: invalid YAML: {exc}") from exc
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{cfg_path}: cannot read: {exc}") from exc
            if loaded is None:
                loaded = {}
            if not isinstance(loaded, dict):
                raise ConfigError(f"{cfg_path}: the top level must be a mapping of keys")
            data = loaded
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, source)) from exc
