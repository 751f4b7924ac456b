from lib import *
import math

b = Bundle("apx-posthog-clickhouse-parts", "PostHog staging: new events not visible in insights", "2026-08-19T09:30:00Z", "2026-08-19T10:40:00Z",
           "staging", "stg-eks-use1",
           "posthog staging (ns posthog): insights and the activity view stopped showing new events at around 10:05. /capture still returns 200 "
           "and the plugin-server pods look healthy. where are the events going?", 303)
b.ns = ns = "posthog"
T = P
delay = T("2026-08-19T09:57:30Z")
onset = T("2026-08-19T10:05:08Z")
nodes = mknodes(b, ["ip-10-31-4-201.ec2.internal", "ip-10-31-19-77.ec2.internal", "ip-10-31-38-12.ec2.internal", "ip-10-31-40-166.ec2.internal"],
                zones=["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1c"], instance="r6i.2xlarge", cpu="8", alloc_cpu="7910m", mem="65023680Ki", alloc_mem="63999680Ki")
b.namespace(ns, {"environment": "staging", "team": "product-analytics"})
IMG = "posthog/posthog:release-1.43.0-7d4a1f2"
penv = {"CLICKHOUSE_HOST": "clickhouse-posthog", "CLICKHOUSE_DATABASE": "posthog", "KAFKA_HOSTS": "posthog-kafka:9092", "REDIS_URL": "redis://posthog-redis-master:6379/",
        "SITE_URL": "https://posthog.stg.acme.io", "DEPLOYMENT": "helm_aws_ha"}
web = app(b, "posthog-web", ns, IMG, 2, 8000, nodes, labels={"app": "posthog", "role": "web"}, env=penv, container_name="posthog-web",
          readiness=b.http_probe("/_readyz?role=web", 8000, 10, 5), liveness=b.http_probe("/_livez", 8000, 10, 2), created="2026-02-01T10:00:00Z", pod_created="2026-08-14T15:20:00Z",
          resources={"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}})
ev = app(b, "posthog-events", ns, IMG, 2, 8000, nodes[1:], labels={"app": "posthog", "role": "events"}, env=penv, container_name="posthog-events",
         readiness=b.http_probe("/_readyz?role=events", 8000, 10, 5), created="2026-02-01T10:00:00Z", pod_created="2026-08-14T15:21:00Z")
plug = app(b, "posthog-plugins", ns, IMG, 2, 6738, nodes[2:], labels={"app": "posthog", "role": "plugins"}, env=dict(penv, PLUGIN_SERVER_MODE="ingestion"),
           container_name="posthog-plugins", command=["./bin/plugin-server", "--no-restart-loop"], created="2026-02-01T10:00:00Z", pod_created="2026-08-14T15:22:00Z",
           resources={"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "3Gi"}})
wk = app(b, "posthog-worker", ns, IMG, 1, None, nodes[:1], labels={"app": "posthog", "role": "worker"}, env=penv, container_name="posthog-workers",
         command=["./bin/docker-worker-celery", "--with-scheduler"], created="2026-02-01T10:00:00Z", pod_created="2026-08-14T15:22:30Z")
chl = {"clickhouse.altinity.com/chi": "posthog", "clickhouse.altinity.com/cluster": "posthog", "clickhouse.altinity.com/shard": "0", "clickhouse.altinity.com/replica": "0",
       "clickhouse.altinity.com/app": "chop"}
ch = app(b, "chi-posthog-posthog-0-0", ns, "clickhouse/clickhouse-server:23.12.5.81", 1, [("http", 8123), ("tcp", 9000), ("interserver", 9009)], nodes[3:], kind="StatefulSet",
         labels=chl, container_name="clickhouse", created="2026-02-01T10:00:00Z", pod_created="2026-08-02T03:10:00Z",
         resources={"requests": {"cpu": "2", "memory": "16Gi"}, "limits": {"memory": "24Gi"}}, no_service=True)
b.service("clickhouse-posthog", ns, {"clickhouse.altinity.com/chi": "posthog"}, [("http", 8123, "http"), ("tcp", 9000, "tcp")], endpoints=b.eps_for(ch))
kl = {"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "posthog"}
kf = app(b, "posthog-kafka", ns, "docker.io/bitnami/kafka:3.4.1-debian-11-r0", 1, 9092, nodes[1:2], kind="StatefulSet", labels=kl, container_name="kafka",
         created="2026-02-01T10:00:00Z", pod_created="2026-08-02T03:05:00Z", svc_ports=[("tcp-client", 9092, "http")])
zk = app(b, "posthog-zookeeper", ns, "docker.io/bitnami/zookeeper:3.8.1-debian-11-r18", 1, 2181, nodes[2:3], kind="StatefulSet",
         labels={"app.kubernetes.io/name": "zookeeper", "app.kubernetes.io/instance": "posthog"}, container_name="zookeeper", created="2026-02-01T10:00:00Z", pod_created="2026-08-02T03:04:00Z")
jl = {"job-name": "events-backfill-2026q2", "app": "data-backfill"}
job_c = b.container("backfill", "registry.acme.io/data/ch-backfill:0.4.2", None, {"CH_HOST": "clickhouse-posthog", "TARGET_TABLE": "posthog.writable_events",
                                                                                "SOURCE": "s3://acme-stg-exports/events/2026q2/", "BATCH_ROWS": "50", "PARALLELISM": "8"},
                    {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}}, command=["python", "-m", "backfill", "--from=2026-04-01", "--to=2026-06-30"])
b.raw("workloads.yaml", {"apiVersion": "batch/v1", "kind": "Job", "metadata": b.meta("Job", "events-backfill-2026q2", ns, jl, {"acme.io/owner": "data-eng", "acme.io/ticket": "DATA-2291"}, "2026-08-19T09:51:40Z"),
                         "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 2, "template": {"metadata": {"labels": jl}, "spec": {"restartPolicy": "Never", "containers": [job_c]}}},
                         "status": {"startTime": "2026-08-19T09:51:40Z", "active": 1, "ready": 1, "terminating": 0, "uncountedTerminatedPods": {}}})
jp = b.pod("events-backfill-2026q2-" + b.hsh(5, "job"), ns, jl, ("Job", "events-backfill-2026q2"), [job_c], nodes[0], "2026-08-19T09:51:41Z")
b.configmap("posthog-clickhouse-config", ns, {"config.d/merge_tree.xml": "<clickhouse>\n  <merge_tree>\n    <parts_to_delay_insert>1000</parts_to_delay_insert>\n    <parts_to_throw_insert>3000</parts_to_throw_insert>\n    <max_bytes_to_merge_at_max_space_in_pool>161061273600</max_bytes_to_merge_at_max_space_in_pool>\n  </merge_tree>\n  <background_pool_size>16</background_pool_size>\n</clickhouse>\n"})
b.event("Job", "events-backfill-2026q2", ns, "SuccessfulCreate", "Created pod: %s" % pname(jp), "2026-08-19T09:51:41Z", component="job-controller", api="batch/v1")
b.event("Pod", pname(jp), ns, "Pulled", 'Successfully pulled image "registry.acme.io/data/ch-backfill:0.4.2" in 3.112s (3.112s including waiting). Image size: 98213355 bytes.', "2026-08-19T09:51:46Z", host=nodes[0], fieldPath="spec.containers{backfill}")
b.event("Pod", pname(wk[0]), ns, "Unhealthy", "Liveness probe failed: command timed out", "2026-08-19T09:41:02Z", type_="Warning", host=nodes[0], fieldPath="spec.containers{posthog-workers}")

rng = b.rng
CH = pname(ch[0])
parts = lambda t: (180 + rng.randint(0, 20)) if t < T("2026-08-19T09:52:00Z") else min(3000, 180 + int((t - T("2026-08-19T09:52:00Z")).total_seconds() * 3.6))


def chlog(t, lvl, msg, tid=None):
    b.log(t, "clickhouse", CH, "%s [ %d ] {%s} <%s> %s" % (t.strftime("%Y.%m.%d %H:%M:%S.%f"), tid or rng.randint(700, 900), "" if lvl != "Information" or rng.random() < 0.5 else b.uid("q", t.isoformat()), lvl, msg),
          {"Information": "info", "Debug": "debug", "Warning": "warning", "Error": "error", "Trace": "trace"}[lvl], container="clickhouse")


def ch_bg(t):
    r = rng.random()
    if r < 0.4:
        chlog(t, "Information", "executeQuery: Read %d rows, %.2f MiB in %.6f sec., %d rows/sec., %.2f MiB/sec." % (rng.randint(1e4, 9e6), rng.uniform(1, 400), rng.uniform(0.01, 2), rng.randint(1e6, 9e7), rng.uniform(50, 900)))
    elif r < 0.7:
        chlog(t, "Debug", "posthog.sharded_events (%s) (MergerMutator): Selected %d parts from 202608%02d_%d_%d_%d to 202608%02d_%d_%d_%d" % (b.uid("t", "se")[:8], rng.randint(2, 8), 19, 1, 1, 0, 19, 1, 9, 1))
    else:
        chlog(t, "Information", "StorageKafka (kafka_events_json): Committed offset %d for topic clickhouse_events_json partition %d" % (rng.randint(4.1e7, 4.3e7), rng.randint(0, 7)))


b.every(b.start, b.end, 12, ch_bg)


def ch_delay(t):
    p = parts(t)
    if t < onset:
        chlog(t, "Information", "posthog.sharded_events (%s): Delaying inserting block by %.2f ms. because there are %d parts and their average size is %.2f KiB" % (b.uid("t", "se")[:8], 1.0 + (p - 1000) * 0.011, p, rng.uniform(9, 14)))


b.every(delay, onset, 10, ch_delay)


def ch_err(t):
    chlog(t, "Error", "void DB::StorageKafka::threadFunc(size_t): Code: 252. DB::Exception: Too many parts (3000 with average size of %.2f KiB) in table 'posthog.sharded_events (%s)'. Merges are processing significantly slower than inserts. (TOO_MANY_PARTS), Stack trace (when copying this message, always include the lines below):\n\n0. DB::Exception::Exception(DB::Exception::MessageMasked&&, int, bool) @ 0x000000000c8a3b1b\n1. DB::MergeTreeData::delayInsertOrThrowIfNeeded(Poco::Event*, std::shared_ptr<DB::Context const> const&, bool) const @ 0x0000000012e0f0c4\n (version 23.12.5.81 (official build))" % (rng.uniform(9, 13), b.uid("t", "se")), tid=rng.choice([611, 612, 613]))
    if rng.random() < 0.3:
        chlog(t + dt.timedelta(milliseconds=300), "Error", "executeQuery: Code: 252. DB::Exception: Too many parts (3000 with average size of %.2f KiB) in table 'posthog.sharded_events (%s)'. Merges are processing significantly slower than inserts. (TOO_MANY_PARTS) (version 23.12.5.81 (official build)) (from 10.31.4.%d:%d) (in query: INSERT INTO posthog.writable_events FORMAT JSONEachRow )" % (rng.uniform(9, 13), b.uid("t", "se"), 30, rng.randint(40000, 60000)))


b.every(onset, b.end, 8, ch_err)
JP = pname(jp)
bf = [0]


def backfill(t):
    bf[0] += rng.randint(40, 70)
    if t < onset:
        b.log(t, "events-backfill", JP, "%s INFO backfill.writer inserted batch %d rows=50 partition=2026%02d elapsed_ms=%d" % (t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], bf[0], rng.choice([4, 5, 6]), rng.randint(8, 40) if t < delay else rng.randint(900, 4000)), "INFO", container="backfill")
    else:
        b.log(t, "events-backfill", JP, "%s WARNING backfill.writer insert failed, retrying in 30s: Code: 252. DB::Exception: Too many parts (3000 ...) (TOO_MANY_PARTS)" % t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], "WARNING", container="backfill")


b.every(T("2026-08-19T09:51:50Z"), b.end, 6, backfill)
b.log(T("2026-08-19T09:51:48Z"), "events-backfill", JP, "2026-08-19 09:51:48,102 INFO backfill.main starting backfill 2026-04-01..2026-06-30 target=posthog.writable_events batch_rows=50 parallelism=8 files=2184", "INFO", container="backfill")
PL = [pname(p) for p in plug]


def plugins(t):
    p = rng.choice(PL)
    r = rng.random()
    if r < 0.7:
        b.log(t, "posthog-plugins", p, json.dumps({"level": "info", "time": iso(t, True), "pid": 7, "hostname": p, "msg": "[MAIN] 🧩 Processed batch", "size": rng.randint(80, 500), "duration_ms": rng.randint(60, 400), "partition": rng.randint(0, 7)}, ensure_ascii=False), "info", container="posthog-plugins")
    else:
        b.log(t, "posthog-plugins", p, json.dumps({"level": "warn", "time": iso(t, True), "pid": 7, "hostname": p, "msg": "Person property update conflicts, retrying", "teamId": 2, "attempt": 1}), "warn", container="posthog-plugins")


b.every(b.start, b.end, 10, plugins)
W = [pname(p) for p in web]


def webl(t):
    p = rng.choice(W)
    if rng.random() < 0.9:
        b.log(t, "posthog-web", p, json.dumps({"event": "request_finished", "path": rng.choice(["/api/projects/2/insights/trend/", "/api/projects/2/activity_log/", "/api/projects/2/events/", "/api/projects/2/feature_flags/", "/decide/"]),
                                                "status_code": 200, "duration_ms": rng.randint(40, 900), "level": "info", "logger": "django_structlog.middlewares.request", "timestamp": iso(t, True), "pid": 12, "team_id": 2}), "info", container="posthog-web")
    else:
        b.log(t, "posthog-web", p, json.dumps({"event": "Feature flag evaluation fell back to database", "level": "warning", "logger": "posthog.models.feature_flag.flag_matching", "timestamp": iso(t, True), "pid": 12}), "warning", container="posthog-web")


b.every(b.start, b.end, 8, webl)
for t in ["2026-08-19T09:41:00Z", "2026-08-19T10:11:00Z"]:
    b.log(T(t), "posthog-worker", pname(wk[0]), "[%s,221: WARNING/ForkPoolWorker-3] Soft time limit (300s) exceeded for posthog.tasks.calculate_cohort.calculate_cohort_ch[%s]" % (t.replace("T", " ")[:19], b.uid("task", t)), "WARNING", container="posthog-workers")
b.log(T("2026-08-19T09:44:12Z"), "zookeeper", pname(zk[0]), "2026-08-19 09:44:12,881 [myid:1] - WARN  [SyncThread:0:o.a.z.s.SyncRequestProcessor@191] - Too busy to snap, skipping", "WARN", container="zookeeper")
b.log(T("2026-08-19T09:44:13Z"), "zookeeper", pname(zk[0]), "2026-08-19 09:44:13,020 [myid:1] - WARN  [SyncThread:0:o.a.z.s.p.FileTxnLog@385] - fsync-ing the write ahead log in SyncThread:0 took 1318ms which will adversely effect operation latency.File size is 67108880 bytes. See the ZooKeeper troubleshooting guide", "WARN", container="zookeeper")

# metrics
b.rng_series('max by (database, table) (chi_clickhouse_metric_MaxPartCountForPartition{namespace="posthog"})', "Max parts in a single partition",
             [({"database": "posthog", "table": "sharded_events"}, lambda t, i: parts(t))], fmt="%d")
b.rng_series('sum by (table) (chi_clickhouse_table_parts{namespace="posthog", database="posthog", active="1"})', "Active parts by table",
             [({"table": "sharded_events"}, lambda t, i: parts(t) + 1400 if t >= T("2026-08-19T09:52:00Z") else 1530 + rng.randint(0, 30)),
              ({"table": "person"}, lambda t, i: 212 + rng.randint(0, 10)), ({"table": "session_replay_events"}, lambda t, i: 340 + rng.randint(0, 20))], fmt="%d")
b.rng_series('rate(chi_clickhouse_event_RejectedInserts{namespace="posthog"}[5m])', "Rejected inserts/s", [({"hostname": CH}, lambda t, i: 0 if t < onset else b.noise(1.8, 0.3))])
b.rng_series('rate(chi_clickhouse_event_DelayedInserts{namespace="posthog"}[5m])', "Delayed inserts/s", [({"hostname": CH}, lambda t, i: 0 if t < delay else b.noise(2.4, 0.3))])
b.rng_series('rate(chi_clickhouse_event_InsertQuery{namespace="posthog"}[5m])', "Insert queries/s", [({"hostname": CH}, lambda t, i: b.noise(1.2, 0.1) if t < T("2026-08-19T09:52:00Z") else b.noise(17.5, 0.1))])
b.rng_series('chi_clickhouse_metric_BackgroundMergesAndMutationsPoolTask{namespace="posthog"}', "Running merges", [({"hostname": CH}, lambda t, i: rng.randint(2, 5) if t < T("2026-08-19T09:52:00Z") else 16)], fmt="%d")
b.rng_series('sum by (consumergroup, topic) (kafka_consumergroup_lag{namespace="posthog"})', "Kafka consumer lag",
             [({"consumergroup": "group1", "topic": "clickhouse_events_json"}, lambda t, i: b.noise(800, 0.4) if t < onset else 800 + (t - onset).total_seconds() * 61),
              ({"consumergroup": "ingestion", "topic": "events_plugin_ingestion"}, lambda t, i: b.noise(300, 0.5))], fmt="%.0f")
b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="posthog", ingress="posthog-events"}[5m]))', "Capture request rate by status",
             [({"status": "200"}, lambda t, i: b.noise(62 + 5 * math.sin(i / 7))), ({"status": "400"}, lambda t, i: b.noise(0.3, 0.5)), ({"status": "503"}, lambda t, i: 0.0)])
b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="posthog", ingress="posthog-web"}[5m]))', "Web request rate by status",
             [({"status": "200"}, lambda t, i: b.noise(11)), ({"status": "500"}, lambda t, i: b.noise(0.05, 0.8))])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="posthog"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in W + PL + [CH, pname(wk[0])]], fmt="%d")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="posthog", container!=""}[5m]))', "CPU by pod",
             [({"pod": CH}, lambda t, i: b.noise(1.1, 0.1) if t < T("2026-08-19T09:52:00Z") else b.noise(3.9, 0.1))] + [({"pod": p}, lambda t, i: b.noise(0.4, 0.2)) for p in PL + W] + [({"pod": JP}, lambda t, i: b.noise(0.3, 0.2) if t > T("2026-08-19T09:52:00Z") else None)])
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="posthog", container!=""})', "Memory by pod",
             [({"pod": CH}, lambda t, i: b.noise(1.21e10, 0.02))] + [({"pod": p}, lambda t, i: b.noise(1.4e9, 0.03)) for p in PL + W], fmt="%.0f")

notes = """
# apx-posthog-clickhouse-parts — a backfill floods ClickHouse with tiny inserts; TOO_MANY_PARTS stops the Kafka engine

**Incident.** PostHog (Helm, ns `posthog`, staging). At 09:51 data-eng starts Job `events-backfill-2026q2` inserting historic
events into `posthog.writable_events` in batches of 50 rows with parallelism 8 across three monthly partitions. Each tiny insert creates a
new part in `sharded_events`; merges (pool of 16) cannot keep up. From 09:57 ClickHouse delays inserts (`Delaying inserting block ...
because there are N parts`, parts_to_delay_insert=1000), and at 10:05 the partition reaches parts_to_throw_insert=3000: every insert
gets `Code: 252 ... Too many parts ... (TOO_MANY_PARTS)`, including the StorageKafka consumer `kafka_events_json` that moves live events
from Kafka into `sharded_events`. Capture (posthog-events) and plugin-server ingestion keep working (they only write to Kafka), so
/capture returns 200 but nothing new lands in ClickHouse: insights/activity stop updating and the `clickhouse_events_json` lag grows.

**Chain / evidence.** Symptom (question) -> capture 200s unchanged, plugin-server "Processed batch" logs normal -> Kafka lag of
`group1`/`clickhouse_events_json` growing from 10:05 (metrics) -> ClickHouse logs `StorageKafka ... TOO_MANY_PARTS` (pod
chi-posthog-posthog-0-0-0) -> `chi_clickhouse_metric_MaxPartCountForPartition` ramps 180 -> 3000, DelayedInserts then RejectedInserts,
InsertQuery rate x15 from 09:52 -> Job `events-backfill-2026q2` (k8s/workloads.yaml, BATCH_ROWS=50, PARALLELISM=8; its logs), merge_tree
limits in configmap `posthog-clickhouse-config`.

**Decoys.** posthog-worker soft-time-limit warning on cohort calculation and one liveness failure (before onset); Zookeeper fsync
warning (09:44); plugin-server "Person property update conflicts" warnings; feature-flag DB fallback warnings in web.

**must_mention:** `clickhouse`, `parts` (too many parts).

**Provenance.** ClickHouse TOO_MANY_PARTS (error 252) and parts_to_delay_insert/parts_to_throw_insert are upstream behaviour
(ClickHouse docs, many public issues/postmortems about small inserts); awesome-prometheus-alerts ClickHouse rules
(ClickhouseRejectedInserts / ClickhouseDelayedInserts). App objects follow PostHog/charts-clickhouse (posthog-web, -events,
-plugins, -worker, Altinity operator pod `chi-posthog-posthog-0-0-0`, kafka_events_json Kafka table). Generated by gen/c03_posthog.py (seed 303).
"""
b.write(["clickhouse", "parts"], notes)
