from lib import *
import math

b = Bundle("apx-metabase-heap-oom", "Metabase test: dashboards 502 every few minutes", "2026-05-12T12:30:00Z", "2026-05-12T13:40:00Z",
           "test", "test-gke-usc1",
           "metabase in test (ns bi) keeps going down every ~10 minutes since after lunch: dashboards return 502 and then come back. "
           "we did the routine metabase patch upgrade around 13:00. what's going on?", 606)
b.ns = ns = "bi"
T = P
chg = T("2026-05-12T12:58:10Z")
nodes = mknodes(b, ["gke-test-usc1-pool-2-5b8e91c3-1h7v", "gke-test-usc1-pool-2-5b8e91c3-q0dz"], zones=["us-central1-a", "us-central1-b"], instance="e2-standard-8",
                cpu="8", alloc_cpu="7910m", mem="32880876Ki", alloc_mem="29094636Ki", kubelet="v1.30.5-gke.1443001", os_image="Container-Optimized OS from Google", kernel="6.1.100+")
b.namespace(ns, {"environment": "test"})
oom = {0: ["2026-05-12T13:09:41Z", "2026-05-12T13:26:02Z"], 1: ["2026-05-12T13:17:15Z", "2026-05-12T13:33:48Z"]}
env = {"MB_DB_TYPE": "postgres", "MB_DB_HOST": "metabase-postgresql", "MB_DB_DBNAME": "metabase", "MB_JETTY_PORT": "3000", "MB_SITE_URL": "https://bi.test.acme.com",
       "JAVA_OPTS": "-Xmx3g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError", "JAVA_TIMEZONE": "UTC", "MB_DB_PASS": {"valueFrom": {"secretKeyRef": {"name": "metabase-db", "key": "password"}}}}
res = {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "2Gi"}}
old_c = b.container("metabase", "metabase/metabase:v0.50.20", 3000, dict(env, JAVA_OPTS="-Xmx1536m -XX:+UseG1GC"), res)
cs = [restarted(2, "OOMKilled", 137, "2026-05-12T13:10:02Z", oom[0][1], "2026-05-12T13:26:06Z"),
      restarted(2, "OOMKilled", 137, "2026-05-12T13:17:19Z", oom[1][1], "2026-05-12T13:33:52Z")]
mb = app(b, "metabase", ns, "metabase/metabase:v0.50.21", 2, 3000, nodes, labels={"app": "metabase", "release": "metabase"}, env=env, resources=res,
         readiness=b.http_probe("/api/health", 3000, 5, 3, 3, 30), liveness=b.http_probe("/api/health", 3000, 10, 5, 6, 120), revision=6, created="2025-11-04T10:00:00Z",
         pod_created=["2026-05-12T12:58:12Z", "2026-05-12T12:59:20Z"], rs_created="2026-05-12T12:58:10Z", old_rs=("6d9c8f7b54", 5, [old_c], "2026-03-30T09:12:00Z"), cstatus=cs)
pg = app(b, "metabase-postgresql", ns, "docker.io/bitnami/postgresql:15.7.0", 1, 5432, nodes[1:], kind="StatefulSet", labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "metabase"},
         container_name="postgresql", created="2025-11-04T10:00:00Z", pod_created="2026-04-28T05:00:00Z")
M = [pname(p) for p in mb]
b.event("Deployment", "metabase", ns, "ScalingReplicaSet", "Scaled up replica set metabase-%s to 1" % mb[0]["metadata"]["labels"]["pod-template-hash"], "2026-05-12T12:58:10Z", component="deployment-controller", api="apps/v1")
b.event("Deployment", "metabase", ns, "ScalingReplicaSet", "Scaled down replica set metabase-6d9c8f7b54 to 0 from 1", "2026-05-12T13:00:31Z", component="deployment-controller", api="apps/v1")
for k, ts in oom.items():
    for t in ts:
        b.event("Node", mb[k]["spec"]["nodeName"], None, "OOMKilling", "Memory cgroup out of memory: Killed process %d (java) total-vm:6212344kB, anon-rss:2086912kB, file-rss:21504kB, shmem-rss:0kB, UID:2000 pgtables:5012kB oom_score_adj:984" % b.rng.randint(3000, 9000),
                t, type_="Warning", component="kernel-monitor", host=mb[k]["spec"]["nodeName"])
    b.event("Pod", M[k], ns, "Pulled", 'Container image "metabase/metabase:v0.50.21" already present on machine', ts[0], ts[1], 2, host=mb[k]["spec"]["nodeName"], fieldPath="spec.containers{metabase}")
    b.event("Pod", M[k], ns, "Unhealthy", "Readiness probe failed: Get \"http://%s:3000/api/health\": dial tcp %s:3000: connect: connection refused" % (mb[k]["status"]["podIP"], mb[k]["status"]["podIP"]),
            ts[0], ts[1], 14, "Warning", host=mb[k]["spec"]["nodeName"], fieldPath="spec.containers{metabase}")
b.configmap("metabase-config", ns, {"MB_EMOJI_IN_LOGS": "false", "MB_COLORIZE_LOGS": "false", "MB_QUERY_CACHING_MIN_TTL": "60"})
b.event("Pod", pname(pg[0]), ns, "Unhealthy", "Liveness probe failed: command timed out", "2026-05-12T12:41:22Z", type_="Warning", host=nodes[1], fieldPath="spec.containers{postgresql}")

rng = b.rng
ups = {0: [T("2026-05-12T12:58:14Z"), T("2026-05-12T13:10:02Z"), T("2026-05-12T13:26:06Z")], 1: [T("2026-05-12T12:59:22Z"), T("2026-05-12T13:17:19Z"), T("2026-05-12T13:33:52Z")]}
downs = {0: [T(x) for x in oom[0]], 1: [T(x) for x in oom[1]]}


def alive(k, t):
    if t < chg + dt.timedelta(seconds=60 * k):
        return True
    for u in ups[k]:
        d = [x for x in downs[k] if x > u]
        end = d[0] if d else b.end + dt.timedelta(hours=1)
        if u + dt.timedelta(seconds=50) <= t < end:
            return True
    return False


def start(k, u, xmx):
    p = M[k]
    for off, msg in [(1, "Starting Metabase version v0.50.21 (4b1e1f4 release-x.50.x) ..."), (1.2, "System info:\n {\"file.encoding\" \"UTF-8\",\n \"java.runtime.name\" \"OpenJDK Runtime Environment\",\n \"java.runtime.version\" \"11.0.23+9\",\n \"user.timezone\" \"UTC\"}"),
                     (1.4, "Maximum memory available to JVM: %s" % xmx), (9, "Setting up and migrating Metabase DB. Please sit tight, this may take a minute..."),
                     (36, "Database setup took 21.3 s"), (48, "Metabase Initialization COMPLETE in 47.1 s")]:
        t = u + dt.timedelta(seconds=off)
        b.log(t, "metabase", p, "%s INFO metabase.core :: %s" % (t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], msg), "INFO", container="metabase")


for k in (0, 1):
    for u in ups[k]:
        start(k, u, "3.0 GB")
heap = {}


def req(t):
    live = [k for k in (0, 1) if alive(k, t)]
    if t < chg:
        live = [0]
    if not live:
        return
    k = rng.choice(live)
    p = M[k] if t >= chg else "metabase-6d9c8f7b54-" + b.hsh(5, "old")
    if rng.random() < 0.7:
        path, ms, calls = "/api/card/%d/query" % rng.randint(10, 120), rng.uniform(300, 9000), rng.randint(8, 30)
        meth = "POST"
    else:
        path, ms, calls = rng.choice(["/api/dashboard/%d" % rng.randint(1, 40), "/api/user/current", "/api/session/properties", "/api/collection/root/items"]), rng.uniform(10, 400), rng.randint(2, 12)
        meth = "GET"
    b.log(t, "metabase", p, "%s INFO metabase.server.middleware.log :: %s %s 200%s %.1f ms (%d DB calls) App DB connections: %d/15 Jetty threads: %d/50 (%d idle, 0 queued) (%d total active threads) Queries in flight: %d (0 queued)" % (
        t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], meth, path, " [ASYNC: completed]" if meth == "POST" else "", ms, calls, rng.randint(1, 6), rng.randint(3, 20), rng.randint(1, 8), rng.randint(90, 160), rng.randint(0, 7)),
          "INFO", container="metabase")


b.every(b.start, b.end, 3, req)


def sync(t):
    b.log(t, "metabase", rng.choice(M) if t > chg else "metabase-6d9c8f7b54-" + b.hsh(5, "old"), "%s WARN metabase.sync.util :: Error fingerprinting Table 42 'legacy.orders_archive'\ncom.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure\n\nThe last packet sent successfully to the server was 0 milliseconds ago. The driver has not received any packets from the server." % t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], "WARN", container="metabase")


b.every(b.start, b.end, 420, sync)
b.log(T("2026-05-12T12:41:20Z"), "metabase-postgresql", pname(pg[0]), "2026-05-12 12:41:20.118 GMT [1] LOG:  checkpoint complete: wrote 18213 buffers (55.6%); 0 WAL file(s) added, 0 removed, 12 recycled; write=29.912 s, sync=8.021 s, total=38.447 s", "LOG", container="postgresql")


def mem(k):
    def f(t, i):
        if t < chg + dt.timedelta(seconds=60 * k):
            return b.noise(1.42e9, 0.02) if k == 0 else None
        if not alive(k, t):
            return b.noise(3.5e8, 0.2)
        u = max(x for x in ups[k] if x <= t)
        return min(2147483648 * 0.997, 6.5e8 + (t - u).total_seconds() * rng.uniform(1.9e6, 2.3e6))
    return f


b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="bi", container="metabase"})', "Metabase memory working set by pod",
             [({"pod": "metabase-6d9c8f7b54-" + b.hsh(5, "old")}, lambda t, i: b.noise(1.42e9, 0.02) if t < chg + dt.timedelta(seconds=140) else None)] + [({"pod": M[k]}, mem(k)) for k in (0, 1)], fmt="%.0f")
b.rng_series('sum by (pod) (kube_pod_container_resource_limits{namespace="bi", container="metabase", resource="memory"})', "Metabase memory limit by pod",
             [({"pod": M[k]}, lambda t, i: 2147483648) for k in (0, 1)], fmt="%.0f")
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="bi"})', "Restarts",
             [({"pod": M[k]}, (lambda k: lambda t, i: restarts_series(oom[k], t))(k)) for k in (0, 1)] + [({"pod": pname(pg[0])}, lambda t, i: 0)], fmt="%d")
b.rng_series('sum by (pod, reason) (kube_pod_container_status_last_terminated_reason{namespace="bi"})', "Last terminated reason",
             [({"pod": M[k], "reason": "OOMKilled"}, (lambda k: lambda t, i: 1 if t >= T(oom[k][0]) else None)(k)) for k in (0, 1)], fmt="%d")
b.rng_series('sum by (pod) (jvm_memory_bytes_used{namespace="bi", area="heap"})', "JVM heap used (jmx exporter)",
             [({"pod": M[k]}, (lambda k: lambda t, i: (mem(k)(t, i) or 0) * 0.78 if alive(k, t) else None)(k)) for k in (0, 1)], fmt="%.0f")
b.rng_series('sum by (pod) (jvm_memory_bytes_max{namespace="bi", area="heap"})', "JVM heap max",
             [({"pod": M[k]}, (lambda k: lambda t, i: 3221225472 if alive(k, t) and t > chg else None)(k)) for k in (0, 1)], fmt="%.0f")


def code(c):
    def f(t, i):
        n = sum(1 for k in (0, 1) if alive(k, t)) if t > chg else 2
        base = 6.5
        if c == "200":
            return b.noise(base * n / 2)
        if c == "502":
            return b.noise(base * (2 - n) / 2, 0.1) if n < 2 else 0.0
        if c == "504":
            return b.noise(0.05, 0.6)
    return f


b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="bi", ingress="metabase"}[5m]))', "Metabase requests by status", [({"status": c}, code(c)) for c in ["200", "502", "504"]])
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="bi", container="metabase"}[5m]))', "CPU by pod", [({"pod": M[k]}, (lambda k: lambda t, i: b.noise(0.9 if alive(k, t) else 0.1, 0.25))(k)) for k in (0, 1)])

notes = """
# apx-metabase-heap-oom — JAVA_OPTS -Xmx3g in a 2Gi container; Metabase pods OOMKilled in turn

**Incident.** Metabase (ns `bi`, GKE test). The 12:58 rollout (revision 6) was the routine patch upgrade v0.50.20 -> v0.50.21 but
also changed `JAVA_OPTS` from `-Xmx1536m` to `-Xmx3g` (someone raised the heap after "Java heap space" complaints) while the container
memory limit stayed 2Gi. The JVM now happily grows its heap past the cgroup limit under dashboard query load; the kernel OOM killer
kills java (exit 137, `OOMKilled`) every ~16 minutes per pod, alternating between the two replicas. Metabase logs nothing before
dying; during each ~50 s restart one replica is gone and requests routed there get 502.

**Chain / evidence.** 502s in ingress metrics (13:09, 13:17, 13:26, 13:33) -> restarts and `lastState.terminated.reason: OOMKilled`,
exitCode 137 (k8s/pods.yaml, `kube_pod_container_status_last_terminated_reason`) -> node `OOMKilling` events "Memory cgroup out of memory:
Killed process (java)" -> memory working set ramps to the 2Gi limit after each start, while `jvm_memory_bytes_max` is 3 GiB
(metrics) -> startup log `Maximum memory available to JVM: 3.0 GB` -> Deployment/ReplicaSet diff: JAVA_OPTS -Xmx1536m -> -Xmx3g,
limit 2Gi (k8s/workloads.yaml).

**Decoys.** The image upgrade v0.50.20 -> v0.50.21 in the same rollout (the question points at it); recurring sync WARN for a dead
legacy MySQL source; a Postgres liveness timeout and slow checkpoint at 12:41 (before onset); occasional 504s from slow cards.

**must_mention:** `oom` (OOMKilled / out of memory: heap larger than the container limit).

**Provenance.** awesome-prometheus-alerts KubernetesContainerOomKiller; LitmusChaos pod-memory-hog; classic JVM-in-container
postmortems (Xmx above cgroup limit). App objects follow the Metabase docs/Helm chart (metabase/metabase image, MB_DB_* env,
/api/health, log format of metabase.server.middleware.log). Generated by gen/c06_metabase.py (seed 606).
"""
b.write(["oom"], notes)
