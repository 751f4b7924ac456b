from lib import *
import math

b = Bundle("apx-trino-metastore-netpol", "Trino staging: hive catalog queries failing", "2026-05-28T13:40:00Z", "2026-05-28T14:50:00Z",
           "staging", "stg-gke-euw1",
           "trino staging (ns trino): queries on the hive catalog have been failing since ~14:00 (they hang ~10s then error). queries on the "
           "postgres catalog work, and we only restarted the coordinator at 13:50 to add the iceberg catalog. what's wrong?", 1414)
b.ns = "trino"
T = P
np_t = T("2026-05-28T14:00:31Z")
restart = T("2026-05-28T13:50:12Z")
nodes = mknodes(b, ["gke-stg-euw1-data-3f2a1c0b-5t7m", "gke-stg-euw1-data-3f2a1c0b-8qhn", "gke-stg-euw1-data-3f2a1c0b-k2vw", "gke-stg-euw1-data-3f2a1c0b-x9dd"],
                zones=["europe-west1-b", "europe-west1-c", "europe-west1-d", "europe-west1-b"], instance="n2-highmem-8", cpu="8", alloc_cpu="7910m", mem="65856100Ki", alloc_mem="61524068Ki",
                kubelet="v1.30.5-gke.1443001", os_image="Container-Optimized OS from Google", kernel="6.1.100+")
b.namespace("trino", {"environment": "staging", "team": "analytics"})
b.namespace("metastore", {"environment": "staging", "team": "data-platform"})
b.namespace("spark", {"environment": "staging", "team": "data-eng"})
tl = {"app.kubernetes.io/name": "trino", "app.kubernetes.io/instance": "trino"}
co = app(b, "trino-coordinator", "trino", "trinodb/trino:458", 1, 8080, nodes[:1], labels=dict(tl, **{"app.kubernetes.io/component": "coordinator"}), container_name="trino-coordinator",
         readiness=b.http_probe("/v1/info", 8080), liveness=b.http_probe("/v1/info", 8080, 10, 5, 6, 30), resources={"requests": {"cpu": "2", "memory": "8Gi"}, "limits": {"memory": "8Gi"}},
         created="2025-09-01T10:00:00Z", pod_created=iso(restart), revision=23, rs_created=iso(restart - dt.timedelta(seconds=2)),
         old_rs=("6bd9f7c845", 22, [b.container("trino-coordinator", "trinodb/trino:458", 8080)], "2026-05-14T10:00:00Z"), pod_annotations={"checksum/catalog-config": "9c1f0e7b2d4a"})
wk = app(b, "trino-worker", "trino", "trinodb/trino:458", 3, 8080, nodes[1:], labels=dict(tl, **{"app.kubernetes.io/component": "worker"}), container_name="trino-worker",
         resources={"requests": {"cpu": "3", "memory": "24Gi"}, "limits": {"memory": "24Gi"}}, created="2025-09-01T10:00:00Z", pod_created="2026-05-14T10:01:00Z", no_service=True)
b.configmap("trino-catalog", "trino", {"hive.properties": "connector.name=hive\nhive.metastore.uri=thrift://hive-metastore.metastore.svc.cluster.local:9083\nhive.metastore-timeout=10s\nfs.native-gcs.enabled=true\n",
                                       "postgres.properties": "connector.name=postgresql\nconnection-url=jdbc:postgresql://analytics-pg.trino.svc:5432/analytics\nconnection-user=trino\n",
                                       "iceberg.properties": "connector.name=iceberg\niceberg.catalog.type=rest\niceberg.rest-catalog.uri=http://polaris.iceberg.svc:8181/api/catalog\n"},
            annotations={"acme.io/changed-at": "2026-05-28T13:48:02Z"})
ml = {"app.kubernetes.io/name": "hive-metastore"}
hm = app(b, "hive-metastore", "metastore", "apache/hive:4.0.1", 2, [("thrift", 9083)], nodes[2:], labels=ml, container_name="metastore", env={"SERVICE_NAME": "metastore", "DB_DRIVER": "postgres"},
         readiness=b.tcp_probe(9083), created="2025-09-01T10:00:00Z", pod_created="2026-05-20T09:00:00Z", svc_ports=[("thrift", 9083, "thrift")])
HM = [pname(p) for p in hm]
b.add("policy.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": b.meta("NetworkPolicy", "default-deny-ingress", "metastore", {"app.kubernetes.io/managed-by": "argocd", "acme.io/policy-pack": "zero-trust-baseline"},
                                         {"argocd.argoproj.io/tracking-id": "netpol-baseline:networking.k8s.io/NetworkPolicy:metastore/default-deny-ingress"}, iso(np_t), extra={"generation": 1}),
                      "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}})
b.add("policy.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": b.meta("NetworkPolicy", "allow-metastore-clients", "metastore", {"app.kubernetes.io/managed-by": "argocd", "acme.io/policy-pack": "zero-trust-baseline"},
                                         {"argocd.argoproj.io/tracking-id": "netpol-baseline:networking.k8s.io/NetworkPolicy:metastore/allow-metastore-clients"}, iso(np_t), extra={"generation": 1}),
                      "spec": {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "hive-metastore"}}, "policyTypes": ["Ingress"],
                               "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": "data-eng"}}}, {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
                                            "ports": [{"protocol": "TCP", "port": 9083}]}]}})
b.add("policy.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": b.meta("NetworkPolicy", "allow-same-namespace", "trino", None, None, "2025-09-01T10:00:00Z"),
                      "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [{"podSelector": {}}]}]}})
CO = pname(co[0])
W = [pname(p) for p in wk]
b.event("Deployment", "trino-coordinator", "trino", "ScalingReplicaSet", "Scaled up replica set trino-coordinator-%s to 1" % co[0]["metadata"]["labels"]["pod-template-hash"], iso(restart - dt.timedelta(seconds=2)), component="deployment-controller", api="apps/v1")
b.event("Deployment", "trino-coordinator", "trino", "ScalingReplicaSet", "Scaled down replica set trino-coordinator-6bd9f7c845 to 0 from 1", "2026-05-28T13:50:58Z", component="deployment-controller", api="apps/v1")
b.event("Pod", CO, "trino", "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", "2026-05-28T13:50:20Z", "2026-05-28T13:50:50Z", 3, "Warning", host=nodes[0], fieldPath="spec.containers{trino-coordinator}")
b.event("Pod", W[1], "trino", "Pulled", 'Container image "trinodb/trino:458" already present on machine', "2026-05-14T10:01:02Z", host=nodes[2], fieldPath="spec.containers{trino-worker}")

rng = b.rng
qn = [0]
users = ["airflow_svc", "dbt_prod_sync", "a.kim", "m.rossi", "redash"]


def qid(t):
    qn[0] += 1
    return "%s_%05d_%s" % (t.strftime("%Y%m%d_%H%M%S"), qn[0], rid(rng, 5, "abcdefghijkmnpqrstuvwxyz23456789"))


def query(t):
    if restart <= t < restart + dt.timedelta(seconds=45):
        return
    cat = rng.choices(["hive", "postgres", "iceberg"], [6, 3, 1 if t > restart else 0])[0]
    q = qid(t)
    u = rng.choice(users)
    if cat == "hive" and t >= np_t:
        el = 10000 + rng.randint(5, 60)
        b.log(t + dt.timedelta(milliseconds=el), "trino-coordinator", CO, "%s\tERROR\tdispatcher-query-%d\tio.trino.dispatcher.LocalDispatchQuery\tQuery %s failed\nio.trino.spi.TrinoException: Failed connecting to Hive metastore: [thrift://hive-metastore.metastore.svc.cluster.local:9083]\n\tat io.trino.plugin.hive.metastore.thrift.StaticMetastoreLocator.createMetastoreClient(StaticMetastoreLocator.java:123)\n\tat io.trino.plugin.hive.metastore.thrift.ThriftHiveMetastore.getTable(ThriftHiveMetastore.java:261)\nCaused by: org.apache.thrift.transport.TTransportException: java.net.SocketTimeoutException: Connect timed out\n\tat org.apache.thrift.transport.TSocket.open(TSocket.java:243)" % (iso(t + dt.timedelta(milliseconds=el), True), rng.randint(1, 40), q), "ERROR", container="trino-coordinator")
        b.log(t + dt.timedelta(milliseconds=el + 3), "trino-coordinator", CO, "%s\tINFO\tdispatcher-query-%d\tio.trino.event.QueryMonitor\tTIMELINE: Query %s :: FAILED (HIVE_METASTORE_ERROR) :: elapsed %dms :: planning %dms :: waiting 0ms :: scheduling 0ms :: running 0ms :: finishing 0ms begin=%s end=%s" % (
            iso(t + dt.timedelta(milliseconds=el + 3), True), rng.randint(1, 40), q, el, el - 2, iso(t, True), iso(t + dt.timedelta(milliseconds=el), True)), "INFO", container="trino-coordinator", user=u)
    else:
        el = rng.randint(300, 9000)
        b.log(t + dt.timedelta(milliseconds=el), "trino-coordinator", CO, "%s\tINFO\tdispatcher-query-%d\tio.trino.event.QueryMonitor\tTIMELINE: Query %s :: FINISHED :: elapsed %dms :: planning %dms :: waiting %dms :: scheduling %dms :: running %dms :: finishing %dms begin=%s end=%s" % (
            iso(t + dt.timedelta(milliseconds=el), True), rng.randint(1, 40), q, el, rng.randint(20, 200), rng.randint(0, 100), rng.randint(5, 80), el - 300 if el > 400 else el, rng.randint(1, 10), iso(t, True), iso(t + dt.timedelta(milliseconds=el), True)), "INFO", container="trino-coordinator", user=u, catalog=cat)


b.every(b.start, b.end, 5, query)
for t, m in [(restart + dt.timedelta(seconds=3), "io.trino.server.Server\tTrino version: 458"), (restart + dt.timedelta(seconds=18), "io.trino.connector.StaticCatalogManager\t-- Added catalog hive using connector hive --"),
             (restart + dt.timedelta(seconds=19), "io.trino.connector.StaticCatalogManager\t-- Added catalog iceberg using connector iceberg --"), (restart + dt.timedelta(seconds=19), "io.trino.connector.StaticCatalogManager\t-- Added catalog postgres using connector postgresql --"),
             (restart + dt.timedelta(seconds=36), "io.trino.server.Server\t======== SERVER STARTED ========")]:
    b.log(t, "trino-coordinator", CO, "%s\tINFO\tmain\t%s" % (iso(t, True), m), "INFO", container="trino-coordinator")


def gc(t):
    p = rng.choice(W)
    b.log(t, "trino-worker", p, "%s\tINFO\tVmGcMonitor\tio.airlift.stats.JmxGcMonitor\tMajor GC: application %dms, stopped %dms: %.2fGB -> %.2fGB" % (iso(t, True), rng.randint(2000, 40000), rng.randint(300, 1400), rng.uniform(17, 20), rng.uniform(6, 9)), "INFO", container="trino-worker")


b.every(b.start, b.end, 400, gc)
b.log(T("2026-05-28T14:12:40Z"), "trino-worker", W[2], "2026-05-28T14:12:40.118Z\tWARN\ttask-notification-14\tio.trino.execution.executor.timesharing.TimeSharingTaskExecutor\tSplit 20260528_141202_00421_p9x3f.1.0.0-7 is blocked for 22.41s on exchange (spilled to disk)", "WARN", container="trino-worker")


def hms(t):
    p = rng.choice(HM)
    src = "10.%d.%d.%d" % (rng.choice([96, 97]), rng.randint(0, 30), rng.randint(2, 250))
    spark = t >= np_t or rng.random() < 0.35
    if spark:
        src = "10.98.%d.%d" % (rng.randint(0, 30), rng.randint(2, 250))
    b.log(t, "hive-metastore", p, "%s INFO  [pool-6-thread-%d] HiveMetaStore.audit: ugi=%s\tip=%s\tcmd=%s\t" % (t.strftime("%Y-%m-%dT%H:%M:%S,%f")[:-3], rng.randint(1, 200), "spark" if spark else "trino", src,
                                                                                                         rng.choice(["get_table : tbl=hive.sales.orders", "get_partitions_by_names : tbl=hive.sales.orders", "get_database: sales", "get_table : tbl=hive.web.sessions"])), "INFO", container="metastore", ns="metastore")


b.every(b.start, b.end, 6, hms)
for t in ["2026-05-28T13:44:03Z", "2026-05-28T14:22:50Z"]:
    b.log(T(t), "hive-metastore", HM[0], "%s WARN  [pool-6-thread-12] metastore.ObjectStore: Failed to get database hive.tmp_scratch, returning NoSuchObjectException" % T(t).strftime("%Y-%m-%dT%H:%M:%S,000"), "WARN", container="metastore", ns="metastore")


def rate_fn(kind):
    def f(t, i):
        if restart <= t < restart + dt.timedelta(seconds=45):
            return 0.0
        base = 12
        if kind == "hive_ok":
            return 0.0 if t >= np_t + dt.timedelta(seconds=10) else b.noise(base * 0.6 / 5 * 5 / 12 * 12 / 5 * 0.1 * 10 / 12 * 12, 0.1) / 10
        if kind == "hive_fail":
            return b.noise(0.12, 0.1) if t >= np_t + dt.timedelta(seconds=10) else 0.0
        if kind == "pg":
            return b.noise(0.06, 0.1)
        if kind == "ice":
            return b.noise(0.02, 0.2) if t > restart else 0.0
    return f


b.rng_series('sum by (catalog, state) (rate(trino_queries_completed_total{namespace="trino"}[5m]))', "Trino queries by catalog and final state",
             [({"catalog": "hive", "state": "FINISHED"}, lambda t, i: 0.0 if t >= np_t + dt.timedelta(seconds=10) else b.noise(0.12, 0.1)), ({"catalog": "hive", "state": "FAILED"}, rate_fn("hive_fail")),
              ({"catalog": "postgres", "state": "FINISHED"}, rate_fn("pg")), ({"catalog": "iceberg", "state": "FINISHED"}, rate_fn("ice"))])
b.rng_series('trino_execution_name_QueryManager_FailedQueries_FiveMinute_Count{namespace="trino"}', "Failed queries (5m)", [({"pod": CO}, lambda t, i: 0 if t < np_t else min(36, int((t - np_t).total_seconds() / 300 * 36)))], fmt="%d")
b.rng_series('sum by (source_namespace) (rate(hive_metastore_api_requests_total{namespace="metastore"}[5m]))', "Metastore API calls by client namespace",
             [({"source_namespace": "trino"}, lambda t, i: b.noise(2.1) if t < np_t else 0), ({"source_namespace": "spark"}, lambda t, i: b.noise(1.1))])
b.rng_series('kube_networkpolicy_created{namespace="metastore"}', "NetworkPolicies in metastore (creation ts)",
             [({"networkpolicy": "default-deny-ingress"}, lambda t, i: ep(np_t) if t >= np_t else None), ({"networkpolicy": "allow-metastore-clients"}, lambda t, i: ep(np_t) if t >= np_t else None)], fmt="%d")
b.rng_series('sum by (namespace) (rate(gke_dataplane_v2_policy_drop_total{namespace="metastore", direction="ingress"}[5m]))', "Dataplane V2 policy drops (ingress)", [({"namespace": "metastore"}, lambda t, i: 0 if t < np_t else b.noise(4.2, 0.2))])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"trino|metastore"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in [CO] + W + HM], fmt="%d")
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="trino", container!=""})', "Memory by pod", [({"pod": p}, lambda t, i: b.noise(1.6e10, 0.1)) for p in W] + [({"pod": CO}, lambda t, i: b.noise(3.2e9, 0.05))], fmt="%.0f")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="metastore", container!=""}[5m]))', "Metastore CPU", [({"pod": p}, lambda t, i: b.noise(0.35 if t < np_t else 0.12, 0.2)) for p in HM])

notes = """
# apx-trino-metastore-netpol — a default-deny NetworkPolicy in the metastore namespace cuts Trino off from Hive Metastore

**Incident.** Trino 458 (ns `trino`, GKE staging) reads the `hive` catalog through Hive Metastore
(`thrift://hive-metastore.metastore.svc.cluster.local:9083`). At 14:00:31 Argo CD syncs the security team's "zero-trust-baseline" policy
pack into ns `metastore`: `default-deny-ingress` plus `allow-metastore-clients`, which admits only namespaces labelled `team=data-eng`
(spark) and monitoring. Namespace `trino` is labelled `team=analytics`, so SYNs from Trino are dropped; with `hive.metastore-timeout=10s`
every hive query waits ~10 s and fails `HIVE_METASTORE_ERROR: Failed connecting to Hive metastore ... Connect timed out`. Postgres and
iceberg catalogs don't touch the metastore; Spark keeps working.

**Chain / evidence.** Hive queries FAILED after ~10 s (coordinator TIMELINE/ERROR logs, `trino_queries_completed_total` by catalog/state) ->
`SocketTimeoutException: Connect timed out` to the metastore (not refused/not an app error) -> metastore pods healthy, audit log shows only
`ugi=spark` clients after 14:00, metric of calls by client namespace: trino -> 0 -> NetworkPolicies created 14:00:31 in ns metastore
(k8s/policy.yaml, `kube_networkpolicy_created`), Dataplane V2 policy drops rising -> namespace labels: trino `team=analytics` vs allowed `team=data-eng`.

**Decoys.** Coordinator restart at 13:50 to add the iceberg catalog (routine, question points at it; readiness 503s while starting);
worker Major GC lines and an exchange-blocked WARN; metastore NoSuchObject WARN for a scratch DB.

**must_mention:** `network`, `policy` (NetworkPolicy).

**Provenance.** Network-partition / policy fault family (Chaos Mesh NetworkChaos partition, k8s.af stories of default-deny rollouts);
Trino Hive connector error code HIVE_METASTORE_ERROR and TIMELINE log lines are upstream formats; apache/hive metastore audit log
format. Objects follow trinodb/charts (coordinator/worker, catalog configmap). Generated by gen/c14_trino.py (seed 1414).
"""
b.write(["network", "policy"], notes)
