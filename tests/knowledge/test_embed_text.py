"""What the embedding model reads: Chinese translated in place; the optional int8 model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from opsmate.knowledge.analyzers import translate_cjk
from opsmate.knowledge.embeddings import OnnxEmbedder, chroma_onnx_dir
from opsmate.knowledge.store import embed_text, index_text


def test_chinese_runs_are_translated_in_place_and_english_is_unchanged() -> None:
    assert translate_cjk("节点磁盘满，Pod 被驱逐") == "node disk full Pod eviction evicted"
    assert translate_cjk("纯中文没有术语的句子") == ""
    english = "Restart the pod, then check `kubectl get pods`."
    assert translate_cjk(english) == english
    assert embed_text(["Redis", "Restart"], english) == index_text(["Redis", "Restart"], english)
    zh = embed_text(["节点磁盘满与 DiskPressure", "排查"], "kubelet 会驱逐 Pod")
    assert "DiskPressure" in zh and "kubelet" in zh and "evicted" in zh
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in zh)


@pytest.mark.needs_minilm
def test_int8_model_is_fast_and_close_to_float32(tmp_path: Path) -> None:
    """The opt-in per-channel int8 model (python -m opsmate.knowledge.quantize DIR)."""
    import onnx  # noqa: F401  (a dev dependency: writing the int8 model needs it)

    from opsmate.knowledge.quantize import main

    out = tmp_path / "minilm-int8"
    assert main([str(out)]) == 0
    assert {"model.onnx", "tokenizer.json"} <= {p.name for p in out.iterdir()}
    fp32, int8 = OnnxEmbedder(chroma_onnx_dir()), OnnxEmbedder(out)
    assert int8.model_id != fp32.model_id  # another vector space: the index re-embeds
    texts = ["Redis refuses new clients: max number of clients reached", "节点磁盘满", "x"]
    cos = (fp32.embed(texts) * int8.embed(texts)).sum(axis=1)
    assert np.all(cos > 0.97), cos
    assert main([str(tmp_path / "o2"), "--source", str(tmp_path / "nowhere")]) == 2
