"""A container's last words: the lines it wrote just before it exited (``pod_logs``).

For a pod whose container terminated, restarted or is crash-looping (known from the
object graph), for a ``previous=true`` tail, or for a tail that itself ends in a fatal
line, a panic or a non-zero exit, the lines just before the end become a ``LAST_WORDS``
fact: the subject is the pod, ``container`` the container, ``statement`` quotes the key
lines verbatim (errors, exceptions, configuration and dependency lines, and the lines
that name the host they failed to reach), ``detail["lines"]`` holds the last lines as
written. Lines that say more precisely what went wrong also become their own facts
(``CONFIG_ERROR``, ``DEPENDENCY_FAILURE`` naming the dependency, ``SATURATION``), so the
cause/symptom model can rank them. A tail of a pod that did not exit gives its error
lines as ``LOG_ERROR`` (and signal) facts instead. Unleveled lines count: their level
is inferred from their content.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from opsmate.agent.kinds.registry import error_mode
from opsmate.agent.observe.analyzers.logs_facts import (
    KIND_OF_SIGNAL,
    make_fact,
    pattern_key,
    signal_statement,
    stable_key,
    target_ref,
)
from opsmate.agent.observe.context import ObserveContext
from opsmate.agent.observe.facts import Fact, FactKind, ObjRef
from opsmate.agent.observe.registry import for_tools
from opsmate.agent.observe.software import software_target
from opsmate.agent.observe.text import clip, workload_of
from opsmate.loganalysis.parse import parse_line, strip_timestamp
from opsmate.loganalysis.signals import Signal, classify, hosts_in
from opsmate.loganalysis.stats import telling_line
from opsmate.records.k8s import Pod
from opsmate.records.logs import PodLogLine
from opsmate.records.payloads import PodLogsPayload
from opsmate.tools.base import ToolResult

BLOCK = 15  # lines before the end that are read as the last words
QUOTED = 4  # key lines quoted in the statement
_ENDING = ("shutting down", "exiting", "terminating", "stopping", "exited", "goodbye")


def _lines(result: ToolResult) -> list[PodLogLine]:
    payload = result.payload_as(PodLogsPayload) or PodLogsPayload()
    if payload.records:
        return list(payload.records)
    out = []
    for raw in payload.lines:
        pl = parse_line(raw)
        out.append(
            PodLogLine(
                message=raw,
                level=pl.level,
                level_inferred=pl.inferred,
                text=pl.message if pl.message != raw.strip() else None,
                kind=pl.kind if pl.kind != "text" else None,
                error=pl.error,
                exit_code=pl.exit_code,
            )
        )
    return out


def _text(ln: PodLogLine) -> str:
    return (ln.text or ln.message or "").strip()


def _quote(ln: PodLogLine) -> str:
    """The line as written (without a leading timestamp); a JSON / logfmt line's message,
    with its error field when the message does not say it (``Terminating.: 28: No space
    left on device``)."""
    if ln.kind in ("json", "logfmt"):
        text = _text(ln)
        if ln.error and ln.error.strip() and ln.error.strip() not in text:
            return f"{text.rstrip('.')}: {ln.error.strip()}"
        return text
    text = strip_timestamp(ln.message or "") or _text(ln)
    telling = telling_line(text)
    if telling is None:
        return text
    head = text.splitlines()[0].strip()
    if head.startswith("Traceback (most recent call last)"):
        return telling  # a Python stack: its last line says what failed
    return f"{clip(head, 60)} … {telling}"  # a report over several lines: what failed


def _exit_state(pod: Pod | None, container: str | None) -> dict[str, Any]:
    """What the graph knows of the container's exits: restarts, terminated, exit code."""
    if pod is None:
        return {}
    for c in pod.all_containers():
        if container and c.name != container:
            continue
        last = c.last_termination
        exited = (
            c.restarts > 0
            or c.state == "terminated"
            or last is not None
            or c.reason in ("CrashLoopBackOff", "Error", "OOMKilled")
        )
        if not exited:
            continue
        code = c.exit_code if c.state == "terminated" else (last.exit_code if last else None)
        reason = c.reason if c.state == "terminated" else (last.reason if last else c.reason)
        return {"container": c.name, "exit_code": code, "reason": reason, "restarts": c.restarts}
    if pod.phase in ("Failed",):
        return {"reason": pod.reason or "Failed"}
    return {}


def _running_since(pod: Pod | None, container: str | None) -> datetime | None:
    """When the container now running (after a restart) started, else None."""
    if pod is None:
        return None
    for c in pod.containers:
        if (container is None or c.name == container) and c.state == "running" and c.restarts:
            return c.started_at
    return None


def _ends_badly(lines: list[PodLogLine]) -> bool:
    tail = [ln for ln in lines if ln.kind not in ("frame", "traceback")][-3:]
    for ln in tail:
        low = _text(ln).lower()
        if ln.level == "fatal" or ln.kind in ("panic", "exception"):
            return True
        if ln.kind == "exit" and ln.exit_code not in (None, 0):
            return True
        if ln.level == "error" and any(w in low for w in _ENDING):
            return True
    return bool(tail) and tail[-1].level in ("error", "fatal")


def _important(ln: PodLogLine, sig: Signal, failing: bool) -> bool:
    if ln.kind in ("frame", "traceback"):
        return False
    if ln.level in ("info", "debug") and not ln.level_inferred:
        return False  # a line written as INFO is never an error
    if ln.level in ("error", "fatal") or ln.kind in ("exception", "panic"):
        return True
    if ln.kind == "exit" and ln.exit_code not in (None, 0):
        return True
    if sig.kind in ("dependency", "config", "saturation"):
        return True
    return failing and bool(hosts_in(_text(ln)))  # "Target host: db, port: 5432"


_PRIORITY = {"config": 0, "dependency": 1, "saturation": 2}


def _principal(key: list[tuple[PodLogLine, Signal]]) -> tuple[PodLogLine, Signal]:
    def rank(item: tuple[PodLogLine, Signal]) -> tuple[int, int]:
        ln, sig = item
        if sig.kind in _PRIORITY:
            return (_PRIORITY[sig.kind], 0)
        if ln.kind in ("exception", "panic"):
            return (3, 0)
        return (4 if ln.level == "fatal" else 5, 0)

    return min(reversed(key), key=rank)


@for_tools("pod_logs")
def pod_log_facts(result: ToolResult, ctx: ObserveContext) -> list[Fact]:
    """Last words of an exited container, or the error lines of a running one."""
    lines = [ln for ln in _lines(result) if _text(ln)]
    if not lines:
        return []
    pod_name = str(result.args.get("name") or result.scope.get("pod") or "")
    if not pod_name:
        return []
    ns = result.args.get("namespace") or result.scope.get("namespace")
    if not ns and isinstance(result.scope.get("namespaces"), list) and result.scope["namespaces"]:
        ns = result.scope["namespaces"][0]
    pod = ctx.graph.get("Pod", ns, pod_name)
    pod = pod if isinstance(pod, Pod) else None
    ns = ns or (pod.namespace if pod else None)
    payload = result.payload_as(PodLogsPayload)
    container = result.args.get("container") or (payload.container if payload else None)
    previous = bool(result.args.get("previous") or result.scope.get("previous"))
    state = _exit_state(pod, container)
    container = (
        container
        or state.get("container")
        or next((ln.container for ln in lines if ln.container), None)
    )
    service = workload_of(pod_name) or pod_name
    subject = ObjRef(kind="Pod", name=pod_name, namespace=ns)
    owner = pod.owner_ref() if pod else None
    owner_ref = (
        ObjRef(kind=str(owner.kind), name=str(owner.name), namespace=ns)
        if owner and owner.kind and owner.name
        else None
    )
    exited = bool(state) or previous or _ends_badly(lines)
    block = lines[-BLOCK:]
    sigs = [classify(_text(ln), ln.error) for ln in block]
    failing = any(s.kind in ("dependency", "saturation") for s in sigs) or any(
        ln.level in ("error", "fatal") for ln in block
    )
    key_lines: list[tuple[PodLogLine, Signal]] = []
    seen: dict[str, int] = {}
    for ln, sig in zip(block, sigs, strict=True):
        if not _important(ln, sig, failing) or not _says_something(_quote(ln)):
            continue  # (an empty error line, a rule of "=====" under a banner, says nothing)
        k = pattern_key(_text(ln))
        if k in seen:
            key_lines.pop(seen[k])
            seen = {pattern_key(_text(x)): i for i, (x, _) in enumerate(key_lines)}
        seen[k] = len(key_lines)
        key_lines.append((ln, sig))
    key_lines = _with_failing_code(block, key_lines)
    hosts: list[str] = []
    for ln, _ in key_lines:
        for h in hosts_in(_text(ln)):
            if h not in hosts:
                hosts.append(h)
    if not hosts and failing and key_lines:
        # "auth error" names no host: the run's earlier lines ("connecting to mongodb://db")
        # say which dependency it was talking to
        first = block.index(key_lines[0][0])
        for ln in reversed(lines[: len(lines) - len(block) + first]):
            named = hosts_in(_text(ln))
            if named:
                hosts = named[:2]
                break
    if not hosts and failing and key_lines:
        # "<Product>.Client ... authentication failed" names a product, not a host: the workload
        # whose image runs it
        named_sw = software_target(" ".join(_text(ln) for ln, _ in key_lines), ctx.graph,
                                   own=service)  # fmt: skip
        hosts = [named_sw] if named_sw else []
    hosts.sort(key=lambda h: (_plain(h), ":" not in h))
    facts: list[Fact] = []
    who = f"pod {pod_name}" + (f" (container {container})" if container else "")
    if exited and (key_lines or state):
        f = _last_words(ctx, lines, key_lines, hosts, state, previous, who=who, subject=subject,
                        owner=owner_ref, container=container, service=service)  # fmt: skip
        if f:
            facts.append(f)
    facts += _signal_facts(ctx, key_lines if exited else _error_lines(lines), hosts, who=who,
                           subject=subject, owner=owner_ref, container=container,
                           service=service, exited=exited,
                           since=None if previous else _running_since(pod, container))  # fmt: skip
    return facts


_CARETS = set("^~ ")


def _with_failing_code(
    block: list[PodLogLine], key_lines: list[tuple[PodLogLine, Signal]]
) -> list[tuple[PodLogLine, Signal]]:
    """Before each exception of a Python traceback, the source line of its last frame (the
    code that failed, e.g. ``int(env["BATCH_SIZE"])``: it often names the setting)."""
    out: list[tuple[PodLogLine, Signal]] = []
    for ln, sig in key_lines:
        if ln.kind == "exception" and ln in block:
            i = block.index(ln)
            for prev in reversed(block[max(0, i - 4) : i]):
                text = _text(prev)
                if not text or set(text) <= _CARETS:
                    continue  # the ^^^^ markers under the failing expression
                code = prev.kind == "frame" and not text.startswith(("File ", 'File "'))
                if code and all(prev is not x for x, _ in key_lines):
                    out.append((prev, Signal()))
                break
        out.append((ln, sig))
    return out


def _plain(name: str) -> bool:
    return name.isalpha()


_DECOR = re.compile(r"\[[^\]]*\]|<[^>]*>|[\W\d_]+")


def _says_something(quote: str) -> bool:
    """Whether a line has words once its brackets, pids, numbers and rules are gone."""
    return len(_DECOR.sub("", strip_timestamp(quote))) >= 3


def _error_lines(lines: list[PodLogLine]) -> list[tuple[PodLogLine, Signal]]:
    out: list[tuple[PodLogLine, Signal]] = []
    seen: set[str] = set()
    for ln in reversed(lines):
        named = ln.level in ("warn", "warning") and error_mode(_text(ln)) is not None
        if (
            ln.level not in ("error", "fatal")
            and ln.kind not in ("exception", "panic")
            and not named
        ):
            continue  # a warning counts when it names a failure mode
        if not _says_something(_quote(ln)):
            continue  # an empty error line, a rule of "=====" under a banner
        k = pattern_key(_text(ln))
        if k not in seen:
            seen.add(k)
            out.append((ln, classify(_text(ln), ln.error)))
    return list(reversed(out[:8]))


def _last_words(
    ctx: ObserveContext,
    lines: list[PodLogLine],
    key_lines: list[tuple[PodLogLine, Signal]],
    hosts: list[str],
    state: dict[str, Any],
    previous: bool,
    *,
    who: str,
    subject: ObjRef,
    owner: ObjRef | None,
    container: str | None,
    service: str,
) -> Fact | None:
    if len(key_lines) > QUOTED:
        # the first error of the block is often what set the rest off (a boot step that
        # failed, then the runtime's crash report): it is quoted with the last ones
        quoted = [key_lines[0], *key_lines[-(QUOTED - 1) :]]
    else:
        quoted = key_lines or [(ln, Signal()) for ln in lines[-3:]]
    quotes = [clip(_quote(ln), 220) for ln, _ in quoted]
    principal, psig = _principal(quoted) if key_lines else (lines[-1], Signal())
    code = state.get("exit_code")
    exit_words = f" (exit code {code})" if code not in (None, 0) else ""
    verb = "exited" if state or previous else "stopped"
    statement = f"{who} wrote before it {verb}{exit_words}: " + " / ".join(f'"{q}"' for q in quotes)
    error_like = any(ln.level in ("error", "fatal") or ln.kind in ("exception", "panic")
                     for ln, _ in quoted)  # fmt: skip
    times = [ln.time for ln, _ in quoted if ln.time is not None]
    objects = [owner] if owner else []
    objects += [target_ref(h) for h in hosts[:3]]
    detail: dict[str, Any] = {
        "lines": [clip(ln.message, 400) for ln in lines[-10:]],
        "key_lines": quotes,
        "previous": previous,
        "source": "pod_logs",
    }
    if state:
        detail.update({k: v for k, v in state.items() if v is not None})
    if hosts:
        detail["hosts"] = hosts[:5]
    if psig.kind:
        detail["signal"] = psig.kind
    refs = [ln.ref for ln, _ in quoted if ln.ref]
    if refs:
        detail["refs"] = refs
    return make_fact(
        ctx,
        kind=FactKind.LAST_WORDS,
        key=f"lastwords:{subject.namespace}:{subject.name}:{container}:"
        f"{stable_key(pattern_key(_text(principal)))}",
        statement=statement,
        quote=" / ".join(quotes),
        severity="error" if error_like else "warning",
        service=service,
        subject=subject,
        objects=objects,
        count=len(quoted),
        first=min(times) if times else None,
        last=max(times) if times else None,
        reason=psig.reason or state.get("reason") or "exit",
        message=_text(principal),
        container=container,
        exit_code=code,
        detail=detail,
    )


def _signal_facts(
    ctx: ObserveContext,
    key_lines: list[tuple[PodLogLine, Signal]],
    hosts: list[str],
    *,
    who: str,
    subject: ObjRef,
    owner: ObjRef | None,
    container: str | None,
    service: str,
    exited: bool,
    since: datetime | None = None,
) -> list[Fact]:
    """Facts for the lines that say precisely what failed (or, for a running pod, every
    error line as LOG_ERROR). ``since``: when the container now running started — a line
    written after it is the running instance's, not the exited one's: its level says how
    grave it is."""
    facts: list[Fact] = []
    done: set[str] = set()
    for ln, sig in key_lines:
        kind = KIND_OF_SIGNAL.get(sig.kind)
        if kind is None or kind == FactKind.CHANGE:
            # a running pod's warning that names a failure mode ("GroupAuthorizationException:
            # Not authorized to access group") is an error that happened, whatever its level
            named = not exited and ln.level in ("warn", "warning") and error_mode(_text(ln))
            if not named and (exited or ln.level not in ("error", "fatal")):
                continue
            kind = FactKind.LOG_ERROR
        if (
            kind == FactKind.DEPENDENCY_FAILURE
            and hosts
            and (not sig.targets or all(_plain(t) for t in sig.targets))
        ):
            sig = Signal(sig.kind, sig.reason, tuple(dict.fromkeys([*hosts[:2], *sig.targets])))
        text = _text(ln)
        key = f"log:{kind.value}:{subject.namespace}:{subject.name}:{stable_key(pattern_key(text))}"
        if key in done:
            continue
        done.add(key)
        objects = [owner] if owner else []
        objects += [target_ref(t) for t in sig.targets[:3]]
        t: datetime | None = ln.time
        f = make_fact(
            ctx,
            kind=kind,
            key=key,
            statement=signal_statement(kind, who, sig, clip(text, 300), 1),
            quote=text,
            severity="error"
            if ln.level in ("error", "fatal")
            or (exited and (since is None or t is None or t < since))
            else "warning",
            service=service,
            subject=subject,
            objects=objects,
            first=t,
            last=t,
            reason=sig.reason,
            message=text,
            container=container,
            exit_code=ln.exit_code,
            detail={
                "source": "pod_logs",
                "ref": ln.ref,
                **({"targets": list(sig.targets)} if sig.targets else {}),
                # a line counted as logged ("logged 1 error ..."): its card names what it is
                **({"verbatim": True} if kind == FactKind.LOG_ERROR else {}),
            },
        )
        if f:
            facts.append(f)
    return facts
