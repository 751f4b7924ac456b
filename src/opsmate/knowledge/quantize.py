"""An int8 copy of the MiniLM embedding model, for indexing at about twice the speed.

MiniLM in float32 is compute-bound on a laptop CPU: a runbook chunk of ~150 word
pieces costs ~26 ms of CPU, so two cores embed at most ~75 chunks/s however the
batches are built. Dynamic int8 quantization with *per-channel* weight scales
(``onnxruntime.quantization.quantize_dynamic``) costs ~15 ms per chunk and keeps the
vectors within cosine 0.99 of the float32 ones; on the golden set retrieval quality
is unchanged (``benchmarks/bench_index_throughput.py`` measures both). Per-tensor
scales are as fast but drift to cosine ~0.95 and lose paraphrase recall.

It is the default ``onnx`` model: the first ``opsmate index`` writes it once
(:func:`ensure_int8`, ~3 s) next to chromadb's float32 files, and an index built
before re-embeds everything once, because the model id changes. Float32 stays
selectable: ``embedding: {backend: onnx, model_path: ~/.cache/chroma/onnx_models/
all-MiniLM-L6-v2/onnx}``. A copy can also be written by hand::

    python -m opsmate.knowledge.quantize ~/.local/share/opsmate/minilm-int8

Needs the ``onnx`` package (``pip install onnx``) to write the file, not to use it;
without it the default model stays float32.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

from opsmate.errors import ModelError

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
)


def _chroma_onnx_dir() -> Path:
    """chromadb's MiniLM folder (as :func:`opsmate.knowledge.embeddings.chroma_onnx_dir`,
    which imports this module: spelled here so the two do not import each other)."""
    return Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"


def quantize_minilm(out_dir: Path, source_dir: Path | None = None) -> Path:
    """Write ``model.onnx`` (int8, per-channel) and the tokenizer files into ``out_dir``."""
    src = (source_dir or _chroma_onnx_dir()) / "model.onnx"
    if not src.is_file():
        raise ModelError(
            f"MiniLM ONNX model not found at {src}",
            hint="run `opsmate index` once with the default embedding, or copy the files there",
        )
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:  # onnxruntime's quantization tool imports onnx
        raise ModelError(
            "writing the int8 model needs the onnx package", hint="pip install onnx"
        ) from exc
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / "model.onnx.tmp"
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:  # the tool configures the root logger (and advises pre-processing): undo that
        root.setLevel(logging.ERROR)
        quantize_dynamic(str(src), str(tmp), weight_type=QuantType.QInt8, per_channel=True)
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers
    tmp.replace(out_dir / "model.onnx")
    for name in TOKENIZER_FILES:
        if (src.parent / name).is_file():
            shutil.copyfile(src.parent / name, out_dir / name)
    return out_dir / "model.onnx"


def ensure_int8(targets: list[Path], source_dir: Path) -> Path | None:
    """The int8 copy of the model in ``source_dir``, written into the first writable of
    ``targets`` when none holds it yet; None when it cannot be written (no ``onnx``
    package, read-only folders: the caller keeps float32).

    Written into a temporary sibling folder and renamed into place, so a concurrent
    reader or writer sees either no folder or a complete one.
    """
    for target in targets:
        if (target / "model.onnx").is_file() and (target / "tokenizer.json").is_file():
            return target
    for target in targets:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
        except OSError:
            continue
        try:
            quantize_minilm(tmp, source_dir)
            os.chmod(tmp, 0o755)
            try:
                tmp.rename(target)
            except OSError:  # another process renamed its copy first: use that one
                if not (target / "model.onnx").is_file():
                    raise
            return target
        except (ModelError, OSError, ValueError, RuntimeError):
            continue
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opsmate.knowledge.quantize", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("out_dir", type=Path, help="folder to write model.onnx and the tokenizer to")
    ap.add_argument("--source", type=Path, help="folder of the float32 model (default: chromadb's)")
    args = ap.parse_args(argv)
    logging.getLogger().setLevel(logging.ERROR)  # the tool's pre-processing advice
    try:
        path = quantize_minilm(args.out_dir.expanduser(), args.source)
    except ModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size // 1_000_000} MB); set embedding.model_path to "
          f"{path.parent}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
