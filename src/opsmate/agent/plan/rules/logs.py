"""Log rules: read what a failing container wrote, and look around a rare error.

- ``last_words_logs`` (FOLLOW): a crash loop, an error exit, an OOM kill or a failed Job
  → ``pod_logs`` of that pod and container: the previous instance's tail
  (``previous=true``, what it wrote before the last exit) when the container has
  restarted or terminated before, and the current tail. A Job's pods are found in the
  object graph (``owner == Job/<name>``), else listed by the ``job-name`` label.
- ``rare_error_context`` (CORROBORATE): a rare error template found by ``log_stats``
  (seen at most a few times) → ``search_logs`` for its words around its first
  occurrence, so the records beside it (request, endpoint, trace id) are read too.
- ``quiet_subject_logs`` (EXPLAIN): the service asked about logs no error or warning →
  ``log_stats`` over every service, once.
- ``backing_store_logs`` (EXPLAIN): the subject's database client fails (a pool run dry, an
  SQL error) → ``log_stats`` of the database workload it connects to (dependency graph).
- ``callee_logs`` (EXPLAIN): the subject's error names another component it called (an
  address, an RPC's ``PaymentService.Charge``) → ``log_stats`` of that component: the callee
  writes why it failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import timedelta

from opsmate.agent.judge import links
from opsmate.agent.observe import depgraph
from opsmate.agent.observe.facts import Fact
from opsmate.agent.observe.facts import FactKind as K
from opsmate.agent.observe.software import ROLES, image_word
from opsmate.agent.observe.text import workload_of as text_workload
from opsmate.agent.plan.registry import Check, RuleContext, fact_rule, result_rule
from opsmate.agent.plan.tiers import Tier
from opsmate.records.k8s import Pod
from opsmate.records.payloads import LogStatsPayload
from opsmate.timeparse import format_time
from opsmate.tools.base import ToolResult

TAIL_LINES = 100
_WORD = re.compile(r"[A-Za-z][A-Za-z_\-]{3,}")
_COMMON = frozenset(
    {"with", "from", "that", "this", "have", "been", "were", "when", "after", "could", "into",
     "error", "failed"}
)  # fmt: skip


def _pods_of(fact: Fact, ctx: RuleContext) -> tuple[list[str], str | None]:
    """The pods a fact is about and their namespace."""
    subj = fact.subject
    if subj is None:
        return [], None
    if subj.kind == "Pod":
        return [subj.name], subj.namespace
    if subj.kind == "Job":
        pods = [
            str(p.name)
            for p in ctx.graph.pods(subj.namespace)
            if p.owner == f"Job/{subj.name}" and p.name
        ]
        return pods[-2:], subj.namespace
    return [], subj.namespace


def _sibling_first(fact: Fact, ctx: RuleContext) -> bool:
    """Whether another pod of the same workload failed the same way earlier in the facts
    (its last words are read first; pods of one template fail alike)."""
    subj = fact.subject
    if subj is None:
        return False
    mine = text_workload(subj.name)
    for f in ctx.facts:
        if f is fact or f.key == fact.key:
            return False
        o = f.subject
        if (
            f.kind == fact.kind
            and o is not None
            and o.kind == "Pod"
            and o.name != subj.name
            and o.namespace == subj.namespace
            and text_workload(o.name) == mine
        ):
            return True
    return False


@fact_rule(
    "last_words_logs", Tier.FOLLOW, K.CRASH_LOOP, K.CONTAINER_EXIT, K.OOM_KILLED, K.JOB_FAILED
)
def last_words_logs(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A container that exited or keeps exiting: its previous and current log tails."""
    if "pod_logs" not in ctx.tools or fact.subject is None:
        return []
    if fact.kind == K.CONTAINER_EXIT and fact.severity == "info":
        return []  # a clean exit (code 0) has no last words to explain
    pods, ns = _pods_of(fact, ctx)
    out: list[Check] = []
    # an exit long before the window the question is about: its last words are background
    early = (
        fact.time is not None
        and ctx.window_from is not None
        and (fact.last_time or fact.time) < ctx.window_from - timedelta(hours=1)
    )
    tier = Tier.BACKGROUND if early else None
    if tier is None and fact.subject.kind == "Pod" and _sibling_first(fact, ctx):
        tier = Tier.CORROBORATE  # a pod of the same template fails too: its tail first
    if not pods and fact.subject.kind == "Job" and "list_pods" in ctx.tools:
        args: dict[str, object] = {"label_selector": f"job-name={fact.subject.name}"}
        args.update(ctx.ns(ns))
        return [Check("list_pods", args, f"the pods of Job {fact.subject.name}: their logs")]
    for name in pods:
        pod = ctx.graph.get("Pod", ns, name)
        pod = pod if isinstance(pod, Pod) else None
        containers = pod.all_containers() if pod else []
        container = fact.container
        if container is None and len(containers) > 1:
            failing = [c for c in containers if c.restarts or c.last_termination or c.exit_code]
            container = failing[0].name if failing else None
        c = (
            next((x for x in containers if x.name == container), None)
            if container
            else (containers[0] if len(containers) == 1 else None)
        )
        restarted = pod is None or c is None or bool(c.restarts or c.last_termination)
        base: dict[str, object] = {"name": name, "tail_lines": TAIL_LINES}
        base.update(ctx.ns(ns))
        if container and len(containers) > 1:
            base["container"] = container
        who = f"{name}" + (f" ({container})" if container else "")
        if restarted and fact.kind != K.JOB_FAILED:
            out.append(
                Check(
                    "pod_logs",
                    {**base, "previous": True},
                    f"what {who} wrote before its last exit (previous instance)",
                    tier,
                )
            )
        out.append(Check("pod_logs", base, f"why {who} keeps exiting: its last log lines", tier))
    return out


@fact_rule("rare_error_context", Tier.CORROBORATE, K.LOG_ERROR, K.DEPENDENCY_FAILURE,
           K.CONFIG_ERROR, K.SATURATION)  # fmt: skip
def rare_error_context(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """A rare error template from log_stats: the records around its first occurrence."""
    if "search_logs" not in ctx.tools or fact.detail.get("source") != "log_stats":
        return []
    if fact.count > 5 or fact.time is None or not fact.quote:
        return []
    words = [w for w in _WORD.findall(fact.quote) if w.lower() not in _COMMON]
    words = sorted(dict.fromkeys(words), key=len, reverse=True)[:3]
    if not words:
        return []
    args: dict[str, object] = {
        "query": " ".join(words),
        "from": format_time(fact.time - timedelta(minutes=2)),
        "to": format_time((fact.last_time or fact.time) + timedelta(minutes=2)),
        "page_size": 20,
    }
    if fact.service:
        args["service"] = fact.service
    return [Check("search_logs", args, f'the records around "{fact.quote[:80]}"')]


@result_rule("quiet_subject_logs", Tier.EXPLAIN, "log_stats")
def quiet_subject_logs(result: ToolResult, ctx: RuleContext) -> Iterable[Check]:
    """The service asked about logs no error and no warning: what the rest of the system
    logs (every service) — the failure the subject suffers is often written by what feeds
    it or serves it."""
    service = result.args.get("service")
    stats = result.payload_as(LogStatsPayload)
    if not service or stats is None or result.status != "success":
        return []
    named = not ctx.subject.empty() or bool(ctx.services)
    if named and not (ctx.subject.matches(service) or service in ctx.services):
        return []  # a dependency read for its own account: quiet is its answer
    bad = ("error", "fatal", "warn", "warning", "critical")
    if any(stats.by_level.get(k) for k in bad) or any(
        g.errors or g.severity in bad or any(g.levels.get(k) for k in bad) for g in stats.groups()
    ):
        return []
    return [Check("log_stats", {}, f"{service} logs no error: which errors the others log")]


# a client's words for a failure its database answered (an SQL error, a JDBC exception, a
# driver's error): what the database logs says why (disk full, locks, its connection limit)
_STORE_WORDS = re.compile(
    r"\bSQL|JDBC|database|\bdb\b|Hikari|sqlalchemy|psycopg|pymysql|mysqli?\b|PDOException"
    r"|ActiveRecord|Sequelize|Prisma|Mongo\w*|Npgsql|SqlException",
    re.I,
)


def _database_image(image: str | None) -> bool:
    """Whether an image runs a database: its name is one (``postgresql``) or starts with one's
    name (a team's own build: ``postgres-walg``, ``mysql-backup``)."""
    if not image:
        return False
    repo = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    if "exporter" in repo:
        return False  # what reads the database's metrics (postgres-exporter), not a database
    first = re.split(r"[-_.]", repo, maxsplit=1)[0]
    return any(w.startswith(s) for w in (image_word(image) or "", first) if w for s in _STORES)


_STORES = frozenset(ROLES["database"])


@fact_rule("backing_store_logs", Tier.EXPLAIN, K.SATURATION, K.LOG_ERROR)
def backing_store_logs(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """The subject's failure its database client reports (a pool run dry, an SQL error):
    the logs of the database its workload connects to (the dependency graph's edge from
    its env or config to a workload running a database image) — the database writes why."""
    if not fact.focus or fact.severity != "error" or "log_stats" not in ctx.tools:
        return []
    if fact.reason != "pool_exhausted" and not _STORE_WORDS.search(
        f"{fact.quote or ''} {fact.message or ''}"
    ):
        return []
    dg = ctx.deps()
    src = depgraph.fact_component(dg, fact)
    if src is None:
        return []
    out = []
    for edge in dg.depends_on(src):
        images = {
            c.image
            for p in ctx.graph.pods()
            if depgraph.workload_of(p) == edge.dst
            for c in p.containers
        }
        if any(_database_image(i) for i in images):
            out.append(Check("log_stats", {"service": edge.dst},
                             f"{src} fails on its database: what {edge.dst} logs"))  # fmt: skip
    return out[:2]


@fact_rule("callee_logs", Tier.EXPLAIN, K.LOG_ERROR, K.DEPENDENCY_FAILURE)
def callee_logs(fact: Fact, ctx: RuleContext) -> Iterable[Check]:
    """The subject's failing call names the component it called: what that component logs
    (a panic, its own failing dependency) says why."""
    if not fact.focus or fact.severity != "error" or "log_stats" not in ctx.tools:
        return []
    if fact.reason == "slow":
        return []  # a slow operation of its own, not a call
    dg = ctx.deps()
    running = {w for p in ctx.graph.pods() if p.name and (w := depgraph.workload_of(p))}
    named = sorted(c for c in links.named_components(fact, dg) if c in running)
    return [
        Check("log_stats", {"service": c}, f"{fact.service or 'the subject'}'s calls to {c} "
              f"fail: what {c} logs")
        for c in named[:2]
    ]  # fmt: skip
