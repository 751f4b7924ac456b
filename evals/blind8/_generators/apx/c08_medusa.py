from lib import *
import math

b = Bundle("apx-medusa-liveness-restarts", "Medusa test: storefront 'Failed to fetch' errors", "2026-04-21T15:00:00Z", "2026-04-21T16:10:00Z",
           "test", "test-eks-use2",
           "medusa test shop (ns shop): the storefront intermittently shows 'Failed to fetch products' / cart errors since ~15:25, "
           "a few minutes at a time. the storefront pods themselves are fine. can you find out why?", 808)
b.ns = ns = "shop"
T = P
chg = T("2026-04-21T15:18:05Z")
nodes = mknodes(b, ["ip-10-70-8-41.us-east-2.compute.internal", "ip-10-70-22-9.us-east-2.compute.internal"], zones=["us-east-2a", "us-east-2b"], instance="m6i.large",
                cpu="2", alloc_cpu="1930m", mem="7934424Ki", alloc_mem="7245272Ki")
b.namespace(ns, {"environment": "test"})
kills = {0: ["2026-04-21T15:24:48Z", "2026-04-21T15:36:12Z", "2026-04-21T15:51:40Z", "2026-04-21T16:03:05Z"], 1: ["2026-04-21T15:29:30Z", "2026-04-21T15:44:02Z", "2026-04-21T15:58:51Z"]}
env = {"DATABASE_URL": {"valueFrom": {"secretKeyRef": {"name": "medusa", "key": "database-url"}}}, "REDIS_URL": "redis://medusa-redis-master:6379", "MEDUSA_WORKER_MODE": "server",
       "STORE_CORS": "https://shop.test.acme.store", "NODE_ENV": "production", "PORT": "9000"}
res = {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "1Gi"}}
live = b.http_probe("/health", 9000, 5, 1, 2, 20)
old = b.container("medusa", "registry.acme.io/shop/medusa-backend:2.4.0-b112", 9000, env, res, readiness=b.http_probe("/health", 9000, 10, 3, 3))
cs = [restarted(4, "Error", 137, "2026-04-21T15:51:45Z", kills[0][3], "2026-04-21T16:03:10Z"), restarted(3, "Error", 137, "2026-04-21T15:44:07Z", kills[1][2], "2026-04-21T15:58:56Z")]
srv = app(b, "medusa-server", ns, "registry.acme.io/shop/medusa-backend:2.4.0-b112", 2, 9000, nodes, labels={"app": "medusa", "component": "server"}, env=env, resources=res,
          container_name="medusa", command=["npm", "run", "start"], readiness=b.http_probe("/health", 9000, 10, 3, 3), liveness=live, revision=5, created="2025-12-02T10:00:00Z",
          pod_created=["2026-04-21T15:18:06Z", "2026-04-21T15:18:50Z"], rs_created="2026-04-21T15:18:05Z", old_rs=("79f6d4c8b5", 4, [old], "2026-04-14T11:00:00Z"), cstatus=cs,
          pod_annotations={"kubectl.kubernetes.io/restartedAt": None} if False else None)
wk = app(b, "medusa-worker", ns, "registry.acme.io/shop/medusa-backend:2.4.0-b112", 1, None, nodes[1:], labels={"app": "medusa", "component": "worker"}, env=dict(env, MEDUSA_WORKER_MODE="worker"),
         container_name="medusa", command=["npm", "run", "start"], created="2025-12-02T10:00:00Z", pod_created="2026-04-14T11:00:40Z")
sf = app(b, "storefront", ns, "registry.acme.io/shop/storefront:2026.04.17", 2, 8000, nodes, labels={"app": "storefront"},
         env={"MEDUSA_BACKEND_URL": "http://medusa-server:9000", "NEXT_PUBLIC_MEDUSA_PUBLISHABLE_KEY": "pk_01HX...", "NEXT_PUBLIC_BASE_URL": "https://shop.test.acme.store"},
         created="2025-12-02T10:00:00Z", pod_created="2026-04-17T16:00:00Z")
pg = app(b, "medusa-postgresql", ns, "docker.io/bitnami/postgresql:16.2.0", 1, 5432, nodes[:1], kind="StatefulSet", labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "medusa"},
         container_name="postgresql", created="2025-12-02T10:00:00Z", pod_created="2026-04-01T03:00:00Z")
rd = app(b, "medusa-redis-master", ns, "docker.io/bitnami/redis:7.2.4", 1, 6379, nodes[1:], kind="StatefulSet", labels={"app.kubernetes.io/name": "redis", "app.kubernetes.io/instance": "medusa"},
         container_name="redis", created="2025-12-02T10:00:00Z", pod_created="2026-04-01T03:00:00Z")
M = [pname(p) for p in srv]
b.event("Deployment", "medusa-server", ns, "ScalingReplicaSet", "Scaled up replica set medusa-server-%s to 1" % srv[0]["metadata"]["labels"]["pod-template-hash"], "2026-04-21T15:18:05Z", component="deployment-controller", api="apps/v1")
b.event("Deployment", "medusa-server", ns, "ScalingReplicaSet", "Scaled down replica set medusa-server-79f6d4c8b5 to 0 from 1", "2026-04-21T15:19:31Z", component="deployment-controller", api="apps/v1")
for k, ks in kills.items():
    ip = srv[k]["status"]["podIP"]
    b.event("Pod", M[k], ns, "Unhealthy", 'Liveness probe failed: Get "http://%s:9000/health": context deadline exceeded (Client.Timeout exceeded while awaiting headers)' % ip, ks[0], ks[-1], 5 * len(ks) + 3, "Warning", host=nodes[k], fieldPath="spec.containers{medusa}")
    b.event("Pod", M[k], ns, "Killing", "Container medusa failed liveness probe, will be restarted", ks[0], ks[-1], len(ks), host=nodes[k], fieldPath="spec.containers{medusa}")
    b.event("Pod", M[k], ns, "Unhealthy", 'Readiness probe failed: Get "http://%s:9000/health": dial tcp %s:9000: connect: connection refused' % (ip, ip), ks[0], ks[-1], 3 * len(ks), "Warning", host=nodes[k], fieldPath="spec.containers{medusa}")
b.event("Pod", pname(sf[0]), ns, "Pulled", 'Container image "registry.acme.io/shop/storefront:2026.04.17" already present on machine', "2026-04-17T16:00:02Z", host=nodes[0], fieldPath="spec.containers{storefront}")
b.configmap("medusa-config", ns, {"medusa-config.ts": "module.exports = defineConfig({ projectConfig: { http: { storeCors: process.env.STORE_CORS }, workerMode: process.env.MEDUSA_WORKER_MODE }, admin: { disable: true } })\n"})

rng = b.rng
restart_at = {k: [T(x) + dt.timedelta(seconds=5) for x in v] for k, v in kills.items()}


def up(k, t):
    if t < chg + dt.timedelta(seconds=45 * k):
        return True
    for x in kills[k]:
        if T(x) <= t < T(x) + dt.timedelta(seconds=38):
            return False
    return True


def busy(t):  # event loop saturated windows (price-list import + traffic spikes)
    return any(T(x) - dt.timedelta(seconds=25) <= t < T(x) for k in kills for x in kills[k])


def medusa_log(t):
    cand = [k for k in (0, 1) if up(k, t)]
    if t < chg:
        p = "medusa-server-79f6d4c8b5-" + b.hsh(5, "o", rng.randint(0, 1))
    elif not cand:
        return
    else:
        p = M[rng.choice(cand)]
    path = rng.choice(["/store/products?limit=12&offset=0&region_id=reg_01HV", "/store/carts/cart_01HX%s" % rid(rng, 6, "ABCDEFGHJKMNPQRSTVWXYZ0123456789"), "/store/regions", "/store/products/prod_01HV%s" % rid(rng, 6, "ABCDEFGHJKMNPQRSTVWXYZ0123456789"),
                       "/store/carts/cart_01HX%s/line-items" % rid(rng, 6, "ABCDEFGHJKMNPQRSTVWXYZ0123456789")])
    ms = rng.uniform(15, 140) * (12 if busy(t) else 1)
    meth = "POST" if path.endswith("line-items") else "GET"
    b.log(t, "medusa-server", p, "http:    %s %s \u2190 - (200) - %.3f ms" % (meth, path, ms), "http", container="medusa")


b.every(b.start, b.end, 1.5, medusa_log)
for k in (0, 1):
    for x in kills[k]:
        t = T(x) + dt.timedelta(seconds=7)
        for off, m in [(0, "info:    Skipping instrumentation registration. No register function found."), (3, "info:    Connection to Redis in module 'event-bus-redis' established"),
                       (21, "info:    Server is ready on port: 9000 \u2013 30ms")]:
            b.log(t + dt.timedelta(seconds=off), "medusa-server", M[k], m, "info", container="medusa")
        b.log(T(x) - dt.timedelta(seconds=12), "medusa-server", M[k], "info:    Processing price-list sync batch 7/40 (500 variants)" if k == 0 else "info:    Processing price-list sync batch 19/40 (500 variants)", "info", container="medusa")
S = [pname(p) for p in sf]


def sfl(t):
    if all(up(k, t) for k in (0, 1)) or rng.random() < 0.3:
        return
    b.log(t, "storefront", rng.choice(S), "Error: Failed to fetch products\n    at /app/.next/server/app/[countryCode]/(main)/store/page.js:1:8123\n  [cause]: TypeError: fetch failed\n    [cause]: Error: connect ECONNREFUSED 172.20.41.77:9000\n        at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {\n      errno: -111,\n      code: 'ECONNREFUSED',\n      syscall: 'connect'\n    }" if rng.random() < 0.6 else
          "Error: Request failed with status code 502 (POST /store/carts/line-items)\n    at addToCart (/app/.next/server/chunks/771.js:1:4419)", "error", container="storefront")


b.every(b.start, b.end, 2.5, sfl)
for t in ["2026-04-21T15:07:10Z", "2026-04-21T15:40:10Z"]:
    b.log(T(t), "medusa-worker", pname(wk[0]), "warn:    Stripe webhook signature verification failed for event evt_3P%s - ignoring" % rid(rng, 12, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"), "warn", container="medusa")
b.log(T("2026-04-21T15:11:00Z"), "medusa-worker", pname(wk[0]), "info:    Scheduled job price-list-sync started (40 batches)", "info", container="medusa")
for k in (0, 1):
    for x in kills[k]:
        t = T(x) + dt.timedelta(seconds=1)
        b.log(t, "medusa-postgresql", pname(pg[0]), "%s UTC [%d] LOG:  could not receive data from client: Connection reset by peer" % (t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3], rng.randint(2000, 9000)), "LOG", container="postgresql")

b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="shop"})', "Restarts",
             [({"pod": M[k]}, (lambda k: lambda t, i: restarts_series(kills[k], t + dt.timedelta(seconds=-6)) if t >= chg else None)(k)) for k in (0, 1)] + [({"pod": p}, lambda t, i: 0) for p in S + [pname(wk[0])]], fmt="%d")
b.rng_series('sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{namespace="shop", container="medusa"}[5m])) / sum by (pod) (rate(container_cpu_cfs_periods_total{namespace="shop", container="medusa"}[5m]))', "CPU throttled ratio",
             [({"pod": M[k]}, (lambda k: lambda t, i: (b.noise(0.42, 0.2) if busy(t + dt.timedelta(seconds=30)) else b.noise(0.12, 0.4)) if t >= chg else None)(k)) for k in (0, 1)])
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="shop", container="medusa"}[5m]))', "CPU by pod",
             [({"pod": M[k]}, (lambda k: lambda t, i: (0.49 if busy(t + dt.timedelta(seconds=30)) else b.noise(0.31, 0.2)) if t >= chg else None)(k)) for k in (0, 1)])
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="shop", container="medusa"})', "Memory by pod", [({"pod": M[k]}, lambda t, i: b.noise(4.2e8, 0.05) if t >= chg else None) for k in (0, 1)], fmt="%.0f")
b.rng_series('max by (pod) (nodejs_eventloop_lag_p99_seconds{namespace="shop", app="medusa"})', "Node.js event loop lag p99 (s)",
             [({"pod": M[k]}, (lambda k: lambda t, i: (b.noise(1.6, 0.3) if busy(t + dt.timedelta(seconds=30)) else b.noise(0.08, 0.4)) if t >= chg and up(k, t) else None)(k)) for k in (0, 1)])


def sc(c):
    def f(t, i):
        down = sum(1 for k in (0, 1) if any(T(x) <= t + dt.timedelta(seconds=s) < T(x) + dt.timedelta(seconds=60) for x in kills[k] for s in (0, 30)))
        base = 14 + 2 * math.sin(i / 5)
        if c == "200":
            return b.noise(base * (1 - 0.45 * down))
        return b.noise(base * 0.45 * down, 0.2) if down else 0.0
    return f


b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="shop", ingress="storefront"}[5m]))', "Storefront requests by status", [({"status": "200"}, sc("200"))])
b.rng_series('sum by (code) (rate(http_client_requests_total{namespace="shop", app="storefront", target="medusa-server"}[5m]))', "Storefront -> medusa calls by result",
             [({"code": "200"}, sc("200")), ({"code": "ECONNREFUSED"}, sc("err")), ({"code": "502"}, lambda t, i: sc("err")(t, i) * 0.3)])

notes = """
# apx-medusa-liveness-restarts — an over-tight liveness probe restarts the Medusa API under CPU-bound load

**Incident.** Medusa v2 backend (ns `shop`, test). Revision 5 of `medusa-server` (15:18) adds a liveness probe on `/health` with
`periodSeconds: 5, timeoutSeconds: 1, failureThreshold: 2` (previously only a readiness probe) with a CPU limit of 500m. During the
price-list sync (scheduled job started 15:11, batches processed by the server) the single-threaded Node event loop is busy and
CPU-throttled; `/health` answers in >1 s, two consecutive failures -> kubelet kills the container (exit 137) -> ~40 s restart.
The two replicas are killed alternately (7 restarts), so the storefront intermittently gets ECONNREFUSED/502 from `medusa-server`.

**Chain / evidence.** Storefront errors `Failed to fetch products ... ECONNREFUSED` (storefront logs, client-call metric by result)
-> medusa-server restarts (k8s/pods.yaml lastState exit 137, `kube_pod_container_status_restarts_total`) -> events
`Liveness probe failed: ... context deadline exceeded (Client.Timeout exceeded while awaiting headers)` and
`Container medusa failed liveness probe, will be restarted` -> probe spec timeoutSeconds 1 / failureThreshold 2 added in revision 5
(k8s/workloads.yaml, old ReplicaSet has no liveness probe) -> event-loop lag and CPU throttling spikes before each kill (metrics),
request latency x12 in medusa logs before each kill.

**Decoys.** Stripe webhook signature warnings in the worker; Postgres `connection reset by peer` (consequence of kills); CPU throttling
(contributing but not the reason pods die; memory is flat, no OOM); readiness connection-refused events (consequence).

**must_mention:** `liveness` (liveness probe).

**Provenance.** Kubernetes probe-misconfiguration failure stories (k8s.af: liveness probes causing cascading restarts);
awesome-prometheus-alerts KubernetesPodCrashLooping / container restarts; LitmusChaos pod-cpu-hog. App objects follow Medusa v2
(medusa-config, worker mode server/worker, /health, http logger lines). Generated by gen/c08_medusa.py (seed 808).
"""
b.write(["liveness"], notes)
