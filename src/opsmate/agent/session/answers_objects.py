"""Follow-up answers about objects: "which pods restarted?", "is orders-db healthy?".

Built from the pods the session listed (``list_pods`` results: phase, readiness,
restart counts, the last termination's reason) and the facts about them (crash loops,
OOM kills, probe failures, pending pods ...). A negative answer ("none of the 10 pods
read restarted") is given only when the pods were listed; a pod stopped by a rollout
is said to be replaced, not restarted. Health answers name the problems seen for the
object, its pods, and which of its logs and metrics were not read.
"""

from __future__ import annotations

import json
import re
from typing import Any

from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.session.frames import ids, say, word
from opsmate.agent.session.intent import Intent, Lang
from opsmate.agent.session.reads import POD_TOOLS, Body, Reads

_KINDS: dict[str, set[K]] = {
    "restart": {K.CRASH_LOOP, K.CONTAINER_EXIT, K.OOM_KILLED},
    "unready": {K.NOT_READY, K.PROBE_FAILURE},
    "pending": {K.POD_PENDING, K.SCHEDULING},
    "evicted": {K.EVICTED},
}
_REF_KIND = {"pod": "Pod", "node": "Node", "deployment": "Deployment"}
_READ = ("success", "partial", "no_data")


def listed_pods(reads: Reads) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Pods from the ``list_pods`` results (name -> pod, the latest read winning) and
    the ids of those results."""
    pods: dict[str, dict[str, Any]] = {}
    cited: list[str] = []
    for a in reads.state.actions:
        if a.tool != "list_pods" or not a.evidence_id:
            continue
        result = reads.results.get(a.evidence_id)
        data = getattr(result, "data", None)
        items = data.get("pods") if isinstance(data, dict) else None
        if not isinstance(items, list):
            continue
        cited.append(a.evidence_id)
        for p in items:
            if isinstance(p, dict) and isinstance(p.get("name"), str):
                pods[p["name"]] = p
    return pods, cited


def _last_reason(p: dict[str, Any]) -> str | None:
    for c in p.get("containers") or []:
        if not isinstance(c, dict):
            continue
        last = c.get("last_termination")
        if isinstance(last, dict) and last.get("reason"):
            return str(last["reason"])
        if c.get("reason"):
            return str(c["reason"])
    return None


def _pod_bad(p: dict[str, Any]) -> bool:
    ready = str(p.get("ready") or "")
    a, _, b = ready.partition("/")
    unready = a.isdigit() and b.isdigit() and int(a) < int(b)
    return (p.get("phase") not in ("Running", "Succeeded")) or unready or _restarts(p) > 0


def _restarts(p: dict[str, Any]) -> int:
    n = p.get("restarts")
    return n if isinstance(n, int) else 0


def _names_in(f: Fact, entity: str | None) -> list[str]:
    """The names of ``entity`` objects a fact is about."""
    if entity == "service":
        return [f.service] if f.service else []
    if entity == "container":
        return [f.container] if f.container else []
    kind = _REF_KIND.get(entity or "pod", "Pod")
    refs = [r for r in [f.subject, *f.objects] if r is not None and r.kind == kind]
    return list(dict.fromkeys(r.name for r in refs))


def which_answer(intent: Intent, reads: Reads) -> Body | None:
    """Which objects match the predicate ("restarted", "failed", "not ready" ...)."""
    lang, pred = intent.lang, intent.predicate or "fail"
    entity = intent.entity or "pod"
    pods, pod_ids = listed_pods(reads)
    found: dict[str, tuple[str, list[str]]] = {}  # name -> (detail, ids)
    if entity in ("pod", "service"):
        for name, p in pods.items():
            hit = (
                _restarts(p) > 0
                if pred == "restart"
                else (pred == "pending" and p.get("phase") == "Pending")
                or (pred in ("unready", "fail") and _pod_bad(p))
            )
            if not hit:
                continue
            key = _app(p) if entity == "service" else name
            found.setdefault(key, (_pod_detail(p, lang, pred), list(pod_ids)))
    kinds = _KINDS.get(pred)
    for f in reads.state.facts:
        if f.background or not f.evidence:
            continue
        if not (f.kind in kinds if kinds else f.severity == "error"):
            continue
        for name in _names_in(f, entity):
            detail, cited = found.get(name, ("", []))
            found[name] = (detail, list(dict.fromkeys([*cited, *f.evidence])))
    pred_word, ent = word(pred, lang), word(entity, lang)
    yes = intent.kind == "yes_no"
    if found:
        items = word("sep", lang).join(
            f"{n}{f' ({d})' if d and lang == 'en' else (f'（{d}）' if d else '')}"
            for n, (d, _) in list(found.items())[:10]
        )
        cited = [i for _, (_, c) in found.items() for i in c]
        frame = "which_yes" if yes else "which_found"
        text = say(
            frame, lang, n=len(found), entity=ent, pred=pred_word, items=items, ids=ids(cited)
        )
        return Body(text, cited, True, POD_TOOLS)
    if pods and entity in ("pod", "service", "container"):
        text = ("" if not yes else say("no_prefix", lang)) + (
            say("which_none_pods", lang, n=len(pods), pred=pred_word, ids=ids(pod_ids))
            if pred == "restart"
            else say("which_none_read", lang, n=len(pods), pred=pred_word, ids=ids(pod_ids))
        )
        cited = list(pod_ids)
        if pred == "restart":
            stopped = [f for f in reads.state.facts if _killing(f)]
            if stopped:
                names = [n for f in stopped for n in _names_in(f, "pod")]
                what = ", ".join(list(dict.fromkeys(names))[:6])
                sids = [e for f in stopped for e in f.evidence]
                text += say("replaced", lang, n=len(set(names)), what=what, ids=ids(sids))
                cited += sids
        return Body(text, cited, True, POD_TOOLS)
    text = say("which_none", lang, entity=ent, pred=pred_word)
    return Body(text, [], False, POD_TOOLS)


def _killing(f: Fact) -> bool:
    return f.reason == "Killing" or bool(re.match(r"^\d+ Killing events? ", f.statement))


def _app(p: dict[str, Any]) -> str:
    labels = p.get("labels")
    labels = labels if isinstance(labels, dict) else {}
    app = labels.get("app") or labels.get("app.kubernetes.io/name")
    return str(app) if app else str(p.get("name"))


def _pod_detail(p: dict[str, Any], lang: Lang, pred: str) -> str:
    parts = []
    if pred == "restart" or _restarts(p):
        parts.append(word("restarts", lang, n=_restarts(p)))
    reason = _last_reason(p)
    if reason:
        parts.append(word("last", lang, reason=reason))
    if pred != "restart":
        parts.insert(0, f"{p.get('phase')} {p.get('ready')}")
    return ", ".join(parts)


# ----------------------------------------------------------------------------- health


def _is(obj: str | None, name: str) -> bool:
    return bool(obj) and (obj == name or str(obj).startswith(name + "-"))


def _about(f: Fact, name: str) -> bool:
    if f.service == name or (f.subject is not None and _is(f.subject.name, name)):
        return True
    if any(_is(o.name, name) for o in f.objects):
        return True
    pat = r"(?<![a-z0-9-])" + re.escape(name) + r"(?![a-z0-9-])"
    return bool(re.search(pat, f.statement.lower()))


def _unread_for(name: str, reads: Reads, lang: Lang) -> list[str]:
    """The logs / metrics of ``name`` this session could read and did not."""
    done = [a for a in reads.state.actions if a.status in _READ]
    out = []
    groups = (
        (("log_stats", "search_logs", "pod_logs"), {"en": "logs of {n}", "zh": "{n} 的日志"}),
        (("query_metrics",), {"en": "metrics of {n}", "zh": "{n} 的指标"}),
    )
    for tools, label in groups:
        if not any(t in reads.tools for t in tools):
            continue
        if not any(a.tool in tools and name in json.dumps(a.args).lower() for a in done):
            out.append(label[lang].format(n=name))
    return out


def health_answer(intent: Intent, reads: Reads) -> Body:
    """Is ``name`` healthy: the problems seen for it, its pods, what was not read."""
    lang, state = intent.lang, reads.state
    name = (intent.names or [n.lower() for n in state.subject.names])[0]
    about = [f for f in state.facts if _about(f, name) and f.evidence]
    problems = [
        f
        for f in about
        if f.severity in ("error", "warning")
        and f.kind not in (K.CHANGE, K.NO_CHANGE)
        and not f.background
    ]
    problems.sort(key=lambda f: (f.severity != "error", f.time is None, f.time))
    pods, pod_ids = listed_pods(reads)
    mine = {n: p for n, p in pods.items() if _is(n, name) or _app(p) == name}
    sep = word("sep", lang)
    items = [f"{reads.clean(f.statement, 260)} ({ids(f.evidence)})" for f in problems[:3]]
    cited = [e for f in problems[:3] for e in f.evidence]
    if mine:
        shown = ", ".join(
            f"{n} {p.get('phase')} {p.get('ready')}, {word('restarts', lang, n=_restarts(p))}"
            for n, p in list(mine.items())[:4]
        )
        items.append(say("pods_of", lang, items=shown, ids=ids(pod_ids)))
        cited += pod_ids
    extra = tuple(_unread_for(name, reads, lang))
    bad = any(f.severity == "error" for f in problems) or any(_pod_bad(p) for p in mine.values())
    if bad:
        return Body(
            say("health_bad", lang, name=name, items=sep.join(items)), cited, True, POD_TOOLS, extra
        )
    if problems:
        return Body(
            say("health_warn", lang, name=name, items=sep.join(items)),
            cited,
            True,
            POD_TOOLS,
            extra,
        )
    if about or mine:
        if not items:
            f = about[0]
            items.append(f"{reads.clean(f.statement, 260)} ({ids(f.evidence)})")
            cited += f.evidence
        settled = bool(about)  # only its pods were listed: read more of it first
        text = say("health_ok", lang, name=name, items=sep.join(items))
        return Body(text, cited, settled, POD_TOOLS, extra)
    return Body(say("health_unread", lang, name=name), [], False, POD_TOOLS, extra)
