"""Where ``watch`` sends a report besides ``--out`` (``sinks:``): what each sink receives.

- ``webhook``: ``POST`` of the report JSON exactly as written to ``--out`` (the report,
  contracts section 3, plus ``alert_group``), ``Content-Type: application/json``, headers
  ``X-Opsmate-Report`` (the file name) and, with ``token_env``, ``Authorization: Bearer``.
- ``slack``: a Slack-compatible incoming-webhook message (Slack, Mattermost, Rocket.Chat
  read ``text``; Slack shows ``blocks``): the status and alert names, the root cause (or
  what is missing), the chain from symptom to cause, the top next step, past incidents
  seen before (marked as context), and a link to the full report (``report_url`` with
  ``{json}``, ``{md}``, ``{name}`` filled in; without it, the report's file name).

Everything sent has passed the redactor (the configured ``tools.redact_patterns`` too);
text from data is escaped for Slack (``&``, ``<``, ``>``), so a log line cannot ping
``<!channel>`` or forge a link. A sink URL can hold a secret (a Slack webhook's path
is one): give it through ``url_env``; logs name a sink by its name and host only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from opsmate.config import SinkConfig
from opsmate.errors import ConfigError
from opsmate.tools.redact import Redactor

SECTION_LIMIT = 2900  # Slack: a section's text is at most 3000 characters
HEADER_LIMIT = 150


@dataclass
class Sink:
    """A configured sink with its URL and token resolved."""

    name: str
    config: SinkConfig
    url: str = field(repr=False)
    token: str | None = field(default=None, repr=False)

    @property
    def kind(self) -> str:
        return self.config.type

    def describe(self) -> str:
        """``slack1 (hooks.slack.com)``: never the path or query (they can be secrets)."""
        return f"{self.name} ({urlsplit(self.url).hostname or '?'})"


def resolve_sinks(
    configs: list[SinkConfig], environ: Mapping[str, str] | None = None
) -> list[Sink]:
    """The sinks of ``sinks:``, URLs and tokens read from their variables; ConfigError
    naming the key when a variable is unset or the URL is not http(s)."""
    env = os.environ if environ is None else environ
    out: list[Sink] = []
    seen: set[str] = set()
    for i, cfg in enumerate(configs):
        name = cfg.name or f"{cfg.type}{i + 1}"
        if name in seen:
            raise ConfigError(f"sinks[{i}].name: {name!r} is used twice (names must differ)")
        seen.add(name)
        url = cfg.url
        if cfg.url_env:
            url = env.get(cfg.url_env)
            if not url:
                raise ConfigError(
                    f"sinks[{i}].url_env: the variable {cfg.url_env} is not set",
                    hint=f"set {cfg.url_env} to the {cfg.type} URL (e.g. from a Secret)",
                )
        assert url is not None  # SinkConfig demands url or url_env
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
            raise ConfigError(f"sinks[{i}]: the URL of {name} is not an http(s) URL")
        token = None
        if cfg.token_env:
            token = env.get(cfg.token_env)
            if not token:
                raise ConfigError(f"sinks[{i}].token_env: the variable {cfg.token_env} is not set")
        out.append(Sink(name=name, config=cfg, url=url, token=token))
    return out


def report_link(sink: Sink, json_path: Path, md_path: Path) -> str | None:
    """The full report's URL from ``report_url``, or None without one."""
    template = sink.config.report_url
    if not template:
        return None
    return template.format(
        json=quote(json_path.name), md=quote(md_path.name), name=quote(json_path.stem)
    )


def request_for(
    sink: Sink, data: dict[str, Any], json_path: Path, md_path: Path, redactor: Redactor
) -> tuple[bytes, dict[str, str]]:
    """(body, headers) of one delivery: redacted, ready to POST."""
    from opsmate.textsafe import dumps_json

    headers = {"Content-Type": "application/json", "User-Agent": "opsmate-watch"}
    if sink.token:
        headers["Authorization"] = f"Bearer {sink.token}"
    if sink.kind == "webhook":
        headers["X-Opsmate-Report"] = json_path.name
        body: Any = redactor.clean(data)
    else:
        body = redactor.clean(slack_message(data, report_link(sink, json_path, md_path), json_path))
    return dumps_json(body).encode("utf-8"), headers


def slack_escape(text: str | None) -> str:
    """Text from data made inert in a Slack message (``&``, ``<``, ``>`` escaped)."""
    one = " ".join((text or "").split())
    return one.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def slack_message(data: dict[str, Any], link: str | None, json_path: Path) -> dict[str, Any]:
    """The Slack-compatible message for one report (module doc)."""
    e = slack_escape
    status = str(data.get("status") or "?")
    group = data.get("alert_group") or {}
    title = ", ".join(group.get("alertnames") or []) or _clip(str(data.get("question") or ""), 80)
    env = (data.get("constraints") or {}).get("environment")
    root = data.get("root_cause") or None
    lines: list[str] = []
    if root:
        lines.append(f"*Root cause:* {e(root.get('statement'))}")
    else:
        lines.append(f"*No root cause established:* {e(data.get('summary'))}")
    chain = [e(step.get("statement")) for step in data.get("chain") or []]
    steps = data.get("next_steps") or []
    step = next((s for s in steps if s.get("kind") == "mitigation"), steps[0] if steps else None)
    seen = data.get("seen_before") or []
    where = f"<{link}|Full report>" if link else f"Full report: {e(json_path.name)}"
    context = " · ".join(
        [where, *([f"environment {e(env)}"] if env else []), f"status {e(status)}"]
    )
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "text": {"type": "plain_text", "text": _clip(f"[{status}] {title}", HEADER_LIMIT)},
        },
        _section("\n".join(lines)),
    ]
    if chain:
        blocks.append(
            _section(
                "*From symptom to cause:*\n"
                + "\n".join(f"{n}. {c}" for n, c in enumerate(chain, 1))
            )
        )
    if step:
        who = " (a person decides)" if step.get("requires_human") else ""
        blocks.append(_section(f"*Next step{who}:* {e(step.get('action'))}"))
    if seen:
        past = "; ".join(f"{e(h.get('id'))} {e(h.get('time'))} {e(h.get('status'))}" for h in seen)
        blocks.append(_section(f"*Seen before* (past incidents, not evidence): {past}"))
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": context}]})
    text = "\n".join(
        [f"*[{e(status)}] {e(title)}*", *lines]
        + (["*From symptom to cause:* " + " → ".join(chain)] if chain else [])
        + ([f"*Next step:* {e(step.get('action'))}"] if step else [])
        + [context]
    )
    return {"text": _clip(text, 3 * SECTION_LIMIT), "blocks": blocks}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": _clip(text, SECTION_LIMIT)}}
