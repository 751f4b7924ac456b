"""Embedding backends for runbook search: ``onnx`` (MiniLM), ``gguf``, ``openai`` and ``none``.

Every backend returns L2-normalised float32 rows, so a dot product is the cosine.

- ``onnx``: all-MiniLM-L6-v2 as ONNX files in chromadb's model cache
  (``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/``, or ``embedding.model_path``).
  By default its per-channel int8 copy (:mod:`.quantize`), written once by the first
  ``opsmate index`` next to the float32 files (``.../all-MiniLM-L6-v2/onnx-int8/``, or
  in opsmate's cache dir when that folder is read-only): about twice as fast for chunks
  and queries, golden-set Recall@5 unchanged. Without the ``onnx`` package (needed to
  write it) the float32 files are used; ``embedding.model_path`` pointing at the
  float32 folder selects float32 explicitly. Search loads whichever model the index
  was built with (by its model id),
  run with ``tokenizers`` + ``onnxruntime`` using *dynamic* padding (a batch is padded to
  its longest member, not to 256 tokens), mean pooling over the attention mask and L2
  normalisation, one intra-op thread per run and up to two batches run at once (each
  batch on its own core, no per-operator hand-off between threads): the same vectors as
  chromadb's ``ONNXMiniLM_L6_V2``, 6-16x faster.
  When the files are absent and downloading is allowed (``opsmate index``), chromadb's own
  ``ONNXMiniLM_L6_V2`` fetches them into that cache once; a diagnosis never downloads.
- ``gguf``: an embedding model through llama-cpp-python (``Llama(embedding=True)``).
- ``openai``: any OpenAI-compatible ``POST {url}/embeddings`` endpoint (httpx).
- ``none``: no vectors; search is BM25 only and says so in its warnings.

Heavy libraries are imported when a backend is first built, never at module import.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from opsmate.errors import ModelError, SourceUnreachableError

if TYPE_CHECKING:
    from opsmate.config import EmbeddingConfig

MINILM_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # MiniLM's input limit in sentence-transformers (chromadb truncates there too)
BATCH_TOKENS = 1024  # padded tokens per ONNX batch
_ONNX_FILES = ("model.onnx", "tokenizer.json")


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; ``model_id`` names the vector space."""

    model_id: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


class EmbeddingUnavailable(ModelError):
    """The configured embedding model is not available locally (and may not be fetched)."""


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1e-12
    return np.ascontiguousarray(v / norms, dtype=np.float32)


def chroma_onnx_dir() -> Path:
    """Where chromadb keeps (and downloads) the MiniLM ONNX files for the current HOME."""
    return Path.home() / ".cache" / "chroma" / "onnx_models" / MINILM_NAME / "onnx"


def int8_onnx_dirs() -> list[Path]:
    """Where the int8 copy of the default model is kept, in order of preference: next to
    chromadb's float32 files, or opsmate's cache dir when that folder cannot be written."""
    from opsmate import paths

    return [
        chroma_onnx_dir().parent / "onnx-int8",
        paths.cache_dir() / "models" / f"{MINILM_NAME}-int8",
    ]


def _has_files(folder: Path) -> bool:
    return all((folder / f).is_file() for f in _ONNX_FILES)


def default_onnx_dir(*, quantize: bool = False) -> Path:
    """The default model's folder: its int8 copy when there is one (written now when
    ``quantize`` and the ``onnx`` package allow), else chromadb's float32 files."""
    for folder in int8_onnx_dirs():
        if _has_files(folder):
            return folder
    if quantize and _has_files(chroma_onnx_dir()):
        from opsmate.knowledge.quantize import ensure_int8

        written = ensure_int8(int8_onnx_dirs(), chroma_onnx_dir())
        if written is not None:
            return written
    return chroma_onnx_dir()


def onnx_model_dir(config: EmbeddingConfig | None = None, *, quantize: bool = False) -> Path:
    """The folder the ``onnx`` backend reads (``embedding.model_path``, else the default
    model: see :func:`default_onnx_dir`)."""
    if config is not None and config.model_path:
        return Path(config.model_path).expanduser()
    return default_onnx_dir(quantize=quantize)


def onnx_model_id(folder: Path) -> str:
    """The id of the vector space of the ONNX model in ``folder``.

    The id names the files, not where they are: chromadb's cache keeps them in
    ``all-MiniLM-L6-v2/onnx/``, so the same model gives the same id under any HOME; its
    int8 copy (``onnx-int8/``) is ``all-MiniLM-L6-v2-int8``.
    """
    if folder.name == "onnx":
        name = folder.parent.name
    elif folder.name == "onnx-int8":
        name = f"{folder.parent.name}-int8"
    else:
        name = folder.name
    return f"onnx:{name}:{(folder / 'model.onnx').stat().st_size}"


def onnx_folder_for(model_id: str) -> Path | None:
    """The folder of the default model (int8 copy or float32) whose id is ``model_id``."""
    for folder in [*int8_onnx_dirs(), chroma_onnx_dir()]:
        if _has_files(folder) and onnx_model_id(folder) == model_id:
            return folder
    return None


def onnx_available(config: EmbeddingConfig | None = None) -> bool:
    """True when the ONNX model files are on disk (no download needed)."""
    if config is not None and config.model_path:
        return _has_files(Path(config.model_path).expanduser())
    return _has_files(chroma_onnx_dir()) or any(_has_files(d) for d in int8_onnx_dirs())


class OnnxEmbedder:
    """MiniLM through onnxruntime with dynamic padding, mean pooling and L2 normalisation.

    ``threads``: how many batches run at once (each on one intra-op thread).
    """

    def __init__(self, folder: Path, *, batch_size: int = 32, threads: int = 2) -> None:
        from tokenizers import Tokenizer

        self.folder = folder
        self.batch_size = max(1, batch_size)
        self.dim = 384
        self.model_id = onnx_model_id(folder)
        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.no_padding()  # padded per batch in _forward, to the batch's longest
        self._tok = tok
        self._threads = threads
        self._session: Any = None  # loaded at the first embed (0.3 s): cache hits skip it

    def _load(self) -> Any:
        import onnxruntime as ort

        so = ort.SessionOptions()
        # one thread per run: batches run side by side instead (see ``embed``), and a
        # single query gains nothing from a second thread but waits for it on a busy
        # machine (golden queries: p50 6.5 ms with one, 8-10 ms with two)
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        # no busy-waiting between ops: on a loaded 2-core laptop spinning threads fight
        # the other work and triple the query latency (measured: p50 16 ms -> 4.5 ms)
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            str(self.folder / "model.onnx"), sess_options=so, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        return self._session

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` in batches of similar length, original order kept.

        A batch holds at most ``batch_size`` texts and :data:`BATCH_TOKENS` padded
        tokens: long chunks go four at a time (bigger batches of 256-token inputs cost
        more CPU per chunk: 23 ms at 1, 29 ms at 4, 42 ms at 32), queries many at once.
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        # one text (a query): ``encode`` skips the batch call's thread-pool hand-off
        enc = [self._tok.encode(texts[0])] if len(texts) == 1 else self._tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(enc[i].ids))
        batches: list[list[int]] = [[]]
        for i in order:  # ascending length: the newest member is the longest
            batch = batches[-1]
            if batch and (
                len(batch) >= self.batch_size or (len(batch) + 1) * len(enc[i].ids) > BATCH_TOKENS
            ):
                batches.append([])
            batches[-1].append(i)

        def run(batch: list[int]) -> np.ndarray:
            return self._forward([enc[j] for j in batch])

        if self._threads < 2 or len(batches) < 2:
            for batch in batches:
                out[batch] = run(batch)
            return out
        # onnxruntime releases the GIL in ``run``: ``threads`` batches run at once, one
        # core each (128 chunk texts: +25-40% chunks/s and -13% CPU against two intra-op
        # threads on one batch at a time; the same vectors)
        from concurrent.futures import ThreadPoolExecutor

        if self._session is None:
            self._load()  # once, before the workers start
        with ThreadPoolExecutor(max_workers=self._threads) as pool:
            for batch, vecs in zip(batches, pool.map(run, batches), strict=True):
                out[batch] = vecs
        return out

    def _forward(self, enc: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in enc)  # dynamic padding: to the longest in the batch
        ids = np.zeros((len(enc), width), dtype=np.int64)
        mask = np.zeros((len(enc), width), dtype=np.int64)
        for row, e in enumerate(enc):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        session = self._session or self._load()
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return _normalise(pooled)


class GgufEmbedder:
    """A GGUF embedding model run by llama-cpp-python (``Llama(embedding=True)``)."""

    def __init__(self, path: Path, *, batch_size: int = 32) -> None:
        if not path.is_file():
            raise ModelError(f"GGUF embedding model not found: {path}")
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ModelError(
                "the gguf embedding backend needs llama-cpp-python",
                hint="pip install 'opsmate[llm]' or set embedding.backend: onnx",
            ) from exc
        self._llm = Llama(model_path=str(path), embedding=True, n_ctx=512, verbose=False)
        self.batch_size = max(1, batch_size)
        self.model_id = f"gguf:{path.name}:{path.stat().st_size}"
        self.dim = int(self._llm.n_embd())

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows: list[Any] = []
        for start in range(0, len(texts), self.batch_size):
            rows.extend(self._llm.embed(texts[start : start + self.batch_size]))
        return _normalise(np.array(rows, dtype=np.float32))


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint (llama-server, Ollama, vLLM, ...)."""

    def __init__(self, url: str, model: str, *, batch_size: int = 32, timeout: float = 60.0):
        self.url = url.rstrip("/")
        self.model = model
        self.batch_size = max(1, batch_size)
        self.timeout = timeout
        self.model_id = f"openai:{self.url}#{model}"
        self.dim = 0  # known after the first call

    def embed(self, texts: list[str]) -> np.ndarray:
        import httpx

        rows: list[list[float]] = []
        headers = {"Content-Type": "application/json"}
        key = os.environ.get("OPSMATE_EMBEDDING_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        for start in range(0, len(texts), self.batch_size):
            body = {"model": self.model, "input": texts[start : start + self.batch_size]}
            try:
                resp = httpx.post(
                    f"{self.url}/embeddings", json=body, headers=headers, timeout=self.timeout
                )
            except httpx.HTTPError as exc:
                raise SourceUnreachableError(
                    f"embedding endpoint {self.url}/embeddings unreachable: {exc}"
                ) from exc
            if resp.status_code != 200:
                raise ModelError(
                    f"embedding endpoint {self.url}/embeddings answered HTTP "
                    f"{resp.status_code}: {resp.text[:200]}"
                )
            try:
                data = sorted(resp.json()["data"], key=lambda d: d.get("index", 0))
                rows.extend(d["embedding"] for d in data)
            except (KeyError, TypeError, ValueError) as exc:
                raise ModelError(f"embedding endpoint {self.url}: unexpected reply: {exc}") from exc
        if not rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = _normalise(np.array(rows, dtype=np.float32))
        self.dim = out.shape[1]
        return out


def _ensure_onnx_downloaded() -> None:
    """Let chromadb fetch MiniLM into its cache (only ``opsmate index`` allows this)."""
    try:
        from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

        ONNXMiniLM_L6_V2()._download_model_if_not_exists()
    except Exception as exc:  # network, disk, checksum
        raise EmbeddingUnavailable(
            f"the MiniLM embedding model is not in {chroma_onnx_dir()} and could not be "
            f"downloaded: {exc}",
            hint="copy the ONNX files there, or index with --embedding none (BM25 only)",
        ) from exc


def make_embedder(
    config: EmbeddingConfig,
    *,
    allow_download: bool = False,
    threads: int = 2,
    model_id: str | None = None,
) -> Embedder | None:
    """Build the configured backend; ``None`` for ``none``.

    ``threads`` is how many batches the ``onnx`` backend runs at once (a query is one
    batch, so it always runs on one thread). ``allow_download`` (indexing) also lets the
    default ``onnx`` model write its int8 copy. ``model_id``: the vector space an index
    was built in; the default ``onnx`` model then loads that one (int8 copy or float32).
    Raises EmbeddingUnavailable when the model is not available locally and
    ``allow_download`` is false (or the download fails).
    """
    backend = config.backend
    if backend == "none":
        return None
    if backend == "onnx":
        if not onnx_available(config):
            if config.model_path or not allow_download:
                raise EmbeddingUnavailable(
                    "MiniLM ONNX files (model.onnx, tokenizer.json) not found in "
                    f"{onnx_model_dir(config)}",
                    hint="run `opsmate index` once with network access, or use --embedding none",
                )
            _ensure_onnx_downloaded()
        folder = (None if config.model_path or not model_id else onnx_folder_for(model_id)) or (
            onnx_model_dir(config, quantize=allow_download)
        )
        return OnnxEmbedder(folder, batch_size=config.batch_size, threads=threads)
    if backend == "gguf":
        if not config.model_path:
            raise ModelError("embedding.backend gguf needs embedding.model_path (a .gguf file)")
        return GgufEmbedder(Path(config.model_path).expanduser(), batch_size=config.batch_size)
    if backend == "openai":
        if not config.url or not config.model:
            raise ModelError("embedding.backend openai needs embedding.url and embedding.model")
        return OpenAIEmbedder(config.url, config.model, batch_size=config.batch_size)
    raise ModelError(f"unknown embedding backend: {backend}")


def config_to_spec(config: EmbeddingConfig) -> str:
    """The embedding config as JSON, stored in the manifest so search uses the same model."""
    return json.dumps(config.model_dump(), sort_keys=True)


def spec_to_config(spec: str) -> EmbeddingConfig:
    from opsmate.config import EmbeddingConfig

    return EmbeddingConfig.model_validate(json.loads(spec))
