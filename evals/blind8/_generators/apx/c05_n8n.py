from lib import *
import math

b = Bundle("apx-n8n-coredns-forward", "n8n staging: HTTP Request nodes failing", "2026-07-22T09:50:00Z", "2026-07-22T11:00:00Z",
           "staging", "stg-eks-euw2",
           "n8n staging (ns automation): lots of workflow executions failing since ~10:15, mostly in HTTP Request / HubSpot / Slack nodes. "
           "the n8n main and worker pods are up and the editor works. what's wrong?", 505)
b.ns = ns = "automation"
T = P
onset = T("2026-07-22T10:14:21Z")
nodes = mknodes(b, ["ip-10-60-12-33.eu-west-2.compute.internal", "ip-10-60-27-190.eu-west-2.compute.internal", "ip-10-60-41-7.eu-west-2.compute.internal"],
                zones=["eu-west-2a", "eu-west-2b", "eu-west-2c"])
b.namespace(ns, {"environment": "staging"})
b.namespace("kube-system")
IMG = "docker.n8n.io/n8nio/n8n:1.64.3"
env = {"EXECUTIONS_MODE": "queue", "QUEUE_BULL_REDIS_HOST": "n8n-redis-master", "DB_TYPE": "postgresdb", "DB_POSTGRESDB_HOST": "n8n-postgresql.automation.svc.cluster.local",
       "N8N_LOG_LEVEL": "info", "N8N_LOG_OUTPUT": "console", "WEBHOOK_URL": "https://n8n.stg.acme.co.uk/", "N8N_ENCRYPTION_KEY": {"valueFrom": {"secretKeyRef": {"name": "n8n", "key": "encryption-key"}}}}
main = app(b, "n8n", ns, IMG, 1, 5678, nodes, labels={"app.kubernetes.io/name": "n8n", "app.kubernetes.io/component": "main"}, env=env, container_name="n8n",
           readiness=b.http_probe("/healthz/readiness", 5678), liveness=b.http_probe("/healthz", 5678), created="2026-02-10T10:00:00Z", pod_created="2026-07-18T08:20:00Z")
wk = app(b, "n8n-worker", ns, IMG, 3, None, nodes, labels={"app.kubernetes.io/name": "n8n", "app.kubernetes.io/component": "worker"}, env=env, container_name="n8n-worker",
         command=["n8n", "worker", "--concurrency=10"], created="2026-02-10T10:00:00Z", pod_created="2026-07-18T08:21:00Z")
wh = app(b, "n8n-webhook", ns, IMG, 1, 5678, nodes[1:], labels={"app.kubernetes.io/name": "n8n", "app.kubernetes.io/component": "webhook"}, env=env, container_name="n8n-webhook",
         command=["n8n", "webhook"], created="2026-02-10T10:00:00Z", pod_created="2026-07-18T08:21:30Z")
rd = app(b, "n8n-redis-master", ns, "docker.io/bitnami/redis:7.2.5", 1, 6379, nodes[2:], kind="StatefulSet", labels={"app.kubernetes.io/name": "redis", "app.kubernetes.io/instance": "n8n"},
         container_name="redis", created="2026-02-10T10:00:00Z", pod_created="2026-07-18T08:00:00Z")
pg = app(b, "n8n-postgresql", ns, "docker.io/bitnami/postgresql:16.3.0", 1, 5432, nodes[:1], kind="StatefulSet", labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "n8n"},
         container_name="postgresql", created="2026-02-10T10:00:00Z", pod_created="2026-07-18T08:00:00Z")
cdl = {"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}
cd = app(b, "coredns", "kube-system", "602401143452.dkr.ecr.eu-west-2.amazonaws.com/eks/coredns:v1.11.3-eksbuild.1", 2, [("dns", 53), ("dns-tcp", 53), ("metrics", 9153)], nodes[:2],
         labels=cdl, args=["-conf", "/etc/coredns/Corefile"], readiness=b.http_probe("/ready", 8181), liveness=b.http_probe("/health", 8080, 10, 5, 5, 60),
         created="2026-02-01T09:00:00Z", pod_created="2026-06-30T11:00:00Z", no_service=True, revision=3)
b.service("kube-dns", "kube-system", cdl, [("dns", 53, 53), ("dns-tcp", 53, 53), ("metrics", 9153, 9153)], endpoints=b.eps_for(cd))
b.configmap("coredns", "kube-system", {"Corefile": """.:53 {
    errors
    health {
        lameduck 5s
      }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
    }
    prometheus :9153
    forward . 10.200.0.2 10.200.0.3 {
      policy sequential
    }
    cache 30
    loop
    reload
    loadbalance
}
corp.acme.internal:53 {
    errors
    cache 30
    forward . 10.200.0.2 10.200.0.3
}
"""}, labels={"eks.amazonaws.com/component": "coredns", "k8s-app": "kube-dns"}, created="2026-02-01T09:00:00Z",
    annotations={"acme.io/change-ticket": "CHG-4471 resolve corp.acme.internal via corporate resolvers", "acme.io/last-edited-by": "j.hughes", "acme.io/last-edited-at": "2026-07-22T10:13:48Z"})
b.configmap("n8n", ns, {"N8N_METRICS": "true", "N8N_DIAGNOSTICS_ENABLED": "false", "GENERIC_TIMEZONE": "Europe/London"})
b.raw("config.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": b.meta("ConfigMap", "kube-proxy-config", "kube-system", None, None, "2026-02-01T09:00:00Z"),
                      "data": {"config": "mode: iptables\nclusterCIDR: \"\"\n"}})
b.event("Deployment", "n8n-worker", ns, "ScalingReplicaSet", "Scaled up replica set n8n-worker-%s to 3" % wk[0]["metadata"]["labels"]["pod-template-hash"], "2026-07-18T08:21:00Z", component="deployment-controller", api="apps/v1")
b.event("Node", nodes[2], None, "NodeNotReady", "Node %s status is now: NodeNotReady" % nodes[2], "2026-07-22T09:58:12Z", type_="Normal", component="node-controller")
b.event("Node", nodes[2], None, "NodeReady", "Node %s status is now: NodeReady" % nodes[2], "2026-07-22T09:58:52Z", type_="Normal", component="kubelet", host=nodes[2])

rng = b.rng
W = [pname(p) for p in wk]
CD = [pname(p) for p in cd]
exe = [48210]
wfs = [("Lead sync: HubSpot -> Postgres", "api.hubapi.com", "HubSpot"), ("Slack incident digest", "slack.com", "Slack"), ("Invoice webhook -> Xero", "api.xero.com", "HTTP Request"),
       ("GitHub release notifier", "api.github.com", "HTTP Request"), ("CRM enrichment (Clearbit)", "person.clearbit.com", "HTTP Request")]


def worker(t):
    exe[0] += 1
    p = rng.choice(W)
    wf = rng.choice(wfs)
    wid = "wf" + str(abs(hash(wf[0])) % 9999)
    b.log(t, "n8n-worker", p, "Worker started execution %d (job %d)" % (exe[0], exe[0]), "info", container="n8n-worker", workflowId=wid)
    t2 = t + dt.timedelta(milliseconds=rng.randint(300, 2500))
    if t >= onset:
        t3 = t + dt.timedelta(seconds=rng.uniform(5, 10))
        b.log(t3, "n8n-worker", p, 'Workflow execution failed: NodeApiError: getaddrinfo EAI_AGAIN %s (node "%s", workflow "%s", execution %d)' % (wf[1], wf[2], wf[0], exe[0]), "error", container="n8n-worker", workflowId=wid)
        b.log(t3 + dt.timedelta(milliseconds=8), "n8n-worker", p, "Worker finished execution %d (job %d)" % (exe[0], exe[0]), "info", container="n8n-worker", workflowId=wid)
    elif wf[0].startswith("CRM") and rng.random() < 0.7:
        b.log(t2, "n8n-worker", p, 'Workflow execution failed: NodeApiError: Authorization failed - please check your credentials (401 Unauthorized) (node "HTTP Request", workflow "%s", execution %d)' % (wf[0], exe[0]), "error", container="n8n-worker", workflowId=wid)
        b.log(t2 + dt.timedelta(milliseconds=6), "n8n-worker", p, "Worker finished execution %d (job %d)" % (exe[0], exe[0]), "info", container="n8n-worker", workflowId=wid)
    else:
        b.log(t2, "n8n-worker", p, "Worker finished execution %d (job %d)" % (exe[0], exe[0]), "info", container="n8n-worker", workflowId=wid)


b.every(b.start, b.end, 7, worker)


def main_l(t):
    if rng.random() < 0.5:
        b.log(t, "n8n", pname(main[0]), "Pruning old execution data (hard-deleted %d executions)" % rng.randint(0, 40), "info", container="n8n")
    else:
        b.log(t, "n8n-webhook", pname(wh[0]), 'Received webhook "POST" for path "%s"' % rng.choice(["xero-invoice", "github-release", "typeform-lead"]), "info", container="n8n-webhook")


b.every(b.start, b.end, 90, main_l)
for t in ["2026-07-22T09:52:10Z", "2026-07-22T10:21:40Z", "2026-07-22T10:47:05Z"]:
    b.log(T(t), "n8n-worker", W[0], "Stalled job detected, moving back to wait (Bull queue jobs) jobId=%d" % rng.randint(48000, 48500), "warn", container="n8n-worker")
b.log(T("2026-07-22T09:55:00Z"), "n8n", pname(main[0]), "There are deprecations related to your environment variables. Please take the recommended actions to update your configuration:\n - N8N_RUNNERS_ENABLED -> Running n8n without task runners is deprecated. Task runners will be turned on by default in a future version.", "warn", container="n8n")


def cdn(t, p=None):
    p = p or rng.choice(CD)
    host = rng.choice(["api.hubapi.com.", "slack.com.", "api.xero.com.", "api.github.com.", "person.clearbit.com.", "sts.eu-west-2.amazonaws.com.", "hooks.slack.com."])
    b.log(t, "coredns", p, "[ERROR] plugin/errors: 2 %s %s: read udp %s:%d->10.200.0.%d:53: i/o timeout" % (host, rng.choice(["A", "AAAA"]), cd[CD.index(p)]["status"]["podIP"], rng.randint(30000, 60000), rng.choice([2, 3])),
          "error", container="coredns", ns="kube-system")


for p, off in zip(CD, [0, 7]):
    t = onset + dt.timedelta(seconds=off)
    b.log(t - dt.timedelta(seconds=1), "coredns", p, "[INFO] Reloading", "info", container="coredns", ns="kube-system")
    b.log(t, "coredns", p, "[INFO] plugin/reload: Running configuration SHA512 = 3c9e6f0b2a1d7e44b8c0f5a9d2e1c7b6a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9", "info", container="coredns", ns="kube-system")
    b.log(t + dt.timedelta(milliseconds=40), "coredns", p, "[INFO] Reloading complete", "info", container="coredns", ns="kube-system")
b.every(onset + dt.timedelta(seconds=20), b.end, 2.2, cdn)
b.log(T("2026-07-22T09:58:20Z"), "coredns", CD[1], "[WARNING] No files matching import glob pattern: custom/*.override", "warning", container="coredns", ns="kube-system")

# metrics
b.rng_series('sum by (rcode) (rate(coredns_dns_responses_total{namespace="kube-system"}[5m]))', "CoreDNS responses by rcode",
             [({"rcode": "NOERROR"}, lambda t, i: b.noise(410) if t < onset else b.noise(300)), ({"rcode": "NXDOMAIN"}, lambda t, i: b.noise(520) if t < onset else b.noise(515)),
              ({"rcode": "SERVFAIL"}, lambda t, i: b.noise(0.2, 0.5) if t < onset else b.noise(46, 0.1))])
b.rng_series('sum by (to) (rate(coredns_forward_requests_total{namespace="kube-system"}[5m]))', "CoreDNS upstream forward requests by target",
             [({"to": "10.60.0.2:53"}, lambda t, i: b.noise(118) if t < onset else None), ({"to": "10.200.0.2:53"}, lambda t, i: None if t < onset else b.noise(92)),
              ({"to": "10.200.0.3:53"}, lambda t, i: None if t < onset else b.noise(91))])
b.rng_series('sum by (to) (rate(coredns_forward_healthcheck_failures_total{namespace="kube-system"}[5m]))', "CoreDNS forward healthcheck failures",
             [({"to": "10.200.0.2:53"}, lambda t, i: None if t < onset else b.noise(0.5, 0.1)), ({"to": "10.200.0.3:53"}, lambda t, i: None if t < onset else b.noise(0.5, 0.1))])
b.rng_series('histogram_quantile(0.99, sum by (le) (rate(coredns_dns_request_duration_seconds_bucket{namespace="kube-system"}[5m])))', "CoreDNS p99 latency (s)",
             [({}, lambda t, i: b.noise(0.012, 0.2) if t < onset else b.noise(4.0, 0.05))])
b.rng_series('sum by (status) (increase(n8n_workflow_executions_total{namespace="automation"}[5m]))', "n8n executions per 5m by status",
             [({"status": "success"}, lambda t, i: b.noise(38) if t < onset else b.noise(5, 0.3)), ({"status": "error"}, lambda t, i: b.noise(4, 0.3) if t < onset else b.noise(38))])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"automation|kube-system"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in W + CD + [pname(main[0])]], fmt="%d")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace=~"automation|kube-system", container!=""}[5m]))', "CPU by pod",
             [({"pod": p}, lambda t, i: b.noise(0.15, 0.3)) for p in W] + [({"pod": p}, lambda t, i: b.noise(0.02 if t < onset else 0.05, 0.3)) for p in CD])
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="automation", container!=""})', "Memory by pod", [({"pod": p}, lambda t, i: b.noise(3.9e8, 0.04)) for p in W + [pname(main[0])]], fmt="%.0f")

notes = """
# apx-n8n-coredns-forward — a CoreDNS Corefile edit sends all external lookups to unreachable resolvers

**Incident.** n8n in queue mode (ns `automation`, EKS staging). At 10:13:48 an engineer edits the `coredns` ConfigMap (ticket
CHG-4471) to add a `corp.acme.internal` stanza forwarding to the corporate resolvers 10.200.0.2/.3, but also replaces
`forward . /etc/resolv.conf` in the default `.:53` block with those resolvers. They are not reachable from the VPC. CoreDNS
hot-reloads at 10:14:21 (`plugin/reload`), cluster.local names still resolve (kubernetes plugin), but every external name times out
(`[ERROR] plugin/errors: 2 api.hubapi.com. A: read udp ...->10.200.0.2:53: i/o timeout`) -> SERVFAIL. n8n workers calling HubSpot,
Slack, Xero, GitHub fail with `getaddrinfo EAI_AGAIN`. n8n's own Postgres/Redis (in-cluster names) keep working, so the pods look healthy.

**Chain / evidence.** Failing executions (n8n-worker logs `EAI_AGAIN <host>`, metric `n8n_workflow_executions_total` by status) ->
CoreDNS SERVFAIL rate and p99 latency jump at 10:14, forward targets change from the VPC resolver 10.60.0.2 to 10.200.0.2/.3 with
healthcheck failures (metrics) -> CoreDNS logs: reload at 10:14:21 then i/o timeouts to 10.200.0.x -> `coredns` ConfigMap
Corefile in k8s/config.yaml (annotations: change ticket, edited 10:13:48).

**Decoys.** A CRM enrichment workflow failing with 401 since before the window (bad credentials); Bull "stalled job" warnings;
n8n env-var deprecation warning; node ip-10-60-41-7 NotReady for 40 s at 09:58 (recovered, before onset); CoreDNS import-glob warning.

**must_mention:** `dns`.

**Provenance.** Kubernetes DNS failure stories (k8s.af: CoreDNS/ndots/upstream outages), Chaos Mesh DNSChaos, awesome-prometheus-alerts
CoreDNS rules (CorednsPanicCount / SERVFAIL ratio). CoreDNS Corefile and log formats are upstream; EKS coredns add-on image.
App: n8n queue mode (main, worker, webhook; Redis Bull queue, Postgres). Generated by gen/c05_n8n.py (seed 505).
"""
b.write(["dns"], notes)
