from lib import *
import math

b = Bundle("apx-cockroachdb-rolling-upgrade-healthy", "CockroachDB under-replicated ranges alert overnight", "2026-03-05T02:50:00Z", "2026-03-05T04:00:00Z",
           "staging", "stg-gke-euw3",
           "staging: overnight CockroachdbUnderreplicatedRanges fired for ~15 min around 03:00, all three cockroachdb pods (ns crdb) restarted "
           "and ledger-api logged a bunch of 40001 retry errors. is the cluster ok or are we about to lose data?", 1616)
b.ns = ns = "crdb"
T = P
up = {2: T("2026-03-05T03:01:05Z"), 1: T("2026-03-05T03:06:20Z"), 0: T("2026-03-05T03:11:40Z")}
nodes = mknodes(b, ["gke-stg-euw3-db-9a0c4e21-0q1x", "gke-stg-euw3-db-9a0c4e21-5mzs", "gke-stg-euw3-db-9a0c4e21-v7tf"], zones=["europe-west3-a", "europe-west3-b", "europe-west3-c"],
                instance="n2-standard-8", cpu="8", alloc_cpu="7910m", mem="32880876Ki", alloc_mem="29094636Ki", kubelet="v1.30.5-gke.1443001", os_image="Container-Optimized OS from Google", kernel="6.1.100+")
b.namespace(ns, {"environment": "staging"})
b.namespace("ledger", {"environment": "staging"})
cl = {"app.kubernetes.io/name": "cockroachdb", "app.kubernetes.io/instance": "crdb", "app.kubernetes.io/component": "cockroachdb"}
cc = b.container("db", "cockroachdb/cockroach:v24.3.6", [("grpc", 26257), ("http", 8080)], {"COCKROACH_CHANNEL": "kubernetes-helm", "GOMAXPROCS": {"valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1"}}}},
                 {"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"cpu": "4", "memory": "8Gi"}}, readiness=b.http_probe("/health?ready=1", "http", 5, 1, 2, 10), liveness=b.http_probe("/health", "http", 5, 1, 3, 30),
                 command=["/bin/bash", "-ecx", "exec /cockroach/cockroach start --join=${STATEFULSET_NAME}-0.${STATEFULSET_FQDN}:26257,${STATEFULSET_NAME}-1.${STATEFULSET_FQDN}:26257,${STATEFULSET_NAME}-2.${STATEFULSET_FQDN}:26257 --advertise-host=$(hostname).${STATEFULSET_FQDN} --certs-dir=/cockroach/cockroach-certs/ --http-port=8080 --port=26257 --cache=25% --max-sql-memory=25% --logtostderr=INFO"])
rev_new = "crdb-cockroachdb-7d6c9b8f54"
b.statefulset("crdb-cockroachdb", ns, cl, [cc], 3, ready=3, created="2025-07-01T10:00:00Z", svc="crdb-cockroachdb", revision=rev_new,
              vct=[{"metadata": {"name": "datadir"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "100Gi"}}, "storageClassName": "premium-rwo"}}])
b.k8s["workloads.yaml"][-1]["metadata"]["generation"] = 9
b.k8s["workloads.yaml"][-1]["status"]["observedGeneration"] = 9
b.k8s["workloads.yaml"][-1]["spec"]["updateStrategy"] = {"type": "RollingUpdate"}
cp = []
for k in range(3):
    cp.append(b.pod("crdb-cockroachdb-%d" % k, ns, dict(cl, **{"controller-revision-hash": rev_new, "statefulset.kubernetes.io/pod-name": "crdb-cockroachdb-%d" % k}), ("StatefulSet", "crdb-cockroachdb"), [cc], nodes[k], iso(up[k] - dt.timedelta(seconds=8)),
                    cstatus={"db": {"ready": True, "restarts": 0, "state": running(iso(up[k] - dt.timedelta(seconds=5)))}}))
b.service("crdb-cockroachdb-public", ns, cl, [("grpc", 26257, "grpc"), ("http", 8080, "http")], endpoints=b.eps_for(cp))
b.add("workloads.yaml", {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": b.meta("ControllerRevision", rev_new, ns, cl, None, "2026-03-05T03:00:02Z", ("StatefulSet", "crdb-cockroachdb")), "revision": 9,
                         "data": {"spec": {"template": {"spec": {"containers": [{"name": "db", "image": "cockroachdb/cockroach:v24.3.6"}]}}}}})
b.add("workloads.yaml", {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": b.meta("ControllerRevision", "crdb-cockroachdb-5f4b8c7d96", ns, cl, None, "2026-01-14T03:00:02Z", ("StatefulSet", "crdb-cockroachdb")), "revision": 8,
                         "data": {"spec": {"template": {"spec": {"containers": [{"name": "db", "image": "cockroachdb/cockroach:v24.3.5"}]}}}}})
b.add("policy.yaml", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": b.meta("PodDisruptionBudget", "crdb-cockroachdb-budget", ns, cl, None, "2025-07-01T10:00:00Z"),
                      "spec": {"maxUnavailable": 1, "selector": {"matchLabels": cl}}, "status": {"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1, "expectedPods": 3, "observedGeneration": 1}})
b.configmap("crdb-maintenance", ns, {"schedule": "Patch upgrades: first Thursday 03:00 UTC via Renovate+Argo CD auto-sync (helm chart cockroachdb 15.x).\n2026-03-05: v24.3.5 -> v24.3.6 (MR !2207, approved 2026-03-04).\nRunbook: PreStop drains node; readiness gates ~5 min per pod.\n"},
            annotations={"acme.io/owner": "data-platform"})
for k in range(3):
    t = up[k]
    b.event("Pod", "crdb-cockroachdb-%d" % k, ns, "Killing", "Stopping container db", iso(t - dt.timedelta(seconds=55)), host=nodes[k], fieldPath="spec.containers{db}")
    b.event("Pod", "crdb-cockroachdb-%d" % k, ns, "Pulled", 'Container image "cockroachdb/cockroach:v24.3.6" already present on machine', iso(t - dt.timedelta(seconds=6)), host=nodes[k], fieldPath="spec.containers{db}")
    b.event("Pod", "crdb-cockroachdb-%d" % k, ns, "Started", "Started container db", iso(t - dt.timedelta(seconds=5)), host=nodes[k], fieldPath="spec.containers{db}")
    b.event("Pod", "crdb-cockroachdb-%d" % k, ns, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", iso(t), iso(t + dt.timedelta(seconds=25)), 5, "Warning", host=nodes[k], fieldPath="spec.containers{db}")
b.event("StatefulSet", "crdb-cockroachdb", ns, "SuccessfulDelete", "delete Pod crdb-cockroachdb-2 in StatefulSet crdb-cockroachdb successful", iso(up[2] - dt.timedelta(seconds=55)), component="statefulset-controller", api="apps/v1")
ll = {"app": "ledger-api"}
lp = app(b, "ledger-api", "ledger", "registry.acme.io/ledger/ledger-api:3.7.0", 3, 8080, nodes, labels=ll, env={"DATABASE_URL": "postgresql://ledger@crdb-cockroachdb-public.crdb:26257/ledger?sslmode=verify-full"},
         created="2025-07-01T10:00:00Z", pod_created="2026-03-02T10:00:00Z")
L = [pname(p) for p in lp]

rng = b.rng


def down(k, t):
    return up[k] - dt.timedelta(seconds=58) <= t < up[k] + dt.timedelta(seconds=25)


def ur(t):
    v = 0
    for k in range(3):
        s = up[k] - dt.timedelta(seconds=58)
        if s <= t < up[k] + dt.timedelta(seconds=240):
            x = (t - s).total_seconds()
            v += 412 * (1 if x < 80 else max(0, 1 - (x - 80) / 220))
    return v


def cr(t, k, sev, pkg, msg, n=None):
    b.log(t, "cockroachdb", "crdb-cockroachdb-%d" % k, "%s%s %d %s \u22ee [T1,Vsystem,n%d] %d  %s" % (sev, t.strftime("%y%m%d %H:%M:%S.%f"), rng.randint(100, 9000), pkg, k + 1, rng.randint(10, 99999), msg),
          {"I": "info", "W": "warning", "E": "error"}[sev], container="db")


def crbg(t):
    k = rng.randint(0, 2)
    if down(k, t):
        return
    r = rng.random()
    if r < 0.6:
        cr(t, k, "I", "server/status/runtime_log.go:47", "runtime stats: %.1f GiB RSS, %d goroutines (stacks: %.1f MiB), %.1f GiB/%.1f GiB Go alloc/total, %.1f GiB CGO alloc/total, %.1f CGO/sec, %.1f/%.1f %%(u/s)time, %.1f %%gc (%dx), %.1f MiB/%.1f MiB (r/w)net" % (
            rng.uniform(3, 4.5), rng.randint(800, 1400), rng.uniform(8, 15), rng.uniform(0.6, 1.2), rng.uniform(1.1, 1.6), rng.uniform(1.5, 2), rng.uniform(40, 200), rng.uniform(10, 40), rng.uniform(2, 6), rng.uniform(0.5, 2), rng.randint(1, 4), rng.uniform(0.1, 4), rng.uniform(0.1, 4)))
    elif r < 0.8:
        cr(t, k, "I", "kv/kvserver/store.go:3465", "[n%d,s%d] %d  KV metrics: capacity=%d%%, ranges=%d, leases=%d" % (k + 1, k + 1, rng.randint(1, 99), 38, 1840 + rng.randint(0, 20), 610 + rng.randint(-200, 200)))
    else:
        cr(t, k, "W", "kv/kvserver/replica_proposal.go:512", "[n%d,s%d,r%d/%d:/Table/1{12/1/…-3}] slow range split: took %.1fs" % (k + 1, k + 1, rng.randint(100, 9000), rng.randint(1, 3), rng.uniform(1.1, 2.5)))


b.every(b.start, b.end, 20, crbg)
for k in (2, 1, 0):
    t = up[k] - dt.timedelta(seconds=55)
    cr(t, k, "I", "cli/start.go:1062", "received signal 'terminated'")
    cr(t + dt.timedelta(seconds=1), k, "I", "server/drain.go:297", "drain remaining: %d" % rng.randint(300, 700))
    cr(t + dt.timedelta(seconds=1), k, "I", "server/drain.go:405", "waiting for health probes to notice that the node is not ready for new sql connections")
    cr(t + dt.timedelta(seconds=16), k, "I", "server/drain.go:297", "drain details: descriptor leases: %d, liveness record: 1, range lease iterations: %d" % (rng.randint(10, 40), rng.randint(400, 700)))
    cr(t + dt.timedelta(seconds=22), k, "I", "server/drain.go:297", "drain remaining: 0")
    cr(t + dt.timedelta(seconds=23), k, "I", "cli/start.go:1101", "server drained and shutdown completed")
    s = up[k] - dt.timedelta(seconds=4)
    cr(s, k, "I", "cli/start.go:1420", "CockroachDB CCL v24.3.6 (x86_64-pc-linux-gnu, built 2026/02/20 16:02:11, go1.22.8 X:nocoverageredesign)")
    cr(s + dt.timedelta(seconds=6), k, "I", "server/node.go:533", "node n%d: started with engine type \u20392\u203a" % (k + 1))
    cr(s + dt.timedelta(seconds=7), k, "I", "server/server.go:1899", "starting grpc/postgres server at \u2039[::]:26257\u203a")
    cr(s + dt.timedelta(seconds=12), k, "W", "kv/kvserver/replica_raft.go:1742", "[n%d,s%d,r%d/2:/Table/11{4-5}] have been waiting 1.00s for slow proposal ConditionalPut" % (k + 1, k + 1, rng.randint(100, 900)))
    cr(s + dt.timedelta(seconds=30), k, "I", "server/server_sql.go:1801", "serving sql connections")
    cr(up[k] + dt.timedelta(seconds=200), k, "I", "kv/kvserver/queue.go:1199", "[n%d,replicate,s%d] %d  replicate queue: processed %d ranges in %.1fs, under-replicated ranges now 0" % (k + 1, k + 1, rng.randint(10, 99), rng.randint(380, 440), rng.uniform(150, 200)))
for k in (0, 1):
    cr(up[2] - dt.timedelta(seconds=30), k, "W", "kv/kvserver/liveness/liveness.go:787", "[n%d,liveness-hb] slow heartbeat took 1.2s; err=\u2039<nil>\u203a" % (k + 1))


def ledger(t):
    p = rng.choice(L)
    during = any(down(k, t) for k in range(3))
    if during and rng.random() < 0.25:
        b.log(t, "ledger-api", p, json.dumps({"level": "warn", "ts": iso(t, True), "logger": "db.tx", "msg": "transaction retry", "attempt": rng.randint(1, 2), "sqlstate": "40001",
                                               "error": "ERROR: restart transaction: TransactionRetryWithProtoRefreshError: TransactionAbortedError(ABORT_REASON_NEW_LEASE_PREVENTS_TXN): \"sql txn\" meta={id=%s key=/Table/112/1/… iso=Serializable pri=0.0034 epo=0} (SQLSTATE 40001)" % rid(rng, 8)}), "warn")
        b.log(t + dt.timedelta(milliseconds=rng.randint(20, 200)), "ledger-api", p, json.dumps({"level": "info", "ts": iso(t + dt.timedelta(milliseconds=120), True), "logger": "http", "msg": "request completed", "method": "POST", "path": "/v1/postings", "status": 201, "duration_ms": rng.randint(120, 900)}), "info")
    elif rng.random() < 0.35:
        b.log(t, "ledger-api", p, json.dumps({"level": "info", "ts": iso(t, True), "logger": "http", "msg": "request completed", "method": rng.choice(["POST", "GET"]), "path": rng.choice(["/v1/postings", "/v1/accounts/balance"]), "status": 200, "duration_ms": rng.randint(5, 60)}), "info")


b.every(b.start, b.end, 1.5, ledger)
b.rng_series('sum(ranges_underreplicated{namespace="crdb"})', "Under-replicated ranges", [({}, lambda t, i: ur(t))], fmt="%.0f")
b.rng_series('sum(ranges_unavailable{namespace="crdb"})', "Unavailable ranges", [({}, lambda t, i: 0)], fmt="%d")
b.rng_series('sum by (instance) (liveness_livenodes{namespace="crdb"})', "Live nodes seen by each node", [({"instance": "crdb-cockroachdb-%d" % k}, (lambda k: lambda t, i: None if down(k, t) else 3 - sum(1 for j in range(3) if j != k and down(j, t)))(k)) for k in range(3)], fmt="%d")
b.rng_series('max by (instance) (build_timestamp{namespace="crdb"}) * 0 + 1', "Build tag per node", [({"instance": "crdb-cockroachdb-%d" % k, "tag": tag}, (lambda k, tag: lambda t, i: 1 if ((t < up[k] - dt.timedelta(seconds=58)) == (tag == "v24.3.5")) and not down(k, t) else None)(k, tag)) for k in range(3) for tag in ("v24.3.5", "v24.3.6")], fmt="%d")
b.rng_series('histogram_quantile(0.99, sum by (le) (rate(sql_service_latency_bucket{namespace="crdb"}[5m])))', "SQL p99 latency (s)", [({}, lambda t, i: b.noise(0.045 if not any(down(k, t) for k in range(3)) else 0.31, 0.15))])
b.rng_series('sum(rate(txn_restarts_serializable{namespace="crdb"}[5m])) + sum(rate(txn_restarts_txnaborted{namespace="crdb"}[5m]))', "Txn restarts/s", [({}, lambda t, i: b.noise(0.05 if not any(down(k, t) for k in range(3)) else 1.9, 0.2))])
b.rng_series('sum by (status) (rate(http_server_requests_total{namespace="ledger", service="ledger-api"}[5m]))', "ledger-api requests by status",
             [({"status": "200"}, lambda t, i: b.noise(14)), ({"status": "201"}, lambda t, i: b.noise(9)), ({"status": "500"}, lambda t, i: 0.0)])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="crdb"})', "Container restarts (pods were recreated, counters reset)", [({"pod": "crdb-cockroachdb-%d" % k}, lambda t, i: 0) for k in range(3)], fmt="%d")
b.rng_series('sum by (instance) (capacity_available{namespace="crdb"}) / sum by (instance) (capacity{namespace="crdb"})', "Store free ratio", [({"instance": "crdb-cockroachdb-%d" % k}, lambda t, i: 0.62) for k in range(3)])
b.rng_series('ALERTS{alertname="CockroachdbUnderreplicatedRanges", namespace="crdb"}', "Alert state", [({"alertname": "CockroachdbUnderreplicatedRanges", "alertstate": "firing", "severity": "warning"}, lambda t, i: 1 if T("2026-03-05T03:01:00Z") <= t < T("2026-03-05T03:16:00Z") else None)], fmt="%d")

notes = """
# apx-cockroachdb-rolling-upgrade-healthy — HEALTHY CONTROL: scheduled CockroachDB patch upgrade, alerts were transient

**Situation.** CockroachDB 3-node StatefulSet (ns `crdb`, staging). Scheduled maintenance (configmap `crdb-maintenance`, MR !2207):
Argo CD rolls v24.3.5 -> v24.3.6 at 03:00. The StatefulSet controller replaces pods 2, 1, 0 one at a time (PDB maxUnavailable 1); each
node drains gracefully (`server drained and shutdown completed`), restarts on the new binary, serves SQL after ~30 s, and the replicate
queue re-replicates its ranges within ~4 minutes. `ranges_underreplicated` therefore spikes to ~400 three times and returns to 0 by
~03:15; `ranges_unavailable` stays 0 throughout; `CockroachdbUnderreplicatedRanges` fires 03:01-03:16 and resolves.

**What looks scary but is benign.** The alert; "all three pods restarted" (they were recreated by the rollout: restartCount 0, new
controller revision with image v24.3.6); ledger-api 40001 `TransactionRetryWithProtoRefreshError` warnings during lease transfers - the
client retries and the requests complete (201), no 5xx; SQL p99 and txn-restart blips; readiness 503s while each node starts; slow heartbeat
and slow-proposal warnings during the restarts; background slow range split warnings.

**Evidence that it is healthy.** Unavailable ranges 0; live nodes back to 3; under-replicated 0 after 03:15; ledger-api 500 rate 0;
store capacity 62% free; all pods Ready on v24.3.6.

**Expected.** status partial (or refused); must_mention [] - a good answer says the cluster is healthy; it was the planned rolling upgrade.

**Provenance.** awesome-prometheus-alerts CockroachDB rules (CockroachdbUnderreplicatedRanges / UnavailableRanges); CockroachDB
rolling-upgrade and drain behaviour from the cockroachdb/helm-charts and docs; CRDB log format (`I260305 ... ⋮ [n1] ...`).
Generated by gen/c16_cockroach.py (seed 1616).
"""
b.write([], notes, status=("partial", "refused"))
