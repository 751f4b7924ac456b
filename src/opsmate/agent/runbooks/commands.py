"""Commands found in runbook code blocks: read-only ones become tool calls, the rest mitigations.

``kubectl get|describe|logs|top|rollout history|rollout status`` and PromQL (```promql
blocks, or lines that look like PromQL) translate into calls of the stable tools.
Anything that changes state (``delete``, ``scale``, ``rollout undo|restart``, ``exec``,
``edit``, ``apply``, ``patch``, ``drain``, ``cordon``, ``set``, ``helm rollback`` ...)
is returned as a mitigation for a human and is never turned into a tool call.
Everything else (SQL consoles, ``redis-cli`` reads, ``curl``) is ignored.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(
    r"^[ \t]*(```|~~~)[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S
)
MUTATING_KUBECTL = {
    "delete",
    "scale",
    "exec",
    "edit",
    "apply",
    "patch",
    "drain",
    "cordon",
    "uncordon",
    "set",
    "label",
    "annotate",
    "create",
    "replace",
    "taint",
    "cp",
    "run",
    "expose",
    "autoscale",
    "restart",
    "debug",
    "attach",
    "port-forward",
    "proxy",
}
MUTATING_ROLLOUT = {"undo", "restart", "pause", "resume"}
_MUTATING_WORDS = re.compile(
    r"^\s*(?:sudo\s+)?(?:helm\s+(?:upgrade|rollback|uninstall|install|delete)"
    r"|systemctl\s+(?:restart|stop|start|reload)|service\s+\S+\s+(?:restart|stop)"
    r"|docker\s+(?:restart|rm|stop|kill)|reboot\b|kill\b|pkill\b|rm\s"
    r"|redis-cli\b.*\b(?:failover|flushall|flushdb|shutdown|config\s+set|client\s+kill|del)\b"
    r"|(?:alter|drop|truncate|delete\s+from|update\s+\S+\s+set|vacuum\s+full|reindex)\b"
    r"|select\s+pg_(?:terminate|cancel)_backend)",
    re.IGNORECASE,
)
_PROMQL_START = re.compile(
    r"^\s*(?:sum|max|min|avg|count|rate|irate|increase|histogram_quantile|topk|bottomk|quantile"
    r"|absent|delta|deriv|predict_linear|avg_over_time|max_over_time|min_over_time|sum_over_time"
    r"|label_replace|clamp_min|clamp_max|abs|round|1\s*-|100\s*\*)\b"
    r"|^\s*[a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\}"
)
_PLACEHOLDER = re.compile(r"<[^>]+>|\$\{?[A-Z_]+\}?|\bPOD_NAME\b|\bNODE_NAME\b|\.\.\.")


@dataclass
class CodeCommand:
    """One command found in a runbook code block."""

    kind: str  # call | mitigation | human_check
    text: str  # the command as written (one line)
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    heading_path: list[str] = field(default_factory=list)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each fenced block in Markdown ``text``."""
    return [(m.group(2).lower(), m.group(3)) for m in _FENCE.finditer(text)]


def commands_in_section(text: str, heading_path: list[str]) -> list[CodeCommand]:
    """Every read-only call and mitigation in the code blocks of one section."""
    out: list[CodeCommand] = []
    for lang, code in code_blocks(text):
        if lang in ("promql", "prometheus"):
            for q in _promql_exprs(code):
                out.append(
                    CodeCommand(
                        "call", q, "query_metrics", {"query": q, "type": "range"}, heading_path
                    )
                )
            continue
        if lang in ("sql", "yaml", "json", "python", "go", "java", "ini", "toml", "diff"):
            continue
        for line in _logical_lines(code):
            cmd = parse_command(line)
            if cmd is not None:
                cmd.heading_path = heading_path
                out.append(cmd)
            elif (
                lang in ("", "text", "txt")
                and _PROMQL_START.match(line)
                and not line.startswith("kubectl")
            ):
                q = line.strip()
                out.append(
                    CodeCommand(
                        "call", q, "query_metrics", {"query": q, "type": "range"}, heading_path
                    )
                )
    return out


def _promql_exprs(code: str) -> list[str]:
    """PromQL expressions of a block: a line continues the previous expression while its
    parentheses are open or either side of the break is a binary operator; comments dropped."""
    exprs: list[str] = []
    cur: list[str] = []
    for raw in code.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if cur and _balanced(" ".join(cur)):
                exprs.append(" ".join(cur))
                cur = []
            continue
        if cur and _balanced(" ".join(cur)) and not _continues(cur[-1], line):
            exprs.append(" ".join(cur))
            cur = []
        cur.append(line)
    if cur:
        exprs.append(" ".join(cur))
    return [re.sub(r"\s+", " ", e).strip() for e in exprs if e]


_BINOP = re.compile(
    r"^(?:[-+*/%^]|==|!=|>=?|<=?|and\b|or\b|unless\b|on\b|ignoring\b|group_left\b|group_right\b|by\b|without\b)"
)


def _continues(prev: str, line: str) -> bool:
    if _BINOP.match(line) or _BINOP.match(prev):
        return True
    return bool(re.search(r"(?:[-+*/%^(,]|\b(?:and|or|unless))\s*$", prev))


def _balanced(text: str) -> bool:
    return text.count("(") <= text.count(")") and text.count("{") <= text.count("}")


def _logical_lines(code: str) -> list[str]:
    joined = re.sub(r"\\\s*\n\s*", " ", code)
    out = []
    for line in joined.splitlines():
        s = line.strip()
        if s.startswith("$ "):
            s = s[2:]
        if s and not s.startswith("#"):
            out.append(s)
    return out


def parse_command(line: str) -> CodeCommand | None:
    """Classify one shell line: a read-only kubectl call, a mitigation, or None."""
    first = line.split("|", 1)[0].strip()
    if re.match(r"^(?:sudo\s+)?(?:kubectl|oc)\b", first):
        return _kubectl(line, first)
    if _MUTATING_WORDS.search(first):
        return CodeCommand("mitigation", line.strip())
    return None


def _kubectl(line: str, first: str) -> CodeCommand | None:
    try:
        words = shlex.split(first)
    except ValueError:
        words = first.split()
    if words and words[0] == "sudo":
        words = words[1:]
    words = words[1:]
    flags: dict[str, str] = {}
    positional: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--") and "=" in w:
            k, v = w[2:].split("=", 1)
            flags[k] = v
        elif w in (
            "-n",
            "--namespace",
            "-l",
            "--selector",
            "-c",
            "--container",
            "--context",
            "-o",
            "--output",
            "--tail",
            "--since",
            "--field-selector",
            "--timeout",
            "--revision",
            "--sort-by",
            "--cluster",
        ):
            flags[w.lstrip("-")] = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        elif w.startswith("-"):
            flags[w.lstrip("-")] = "true"
        else:
            positional.append(w)
        i += 1
    if not positional:
        return None
    verb = positional[0]
    rest = positional[1:]
    if verb in ("exec", "debug", "attach", "port-forward", "proxy"):
        return CodeCommand("human_check", line.strip())  # may only read, but opsmate cannot run it
    if verb in MUTATING_KUBECTL or (verb == "rollout" and rest and rest[0] in MUTATING_ROLLOUT):
        return CodeCommand("mitigation", line.strip())
    if "w" in flags or "watch" in flags:
        return None  # a watch never ends; the list without -w is the read
    ns = flags.get("n") or flags.get("namespace")
    sel = flags.get("l") or flags.get("selector")
    args: dict[str, Any] = {}
    if ns and not _PLACEHOLDER.search(ns):
        args["namespace"] = ns
    kind, name = _kind_name(rest)
    tool: str | None = None
    if verb == "rollout" and rest and rest[0] in ("history", "status"):
        kind, name = _kind_name(rest[1:])
        tool = "rollout_history" if name else None
        args["name"] = name
    elif verb in ("get", "describe", "top"):
        if kind in ("pod", "pods", "po"):
            tool = "list_pods"
            if sel:
                args["label_selector"] = sel
            if verb == "describe" and name:
                tool = "get_events"
                args.update(kind="Pod", name=name)
        elif kind in ("node", "nodes", "no"):
            tool = "node_conditions"
            if name:
                args["name"] = name
        elif kind in ("event", "events", "ev"):
            tool = "get_events"
            fs = flags.get("field-selector") or ""
            m = re.search(r"involvedObject\.name=([\w.-]+)", fs)
            if m:
                args["name"] = m.group(1)
        elif kind in ("deployment", "deployments", "deploy", "rs", "replicaset", "replicasets"):
            target = name or _app_from_selector(sel)
            tool = "rollout_history" if target else None
            args["name"] = target
    elif verb == "logs":
        target = rest[0] if rest else None
        grep = _grep_terms(line)
        if target and target.startswith(("deployment/", "deploy/")):
            tool = "search_logs"
            args = {"service": target.split("/", 1)[1]}
            if grep:
                args["query"] = grep
        elif target:
            tool = "pod_logs"
            args["name"] = target
            if flags.get("c") or flags.get("container"):
                args["container"] = flags.get("c") or flags.get("container")
            if flags.get("tail", "").isdigit():
                args["tail_lines"] = int(flags["tail"])
    if tool is None:
        return None
    if any(isinstance(v, str) and _PLACEHOLDER.search(v) for v in args.values()):
        return None  # "<pod-name>" needs a person (or a model) to choose the object
    if any(v is None for v in args.values()):
        return None
    return CodeCommand("call", line.strip(), tool, args)


def _kind_name(rest: list[str]) -> tuple[str | None, str | None]:
    if not rest:
        return None, None
    head = rest[0].lower()
    if "/" in head:
        kind, name = rest[0].split("/", 1)
        return kind.lower(), name
    return head, (rest[1] if len(rest) > 1 else None)


def _app_from_selector(sel: str | None) -> str | None:
    if not sel:
        return None
    m = re.search(r"(?:^|,)\s*(?:app|app\.kubernetes\.io/name)\s*=\s*([\w.-]+)", sel)
    return m.group(1) if m else None


def _grep_terms(line: str) -> str | None:
    m = re.search(r"\|\s*grep\s+(?:-[A-Za-z]+\s+)*(?:\"([^\"]+)\"|'([^']+)'|(\S+))", line)
    if not m:
        return None
    pattern = m.group(1) or m.group(2) or m.group(3) or ""
    first = pattern.split("|")[0]
    first = re.sub(r"[\\^$.*+?()\[\]{}]", " ", first).strip()
    return first or None
