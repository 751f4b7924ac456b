"""Configuration: YAML file + ``OPSMATE_`` environment variables (``__`` between levels).

Found at ``--config``, ``OPSMATE_CONFIG``, or ``<user config dir>/config.yaml``.
Unknown keys are an error naming the key; so is a value out of range (a zero or
negative budget, time-out or page size) and an ``OPSMATE_`` variable that is not
valid JSON where a list or mapping is expected (the error names the variable). The
file must be a regular file of at most :data:`MAX_CONFIG_BYTES`, nested at most
:data:`MAX_CONFIG_DEPTH` levels. Credentials never live here: they come from the
keyring or environment variables (see :mod:`opsmate.credentials`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from opsmate import paths
from opsmate.errors import ConfigError

MAX_CONFIG_BYTES = 1 << 20  # a config file is a few kB; /dev/zero is not one
MAX_CONFIG_DEPTH = 32

# values that must be positive (a zero or negative budget or time-out is a mistake)
Seconds = Annotated[float, Field(gt=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PrometheusSource(_Strict):
    url: str
    timeout: Seconds = 15.0
    verify_tls: bool = True


class ElasticsearchSource(_Strict):
    url: str
    index: str = "logs-*"
    timeout: Seconds = 15.0
    verify_tls: bool = True
    # field names in the log documents
    time_field: str = "@timestamp"
    message_field: str = "message"
    service_field: str = "service"
    environment_field: str = "environment"
    level_field: str = "level"
    # optional keyword / numeric fields that log_stats aggregates server-side
    duration_fields: list[str] = Field(
        default_factory=lambda: ["duration_ms", "response_time_ms", "latency_ms", "elapsed_ms"]
    )
    status_field: str | None = None  # e.g. http.response.status_code
    endpoint_field: str | None = None  # e.g. url.path (a keyword field)
    template_field: str | None = None  # a keyword field holding a message template / event id


class LokiLabels(_Strict):
    """Which Loki stream label (or structured-metadata key) holds each record field; None:
    the field is not a label (it may still be in a JSON line)."""

    service: str = "app"
    namespace: str | None = "namespace"
    pod: str | None = "pod"
    container: str | None = "container"
    level: str | None = None  # None: the level is read from the JSON line (level_field)
    environment: str | None = None  # None: one Loki per environment, nothing to filter
    id: str | None = None  # a record id for log://<service>/<id> references


class LokiSource(_Strict):
    url: str
    timeout: Seconds = 15.0
    verify_tls: bool = True
    tenant: str | None = None  # sent as X-Scope-OrgID (multi-tenant Loki)
    labels: LokiLabels = Field(default_factory=LokiLabels)
    level_field: str = "level"  # the JSON field holding the level when labels.level is None
    max_lines: Count = 5000  # most lines one query_range may ask for (Loki's max_entries_limit)


class KubernetesSource(_Strict):
    context: str | None = None
    kubeconfig: str | None = None
    namespaces: list[str] = Field(default_factory=list)
    timeout: Seconds = 15.0


class AlertmanagerSource(_Strict):
    url: str
    timeout: Seconds = 15.0
    verify_tls: bool = True


class EnvironmentConfig(_Strict):
    prometheus: PrometheusSource | None = None
    elasticsearch: ElasticsearchSource | None = None
    loki: LokiSource | None = None  # a log source instead of elasticsearch
    kubernetes: KubernetesSource | None = None
    alertmanager: AlertmanagerSource | None = None

    @model_validator(mode="after")
    def _one_log_source(self) -> EnvironmentConfig:
        if self.elasticsearch is not None and self.loki is not None:
            raise ValueError(
                "both elasticsearch and loki are set; an environment has one log source"
            )
        return self


class EmbeddingConfig(_Strict):
    # onnx: all-MiniLM-L6-v2 from chromadb's cache; gguf: llama.cpp embedding model;
    # openai: any OpenAI-compatible /embeddings endpoint; none: BM25 only.
    backend: Literal["onnx", "gguf", "openai", "none"] = "onnx"
    model_path: str | None = None  # gguf file, or a folder with model.onnx + tokenizer.json
    url: str | None = None  # openai backend base URL
    model: str | None = None  # openai backend model name
    batch_size: Count = 32


class RetrievalConfig(_Strict):
    candidates: Count = 30  # top-N from each of BM25 and vectors
    rrf_k: Annotated[int, Field(ge=0)] = 60
    top_k: Count = 5
    bm25_backend: Literal["bm25s", "rank_bm25"] = "bm25s"
    # numpy: brute-force matrix per index generation (fast, no start-up cost);
    # chroma: chromadb PersistentClient collection in <index_dir>/chroma
    vector_backend: Literal["numpy", "chroma"] = "numpy"
    low_evidence_threshold: float | None = None  # None: the calibrated default
    # extra glossary files (term<TAB>expansions[<TAB>kind]) added to the built-in one
    glossary: list[str] = Field(default_factory=list)
    # rerank stage: features (no model; default) | none (fused order as is)
    rerank: Literal["features", "none"] = "features"
    rerank_depth: int = 30  # fused candidates the rerank stage re-scores
    # listwise rerank by a model (none | scripted:PATH | gguf:PATH | openai:URL#MODEL)
    rerank_model: str = "none"
    rerank_model_depth: int = 10  # candidates shown to the model
    rerank_model_timeout: float = 5.0  # seconds; past it the feature order is kept
    rerank_model_margin: float = 0.15  # the most the model's ranking adds to a feature score


_DOMAIN_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


class KnowledgeConfig(_Strict):
    """Where the runbook index lives and which team domains this user reads (``knowledge:``).

    ``embedded``: the index in ``index_dir`` (one machine). ``chroma-server``: a Chroma HTTP
    server shared by the team (``chroma run``), written by ``opsmate index --to URL`` in CI.
    ``elasticsearch``: one Elasticsearch index (BM25 + ``dense_vector`` kNN), for large
    organisations. ``domains``: the domains this user reads (None: every domain).
    """

    backend: Literal["embedded", "chroma-server", "elasticsearch"] = "embedded"
    url: str | None = None  # the shared server: http(s)://host:port
    collection: str = "opsmate-runbooks"  # chroma pointer collection / elasticsearch alias
    tenant: str = "default_tenant"  # chroma-server
    database: str = "default_database"  # chroma-server
    token_env: str | None = None  # variable holding a bearer token (chroma) / API key (ES)
    verify_tls: bool = True
    timeout: Seconds = 15.0
    # a reader re-reads the published pointer at most this often (0: before every query)
    refresh_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 30.0
    keep_generations: Annotated[int, Field(ge=2, le=20)] = 2  # kept on the server
    domains: list[str] | None = None  # None: every domain

    @model_validator(mode="after")
    def _check(self) -> KnowledgeConfig:
        if self.url is not None and not re.match(r"https?://[^/\s]+", self.url):
            raise ValueError(f"url must be an http(s) URL, not {self.url[:40]!r}")
        if not re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,40}[a-zA-Z0-9]", self.collection):
            raise ValueError(
                "collection must be 3-42 letters, digits, '.', '_' or '-', "
                f"starting and ending with a letter or digit, not {self.collection!r}"
            )
        if self.domains is not None:
            names = [str(d).strip().lower() for d in self.domains]
            if not names:
                raise ValueError("domains is empty: name at least one, or leave it unset")
            bad = [d for d in names if not _DOMAIN_RE.fullmatch(d)]
            if bad:
                raise ValueError(f"domain {bad[0]!r} is not a name (a-z, 0-9, '.', '_', '-')")
            self.domains = list(dict.fromkeys(names))
        return self


class LLMConfig(_Strict):
    n_ctx: Count = 8192
    n_threads: Count | None = None
    n_gpu_layers: int = 0
    max_answer_tokens: Count = 512
    temperature: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 0.0
    timeout: Seconds = 120.0


class BudgetConfig(_Strict):
    max_steps: Count = 12
    max_tokens: Count = 60_000
    timeout_seconds: Seconds = 300.0


class ToolsConfig(_Strict):
    timeout_seconds: Seconds = 20.0
    max_retries: Annotated[int, Field(ge=0)] = 2
    max_window_hours: Seconds = 6.0
    max_page_size: Count = 200
    result_token_budget: Count = 1500
    redact_patterns: list[str] = Field(default_factory=list)
    audit_log: str | None = None  # default: <user data dir>/audit.jsonl


class LogsConfig(_Strict):
    """Site-specific field names of structured log lines (JSON / logfmt), looked up before
    the built-in ones (opsmate.loganalysis.parse.LogFieldNames); units of duration fields."""

    level_fields: list[str] = Field(default_factory=list)
    message_fields: list[str] = Field(default_factory=list)
    error_fields: list[str] = Field(default_factory=list)
    logger_fields: list[str] = Field(default_factory=list)
    status_fields: list[str] = Field(default_factory=list)
    duration_fields: list[str] = Field(default_factory=list)
    duration_units: dict[str, Literal["ms", "s", "us", "ns"]] = Field(default_factory=dict)
    endpoint_fields: list[str] = Field(default_factory=list)
    method_fields: list[str] = Field(default_factory=list)
    trace_fields: list[str] = Field(default_factory=list)
    service_fields: list[str] = Field(default_factory=list)
    host_fields: list[str] = Field(default_factory=list)
    time_fields: list[str] = Field(default_factory=list)


class AlertingConfig(_Strict):
    """Alerts as the start of an investigation (``diagnose --alert``, ``watch``)."""

    # value of an alert's env / environment / cluster label -> configured environment name
    environments: dict[str, str] = Field(default_factory=dict)
    environment_labels: list[str] = Field(default_factory=lambda: ["env", "environment", "cluster"])
    # opsmate watch: refuse to start without a bearer token (keyring `watch`, or
    # OPSMATE_WATCH_TOKEN); requests without it are answered 401
    require_token: bool = False
    max_body_bytes: Count = 1 << 20
    queue_size: Count = 16  # firing groups waiting; a full queue answers 503
    workers: Count = 2  # investigations at once
    # an identical notification (same group, same alerts) within this many seconds of its
    # investigation is not investigated again
    dedupe_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 600.0


class HistoryConfig(_Strict):
    """The incident history: ``opsmate history`` and a report's ``seen_before``."""

    # watch and diagnose keep each report's incident (diagnose --demo never does)
    enabled: bool = True
    backend: Literal["sqlite"] = "sqlite"  # a shared backend joins here when configured
    path: str | None = None  # default: <user data dir>/history.sqlite3
    seen_before: Annotated[int, Field(ge=0, le=20)] = 3  # past incidents a report names
    seen_before_days: Seconds = 365.0  # how far back they are looked for


class SinkConfig(_Strict):
    """One place ``watch`` sends each report besides ``--out`` (``sinks:``)."""

    type: Literal["webhook", "slack"]  # webhook: the report JSON; slack: a chat message
    name: str | None = None  # in logs and metrics (default: type and position, slack1)
    url: str | None = None
    url_env: str | None = None  # an environment variable holding the URL (a secret)
    token_env: str | None = None  # an environment variable holding a bearer token
    report_url: str | None = None  # link to the full report: {json}, {md}, {name} filled in
    timeout: Seconds = 10.0
    attempts: Count = 5  # tries of one delivery before it is given up (and logged)
    backoff_seconds: Seconds = 1.0  # first wait between tries; doubles each time
    max_backoff_seconds: Seconds = 60.0
    verify_tls: bool = True

    @model_validator(mode="after")
    def _one_url(self) -> SinkConfig:
        if (self.url is None) == (self.url_env is None):
            raise ValueError("give exactly one of url and url_env")
        if self.url is not None and not re.match(r"https?://[^/\s]+", self.url):
            raise ValueError(f"url must be an http(s) URL, not {self.url[:40]!r}")
        return self


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
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    logs: LogsConfig = Field(default_factory=LogsConfig)
    alerting: AlertingConfig = Field(default_factory=AlertingConfig)
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    sinks: list[SinkConfig] = Field(default_factory=list)

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


def _env_var_for(loc: tuple[Any, ...]) -> str | None:
    """The set ``OPSMATE_`` variable a value at ``loc`` came from (the longest match)."""
    names = {k.upper() for k in os.environ if k.upper().startswith("OPSMATE_")}
    parts = [str(p).upper() for p in loc]
    for n in range(len(parts), 0, -1):
        name = "OPSMATE_" + "__".join(parts[:n])
        if name in names:
            return name
    return None


def _format_validation_error(exc: ValidationError, source: str) -> str:
    lines = []
    for err in exc.errors():
        where = _env_var_for(tuple(err.get("loc", ()))) or source
        loc = ".".join(str(p) for p in err.get("loc", ()))
        if err.get("type") == "extra_forbidden":
            lines.append(f"{where}: unknown key '{loc}'")
        else:
            lines.append(f"{where}: key '{loc}': {err.get('msg')}")
    return "\n".join(lines)


def _settings_error(exc: Exception) -> ConfigError:
    """An ``OPSMATE_`` variable pydantic-settings could not parse, named."""
    m = re.search(r'field "([^"]+)"', str(exc))
    field = m.group(1) if m else ""
    prefix = f"OPSMATE_{field.upper()}"
    names = sorted(
        k
        for k in os.environ
        if field and (k.upper() == prefix or k.upper().startswith(prefix + "__"))
    )
    why = exc.__cause__ or exc
    return ConfigError(
        f"{', '.join(names) or 'an OPSMATE_ variable'}: not a valid value for '{field or '?'}' "
        f"({why})",
        hint="lists and mappings are given as JSON, e.g. OPSMATE_RUNBOOKS='[\"~/runbooks\"]'",
    )


def _is_devnull(path: Path) -> bool:
    """Whether ``path`` is the null device (``/dev/null``, or a link to it)."""
    try:
        return os.path.samefile(path, os.devnull)
    except OSError:
        return False


def _read_config_file(cfg_path: Path) -> dict[str, Any]:
    """The mapping in the YAML file ``cfg_path`` (checked: a small regular file, bounded
    nesting, no alias bomb); ConfigError naming the file and line otherwise."""
    import yaml

    from opsmate.safeyaml import Limits, load_single

    if _is_devnull(cfg_path):
        return {}  # `--config /dev/null`: no file settings, as an empty file would be
    if not cfg_path.is_file():
        raise ConfigError(f"{cfg_path}: not a regular file (a config is a YAML file)")
    try:
        with cfg_path.open("rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{cfg_path}: larger than {MAX_CONFIG_BYTES >> 10} kB")
        text = raw.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{cfg_path}: cannot read: {exc}") from exc
    limits = Limits(max_depth=MAX_CONFIG_DEPTH, aliases=True, max_alias_items=10_000)
    try:
        loaded, _node = load_single(text, limits)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{cfg_path}:{mark.line + 1}" if mark is not None else str(cfg_path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: invalid YAML: {problem}") from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"{cfg_path}: the top level must be a mapping of keys")
    bad = [k for k in loaded if not isinstance(k, str)]
    if bad:
        raise ConfigError(f"{cfg_path}: unknown key {bad[0]!r} (keys are names)")
    return loaded


def load_settings(path: str | Path | None = None) -> Settings:
    """Load settings from YAML (if any) and ``OPSMATE_`` variables; raise ConfigError."""
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
            data = _read_config_file(cfg_path)
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(exc, source)) from exc
    except SettingsError as exc:
        raise _settings_error(exc) from exc
    except RecursionError as exc:  # the file is bounded above, so it is a variable
        deep = sorted(
            k
            for k, v in os.environ.items()
            if k.upper().startswith("OPSMATE_") and v.count("[") + v.count("{") > 100
        )
        raise ConfigError(
            f"{', '.join(deep) or 'an OPSMATE_ variable'}: nested too deeply to be a "
            "configuration value"
        ) from exc
