"""Embedding backends (real MiniLM, a local OpenAI-compatible server) and the cache."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from opsmate.config import EmbeddingConfig
from opsmate.errors import ModelError, SourceUnreachableError
from opsmate.knowledge.embedding_cache import EmbeddingCache, content_hash
from opsmate.knowledge.embeddings import (
    EmbeddingUnavailable,
    OnnxEmbedder,
    OpenAIEmbedder,
    chroma_onnx_dir,
    make_embedder,
)

TEXTS = [
    "PoolTimeout: QueuePool limit of size 20 overflow 0 reached",
    "Never restart Redis in prod; fail over with Sentinel instead.",
    "disk full",
    "订单服务数据库连接池耗尽",
]


@pytest.fixture(scope="module")
def minilm(session_home: Path) -> OnnxEmbedder:
    folder = session_home / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    return OnnxEmbedder(folder)


@pytest.mark.needs_minilm
def test_onnx_matches_chromadb_default_embedding(minilm: OnnxEmbedder) -> None:
    from chromadb.utils.embedding_functions import ONNXMiniLM_L6_V2

    reference = np.array(ONNXMiniLM_L6_V2()(TEXTS), dtype=np.float32)
    mine = minilm.embed(TEXTS)
    assert mine.shape == (4, 384)
    np.testing.assert_allclose(mine, reference, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(mine, axis=1), 1.0, atol=1e-5)


@pytest.mark.needs_minilm
def test_dynamic_padding_keeps_each_vector_and_the_order(minilm: OnnxEmbedder) -> None:
    batch = minilm.embed(TEXTS)
    for i, text in enumerate(TEXTS):
        np.testing.assert_allclose(minilm.embed([text])[0], batch[i], atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)
    assert minilm.model_id.startswith("onnx:all-MiniLM-L6-v2:")


@pytest.mark.needs_minilm
def test_make_embedder_backends(tmp_path: Path) -> None:
    assert make_embedder(EmbeddingConfig(backend="none")) is None
    assert chroma_onnx_dir().is_dir()  # seeded HOME
    assert isinstance(make_embedder(EmbeddingConfig()), OnnxEmbedder)
    empty = EmbeddingConfig(backend="onnx", model_path=str(tmp_path))
    with pytest.raises(EmbeddingUnavailable, match=str(tmp_path)):
        make_embedder(empty, allow_download=True)  # an explicit folder is never downloaded to
    with pytest.raises(ModelError, match="not found"):
        make_embedder(EmbeddingConfig(backend="gguf", model_path=str(tmp_path / "x.gguf")))
    with pytest.raises(ModelError, match="url"):
        make_embedder(EmbeddingConfig(backend="openai"))


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]] = []
    status = 200

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Handler.requests.append({"path": self.path, **body})
        if _Handler.status != 200:
            self.send_response(_Handler.status)
            self.end_headers()
            self.wfile.write(b"overloaded")
            return
        data = [
            {"index": i, "embedding": [float(len(t)), 1.0, 0.0]}
            for i, t in reversed(list(enumerate(body["input"])))  # out of order on purpose
        ]
        payload = json.dumps({"data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.requests = []
    _Handler.status = 200
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_openai_compatible_endpoint(server: str) -> None:
    emb = make_embedder(EmbeddingConfig(backend="openai", url=server, model="nomic", batch_size=2))
    assert isinstance(emb, OpenAIEmbedder)
    out = emb.embed(["a", "bbb", "cc"])
    assert out.shape == (3, 3) and emb.dim == 3
    expected = np.array([[1, 1, 0], [3, 1, 0], [2, 1, 0]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(out, expected, atol=1e-6)
    assert [r["input"] for r in _Handler.requests] == [["a", "bbb"], ["cc"]]
    assert {r["path"] for r in _Handler.requests} == {"/v1/embeddings"}
    assert {r["model"] for r in _Handler.requests} == {"nomic"}
    assert emb.model_id == f"openai:{server}#nomic"


def test_openai_errors_are_named(server: str) -> None:
    _Handler.status = 503
    with pytest.raises(ModelError, match="503"):
        OpenAIEmbedder(server, "m").embed(["x"])
    with pytest.raises(SourceUnreachableError, match="unreachable"):
        OpenAIEmbedder("http://127.0.0.1:9", "m", timeout=2).embed(["x"])


def test_cache_embeds_each_text_once_per_model(tmp_path: Path) -> None:
    calls: list[list[str]] = []

    def fake(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    cache = EmbeddingCache(tmp_path / "emb.sqlite3")
    mat, n = cache.embed_cached("m1", ["aa", "b", "aa"], fake)
    assert n == 2 and calls == [["aa", "b"]]
    assert mat is not None and mat.shape == (3, 2) and mat[0][0] == 2.0 and mat[2][0] == 2.0
    mat2, n2 = cache.embed_cached("m1", ["b", "aa", "ccc"], fake)
    assert n2 == 1 and calls[-1] == ["ccc"]
    assert mat2 is not None and list(mat2[:, 0]) == [1.0, 2.0, 3.0]
    _, n3 = cache.embed_cached("m2", ["b"], fake)  # another model: another vector space
    assert n3 == 1
    assert cache.embed_cached("m3", ["zzz"], None) == (None, 0)  # cache only: a miss
    assert set(cache.get_many("m1", [content_hash("aa"), content_hash("nope")])) == {
        content_hash("aa")
    }
    cache.close()
