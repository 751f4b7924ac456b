"""Helpers for the safety tests: isolated user dirs, the CLI, a scripted model, and one run
of every output path over a bundle (see :func:`run_every_output`).

A session-wide run cannot use the function-scoped isolation of ``tests/conftest.py``, so
:func:`isolated` sets the same variables itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from canary_bundle import QUERY, SERVICE, bundle_texts, question, write_bundle

OPSMATE = Path(sys.executable).parent / "opsmate"

TOOL_CALLS: dict[str, dict[str, Any]] = {
    "search_logs": {"service": SERVICE, "page_size": 200},
    "log_stats": {"service": SERVICE},
    "get_events": {"namespace": "shop"},
    "rollout_history": {"name": SERVICE, "namespace": "shop"},
    "list_pods": {"namespace": "shop"},
    "query_metrics": {"query": QUERY, "type": "range"},
}
SEARCH_QUERY = "payment gateway errors PaymentGatewayError"

# every output path, in the order they are produced
OUTPUTS = [
    "diagnose --json",
    "diagnose --markdown",
    "diagnose rich",
    *(f"tool {t}{j}" for t in TOOL_CALLS for j in ("", " --json")),
    "index",
    "search --json",
    "search table",
    "session file",
    "model prompts",
    "model prompts (raw)",
    "report json",
    "report json (follow-up)",
    "report markdown",
    "audit log",
    "tui messages",
    "tui saved report",
    "tui runbook viewer",
]  # fmt: skip


@contextlib.contextmanager
def isolated(root: Path, home: Path) -> Iterator[Path]:
    """User dirs under ``root`` (HOME: the seeded one) for the duration; yields the data dir."""
    mp = pytest.MonkeyPatch()
    try:
        for var in [v for v in os.environ if v.startswith("OPSMATE_")]:
            mp.delenv(var)
        mp.setenv("HOME", str(home))
        mp.setenv("OPSMATE_CONFIG_DIR", str(root / "config"))
        mp.setenv("OPSMATE_DATA_DIR", str(root / "data"))
        mp.setenv("OPSMATE_CACHE_DIR", str(home / ".cache" / "opsmate"))
        mp.setenv("ANONYMIZED_TELEMETRY", "False")
        mp.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
        yield root / "data"
    finally:
        mp.undo()


def cli(*args: str, timeout: float = 120) -> str:
    """Run the console script in a child process; stdout and stderr together."""
    proc = subprocess.run(
        [str(OPSMATE), *args], capture_output=True, text=True, timeout=timeout, env=os.environ
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout + "\n" + proc.stderr


def cli_here(*args: str) -> str:
    """Run ``opsmate.cli.main`` in this process (the same code, no start-up cost)."""
    from opsmate.cli import main

    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        contextlib.suppress(SystemExit),
    ):
        main(list(args))
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return out.getvalue() + "\n" + err.getvalue()


def write_script(path: Path, calls: list[dict[str, object]]) -> str:
    """A scripted model: the given tool calls, then finish and a short narrative."""
    replies: list[dict[str, object]] = [
        {"schema": "NextAction", "reply": {"action": "call_tool", "reason": "look", **c}}
        for c in calls
    ]
    replies.append({"schema": "NextAction", "reply": {"action": "finish", "reason": "done"}})
    replies.append({"schema": "Narrative", "reply": {"summary": "pay-service fails."}})
    data = {"replies": replies, "defaults": {"NextAction": {"action": "finish", "reason": "x"}}}
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return f"scripted:{path}"


def strings(value: Any) -> Iterator[str]:
    """Every string in a message field, raw (models, dicts, lists walked; keys too)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="python")
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)


def _tui(bundle: Path, spec: str, cfg: Path, out: dict[str, str], tmp: Path) -> None:
    from opsmate.tui.actions import AppActions
    from opsmate.tui.bridge import Bridge, LaunchOptions

    seen: list[Any] = []
    bridge = Bridge(LaunchOptions(bundle=bundle, model=spec, config_path=cfg), seen.append)
    assert bridge.open()
    bridge.ask(question("QU"))
    bridge.ask(question("FU"))
    fields = [getattr(msg, f.name) for msg in seen for f in dataclasses.fields(msg)]
    out["tui messages"] = "\n".join(text for value in fields for text in strings(value))
    files = bridge.save_report(tmp / "tui-report")
    out["tui saved report"] = "\n".join(p.read_text(encoding="utf-8") for p in files)
    session = bridge.session
    assert session is not None
    viewer = SimpleNamespace(bridge=bridge)
    texts = [AppActions._runbook_text(viewer, r.id) for r in session.store.runbooks]  # type: ignore[arg-type]
    out["tui runbook viewer"] = "\n".join(t or "" for t in texts)
    session.close()


def _session(bundle: Path, spec: str, out: dict[str, str]) -> None:
    from opsmate.agent.report.model import print_report, render_markdown
    from opsmate.agent.session.session import Session
    from opsmate.config import Settings

    session = Session.open(settings=Settings(), bundle=bundle, model=spec, max_steps=20)
    first = session.ask(question("QU"))
    follow = session.ask(question("FU"))
    out["session file"] = session.save().read_text(encoding="utf-8")
    prompts = session.model.prompts  # type: ignore[union-attr]
    out["model prompts"] = json.dumps(prompts, ensure_ascii=False)
    out["model prompts (raw)"] = "\n".join(m["content"] for p in prompts for m in p)
    out["report json"] = json.dumps(first.to_json(), ensure_ascii=False)
    out["report json (follow-up)"] = json.dumps(follow.to_json(), ensure_ascii=False)
    out["report markdown"] = render_markdown(first) + render_markdown(follow)
    buf = io.StringIO()
    print_report(follow, file=buf)
    out["diagnose rich"] = buf.getvalue()
    session.close()


def run_every_output(root: Path, home: Path) -> dict[str, str]:
    """Build the bundle under ``root`` and run every output path once; name -> its text."""
    out: dict[str, str] = {}
    with isolated(root, home) as data_dir:
        bundle = write_bundle(root, bundle_texts())
        b = str(bundle)
        cfg = root / "opsmate.yaml"
        cfg.write_text(  # room for every planted line in one tool result
            "model: none\nbudget:\n  max_steps: 20\ntools:\n  result_token_budget: 100000\n",
            encoding="utf-8",
        )
        spec = write_script(
            root / "model.yaml",
            [
                {"tool": "search_logs", "args": {"query": "SYSTEM", "service": SERVICE}},
                {"tool": "get_events", "args": {"namespace": "shop"}},
            ],
        )
        q = question()
        out["diagnose --json"] = cli("diagnose", q, "--bundle", b, "--model", "none", "--json")
        out["diagnose --markdown"] = cli("diagnose", q, "--bundle", b, "--markdown")
        for tool, args in TOOL_CALLS.items():
            a = json.dumps(args)
            call = ("tool", tool, "--bundle", b, "--args", a, "--config", str(cfg))
            out[f"tool {tool}"] = cli_here(*call)
            out[f"tool {tool} --json"] = cli_here(*call, "--json")
        index = str(root / "index")
        out["index"] = cli_here("index", str(bundle / "runbooks"), "--index-dir", index, "--json")
        # every chunk of the planted runbook comes back (the ranking is not under test here)
        every = ("--top-k", "50")
        out["search --json"] = cli_here(
            "search", SEARCH_QUERY, "--index-dir", index, *every, "--json"
        )
        out["search table"] = cli_here("search", SEARCH_QUERY, "--index-dir", index, *every)
        _session(bundle, spec, out)
        _tui(bundle, spec, cfg, out, root)
        out["audit log"] = (data_dir / "audit.jsonl").read_text(encoding="utf-8")
    out["_index_dir"] = index  # not an output: where the runbook index was built
    return out
