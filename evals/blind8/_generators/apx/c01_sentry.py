from lib import *

b = Bundle("apx-sentry-kafka-disk", "Sentry staging: ingest 503s and no new issues", "2026-09-14T13:30:00Z", "2026-09-14T14:40:00Z",
           "staging", "stg-eks-euc1",
           "sentry staging (ns sentry): new errors stopped showing up in the issue stream around 14:13 and the SDKs in our test apps "
           "are now getting 503s from the ingest endpoint. the web UI itself loads fine. what's going on?", 101)
b.ns = ns = "sentry"
T = P
onset = T("2026-09-14T14:12:41Z")
nodes = ["ip-10-42-11-87.eu-central-1.compute.internal", "ip-10-42-23-140.eu-central-1.compute.internal", "ip-10-42-35-19.eu-central-1.compute.internal"]
for n, z in zip(nodes, ["a", "b", "c"]):
    b.node(n, zone="eu-central-1" + z, labels={"eks.amazonaws.com/nodegroup": "general"}, instance="m6i.2xlarge", cpu="8", alloc_cpu="7910m", mem="32408552Ki", alloc_mem="31391720Ki")
b.event("Node", nodes[1], None, "FreeDiskSpaceFailed", "Failed to garbage collect required amount of images. Attempted to free 4187261747 bytes, but only found 0 bytes eligible to free.",
        "2026-09-14T13:41:07Z", "2026-09-14T14:06:07Z", 6, "Warning", host=nodes[1])
b.namespace(ns, {"environment": "staging", "team": "platform-observability"})

IMG = "getsentry/sentry:24.8.0"
common_env = {"SENTRY_CONF": "/etc/sentry", "C_FORCE_ROOT": "true", "SNUBA": "http://sentry-snuba:1218", "SENTRY_SINGLE_ORGANIZATION": "true"}
web = app(b, "sentry-web", ns, IMG, 2, 9000, nodes, labels={"app": "sentry", "role": "web"}, env=common_env, args=["run", "web"],
          readiness=b.http_probe("/_health/", 9000, 10, 2, 5), liveness=b.http_probe("/_health/", 9000, 10, 2, 5),
          resources={"requests": {"cpu": "200m", "memory": "850Mi"}, "limits": {"memory": "2Gi"}}, revision=8, created="2026-03-02T09:00:00Z",
          pod_created="2026-09-14T13:45:20Z", rs_created="2026-09-14T13:45:18Z", old_rs=("7cd8f9b5c4", 7, [b.container("sentry-web", IMG, 9000)], "2026-08-27T10:11:00Z"))
relay_labels = {"app": "sentry", "role": "relay"}
relay = app(b, "sentry-relay", ns, "getsentry/relay:24.8.0", 2, 3000, nodes[1:], labels=relay_labels, args=["run"],
            env={"RELAY_PORT": "3000"}, readiness=b.http_probe("/api/relay/healthcheck/ready/", 3000), liveness=b.http_probe("/api/relay/healthcheck/live/", 3000),
            resources={"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}, created="2026-03-02T09:00:00Z", pod_created="2026-09-10T08:02:11Z")
ing = app(b, "sentry-ingest-consumer-events", ns, IMG, 1, None, nodes[2:], labels={"app": "sentry", "role": "ingest-consumer-events"},
          args=["run", "consumer", "ingest-events", "--consumer-group", "ingest-consumer"], env=common_env, created="2026-03-02T09:00:00Z", pod_created="2026-09-10T08:02:40Z")
sn = app(b, "sentry-snuba-consumer", ns, "getsentry/snuba:24.8.0", 1, None, nodes[:1], labels={"app": "sentry", "role": "snuba-consumer"},
         args=["rust-consumer", "--storage=errors", "--consumer-group=snuba-consumers", "--auto-offset-reset=latest", "--no-strict-offset-reset"],
         env={"SNUBA_SETTINGS": "self_hosted", "DEFAULT_BROKERS": "sentry-kafka:9092", "CLICKHOUSE_HOST": "sentry-clickhouse"}, created="2026-03-02T09:00:00Z", pod_created="2026-09-10T08:03:00Z")
sym = app(b, "sentry-symbolicator", ns, "getsentry/symbolicator:24.8.0", 1, 3021, nodes[2:], labels={"app": "sentry", "role": "symbolicator-api"},
          args=["run", "-c", "/etc/symbolicator/config.yml"], created="2026-03-02T09:00:00Z", pod_created="2026-09-10T08:03:30Z")
kafka_labels = {"app.kubernetes.io/name": "kafka", "app.kubernetes.io/instance": "sentry", "app.kubernetes.io/component": "controller-eligible"}
kc = b.container("kafka", "docker.io/bitnami/kafka:3.7.1-debian-12-r4", [("client", 9092), ("controller", 9093)],
                 {"KAFKA_CFG_PROCESS_ROLES": "controller,broker", "KAFKA_CFG_LOG_DIRS": "/bitnami/kafka/data", "KAFKA_CFG_LOG_RETENTION_HOURS": "168",
                  "KAFKA_CFG_LOG_RETENTION_BYTES": "-1", "KAFKA_CFG_MESSAGE_MAX_BYTES": "50000000", "KAFKA_HEAP_OPTS": "-Xmx1024m -Xms1024m"},
                 {"requests": {"cpu": "250m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}, b.tcp_probe("controller", 10, 5, 3), b.tcp_probe("client", 10, 5, 6),
                 volumeMounts=[{"name": "data", "mountPath": "/bitnami/kafka"}])
b.statefulset("sentry-kafka-controller", ns, kafka_labels, [kc], 1, ready=0, created="2026-03-02T09:00:00Z", svc="sentry-kafka-controller-headless",
              vct=[{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}, "storageClassName": "gp3"}}])
kpod = b.pod("sentry-kafka-controller-0", ns, dict(kafka_labels, **{"statefulset.kubernetes.io/pod-name": "sentry-kafka-controller-0"}), ("StatefulSet", "sentry-kafka-controller"),
             [kc], nodes[2], "2026-09-10T08:01:50Z",
             cstatus={"kafka": crashloop(7, "Error", 1, "2026-09-14T14:31:44Z", "2026-09-14T14:31:58Z")},
             volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-sentry-kafka-controller-0"}}])
b.service("sentry-kafka", ns, kafka_labels, [("tcp-client", 9092, "client")], endpoints=[(kpod["status"]["podIP"], nodes[2], kpod["metadata"]["name"], False)])
b.add("storage.yaml", {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": b.meta("PersistentVolumeClaim", "data-sentry-kafka-controller-0", ns, kafka_labels, {"pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"}, "2026-03-02T09:00:05Z"),
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}, "storageClassName": "gp3", "volumeMode": "Filesystem", "volumeName": "pvc-3b1f0e7a-5d2c-4c49-9f57-2e8a6f1c0d44"},
                       "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "20Gi"}}})
b.add("storage.yaml", {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": b.meta("PersistentVolumeClaim", "data-sentry-clickhouse-0", ns, {"app.kubernetes.io/name": "clickhouse"}, {"pv.kubernetes.io/bind-completed": "yes"}, "2026-03-02T09:00:05Z"),
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "100Gi"}}, "storageClassName": "gp3", "volumeMode": "Filesystem", "volumeName": "pvc-81c2aa90-0f3e-4a8e-b0d1-7a1c55e2f903"},
                       "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "100Gi"}}})
pg = app(b, "sentry-postgresql", ns, "docker.io/bitnami/postgresql:15.6.0-debian-12-r20", 1, 5432, nodes[:1], kind="StatefulSet",
         labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "sentry"}, created="2026-03-02T09:00:00Z", pod_created="2026-09-10T08:01:10Z", container_name="postgresql", svc_ports=[("tcp-postgresql", 5432, "tcp-postgresql")])
b.configmap("sentry-relay", ns, {"config.yml": "relay:\n  mode: managed\n  upstream: http://sentry-web:9000/\n  host: 0.0.0.0\n  port: 3000\nprocessing:\n  enabled: true\n  kafka_config:\n    - name: bootstrap.servers\n      value: sentry-kafka:9092\n    - name: message.max.bytes\n      value: 50000000\n  redis: redis://sentry-sentry-redis-master:6379\nspool:\n  envelopes:\n    max_memory_size: 524288000\n"})
b.configmap("sentry-kafka-controller-configuration", ns, {"server.properties": "log.dirs=/bitnami/kafka/data\nlog.retention.hours=168\nlog.retention.bytes=-1\nlog.segment.bytes=1073741824\nnum.partitions=1\ndefault.replication.factor=1\noffsets.topic.replication.factor=1\nauto.create.topics.enable=true\n"})

# events
K = "sentry-kafka-controller-0"
b.event("Pod", K, ns, "BackOff", "Back-off restarting failed container kafka in pod sentry-kafka-controller-0_sentry(%s)" % kpod["metadata"]["uid"], "2026-09-14T14:14:02Z", "2026-09-14T14:38:40Z", 47, "Warning", host=nodes[2], fieldPath="spec.containers{kafka}")
b.event("Pod", K, ns, "Started", "Started container kafka", "2026-09-14T14:12:59Z", "2026-09-14T14:31:44Z", 7, host=nodes[2], fieldPath="spec.containers{kafka}")
b.event("Pod", K, ns, "Unhealthy", "Readiness probe failed: dial tcp %s:9092: connect: connection refused" % kpod["status"]["podIP"], "2026-09-14T14:12:50Z", "2026-09-14T14:31:55Z", 22, "Warning", host=nodes[2], fieldPath="spec.containers{kafka}")
for p in web:
    b.event("Pod", p["metadata"]["name"], ns, "Scheduled", "Successfully assigned sentry/%s to %s" % (p["metadata"]["name"], p["spec"]["nodeName"]), "2026-09-14T13:45:20Z", component="default-scheduler")
b.event("Deployment", "sentry-web", ns, "ScalingReplicaSet", "Scaled up replica set sentry-web-%s to 2" % web[0]["metadata"]["labels"]["pod-template-hash"], "2026-09-14T13:45:18Z", component="deployment-controller", api="apps/v1")
b.event("Deployment", "sentry-web", ns, "ScalingReplicaSet", "Scaled down replica set sentry-web-7cd8f9b5c4 to 0 from 2", "2026-09-14T13:46:02Z", component="deployment-controller", api="apps/v1")
for p in relay:
    b.event("Pod", p["metadata"]["name"], ns, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", "2026-09-14T14:16:31Z", "2026-09-14T14:17:01Z", 3, "Warning", host=p["spec"]["nodeName"], fieldPath="spec.containers{sentry-relay}")

# logs
rng = b.rng
R = [p["metadata"]["name"] for p in relay]
W = [p["metadata"]["name"] for p in web]
ING = ing[0]["metadata"]["name"]
SN = sn[0]["metadata"]["name"]
offset = [48213377]


def klog(t, lvl, msg):
    b.log(t, "sentry-kafka", K, "[%s,%03d] %s %s" % (t.strftime("%Y-%m-%d %H:%M:%S"), t.microsecond // 1000, lvl, msg), lvl, container="kafka")


def kinfo(t):
    if t < onset:
        part = rng.choice(["ingest-events-0", "events-0", "snuba-commit-log-0", "ingest-attachments-0", "outcomes-0", "transactions-0"])
        offset[0] += rng.randint(40000, 90000)
        r = rng.random()
        if r < 0.5:
            klog(t, "INFO", "[LocalLog partition=%s, dir=/bitnami/kafka/data] Rolled new log segment at offset %d in %d ms. (kafka.log.LocalLog)" % (part, offset[0], rng.randint(1, 9)))
        elif r < 0.8:
            klog(t, "INFO", "[ProducerStateManager partition=%s] Wrote producer snapshot at offset %d with 0 producer ids in %d ms. (org.apache.kafka.storage.internals.log.ProducerStateManager)" % (part, offset[0], rng.randint(1, 6)))
        else:
            klog(t, "INFO", "[GroupCoordinator 0]: Member rdkafka-%s in group snuba-consumers has left? no; committed offsets (kafka.coordinator.group.GroupCoordinator)" % rid(rng, 8) if False else
                 "[UnifiedLog partition=%s, dir=/bitnami/kafka/data] Incremented log start offset to %d due to segment deletion (kafka.log.UnifiedLog)" % (part, offset[0] - rng.randint(9000000, 12000000)))


b.every("2026-09-14T13:30:00Z", onset, 45, kinfo)
klog(T("2026-09-14T14:12:41Z").replace(microsecond=337000), "ERROR", "Error while appending records to ingest-events-0 in dir /bitnami/kafka/data (org.apache.kafka.storage.internals.log.LogDirFailureChannel)\njava.io.IOException: No space left on device\n\tat java.base/sun.nio.ch.FileDispatcherImpl.write0(Native Method)\n\tat java.base/sun.nio.ch.FileChannelImpl.write(FileChannelImpl.java:285)\n\tat org.apache.kafka.common.record.MemoryRecords.writeFullyTo(MemoryRecords.java:92)\n\tat org.apache.kafka.common.record.FileRecords.append(FileRecords.java:188)")
klog(T("2026-09-14T14:12:41Z").replace(microsecond=402000), "WARN", "[ReplicaManager broker=0] Stopping serving replicas in dir /bitnami/kafka/data (kafka.server.ReplicaManager)")
klog(T("2026-09-14T14:12:41Z").replace(microsecond=455000), "WARN", "[ReplicaManager broker=0] Broker 0 stopped fetcher for partitions ingest-events-0,events-0,outcomes-0,snuba-commit-log-0,transactions-0,ingest-attachments-0 and stopped moving logs for partitions  because they are in the failed log directory /bitnami/kafka/data. (kafka.server.ReplicaManager)")
klog(T("2026-09-14T14:12:41Z").replace(microsecond=488000), "ERROR", "Shutdown broker because all log dirs in /bitnami/kafka/data have failed (kafka.log.LogManager)")
for st in ["2026-09-14T14:12:59Z", "2026-09-14T14:13:31Z", "2026-09-14T14:14:22Z", "2026-09-14T14:16:03Z", "2026-09-14T14:19:10Z", "2026-09-14T14:24:31Z", "2026-09-14T14:31:44Z"]:
    t = T(st)
    klog(t + dt.timedelta(seconds=2), "INFO", "Registered kafka:type=kafka.Log4jController MBean (kafka.utils.Log4jControllerRegistration$)")
    klog(t + dt.timedelta(seconds=3), "INFO", "[KafkaRaftServer nodeId=0] Rewriting /bitnami/kafka/data/meta.properties (kafka.server.KafkaRaftServer)")
    klog(t + dt.timedelta(seconds=9), "INFO", "Loading logs from log dirs ArrayBuffer(/bitnami/kafka/data) (kafka.log.LogManager)")
    klog(t + dt.timedelta(seconds=11), "ERROR", "Error while writing to checkpoint file /bitnami/kafka/data/recovery-point-offset-checkpoint (org.apache.kafka.storage.internals.log.LogDirFailureChannel)\njava.io.IOException: No space left on device\n\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)\n\tat org.apache.kafka.server.common.CheckpointFile.write(CheckpointFile.java:84)")
    klog(t + dt.timedelta(seconds=12), "ERROR", "Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)\norg.apache.kafka.common.errors.KafkaStorageException: Error while writing to checkpoint file /bitnami/kafka/data/recovery-point-offset-checkpoint")


def relay_ok(t):
    p = rng.choice(R)
    if rng.random() < 0.15:
        b.log(t, "sentry-relay", p, "%s  INFO relay_server::services::project_upstream: updating project states for %d/%d projects (%d with outdated state)" % (iso(t, True), rng.randint(1, 4), rng.randint(3, 6), rng.randint(0, 2)), "INFO")
    elif rng.random() < 0.1:
        b.log(t, "sentry-relay", p, "%s  WARN relay_server::services::processor: dropped envelope: invalid data (invalid_transaction: timestamp is too stale) project_id=4" % iso(t, True), "WARN")


b.every("2026-09-14T13:30:00Z", "2026-09-14T14:40:00Z", 25, relay_ok)


def relay_err(t):
    p = rng.choice(R)
    if t < T("2026-09-14T14:15:30Z"):
        b.log(t, "sentry-relay", p, "%s ERROR relay_server::services::store: failed to store envelope error=failed to send kafka message error.sources=[Local: Message timed out (MessageTimedOut)] topic=ingest-events project_id=%d" % (iso(t, True), rng.choice([2, 3, 4, 7])), "ERROR")
    else:
        if rng.random() < 0.5:
            b.log(t, "sentry-relay", p, "%s ERROR relay_server::services::store: failed to store envelope error=failed to send kafka message error.sources=[Local: Queue full (QueueFull)] topic=%s project_id=%d" % (iso(t, True), rng.choice(["ingest-events", "ingest-transactions", "outcomes"]), rng.choice([2, 3, 4, 7])), "ERROR")
        else:
            b.log(t, "sentry-relay", p, "%s  WARN relay_server::endpoints::common: error handling request error=envelope buffer capacity exceeded status=503 project_id=%d" % (iso(t, True), rng.choice([2, 3, 4, 7])), "WARN")


b.every(onset + dt.timedelta(seconds=30), "2026-09-14T14:40:00Z", 5, relay_err)
b.log(T("2026-09-14T14:12:47Z"), "sentry-relay", R[0], "2026-09-14T14:12:47.118Z ERROR rdkafka::client: librdkafka: FAIL [thrd:sentry-kafka:9092/bootstrap]: sentry-kafka:9092/0: Connect to ipv4#%s:9092 failed: Connection refused (after 0ms in state CONNECT)" % kpod["status"]["podIP"], "ERROR")


def webl(t):
    p = rng.choice(W)
    path = rng.choice(["/api/0/organizations/acme/issues/?query=is%3Aunresolved&statsPeriod=14d", "/api/0/organizations/acme/projects/", "/api/0/organizations/acme/issues-stats/",
                       "/api/0/projects/acme/checkout-web/events/", "/api/0/organizations/acme/", "/_static/1726310112/sentry/dist/app.js"])
    ms = rng.randint(30, 420)
    b.log(t, "sentry-web", p, "[pid: %d|app: 0|req: %d/%d] %s () {62 vars in 1391 bytes} [%s] GET %s => generated %d bytes in %d msecs (HTTP/1.1 200) 7 headers in 397 bytes (1 switches on core 0)" % (
        rng.randint(18, 30), rng.randint(100, 9000), rng.randint(200, 18000), "10.42.%d.%d" % (rng.randint(0, 40), rng.randint(2, 250)), t.strftime("%a %b %d %H:%M:%S %Y"), path, rng.randint(900, 60000), ms), None)


b.every("2026-09-14T13:46:00Z", "2026-09-14T14:40:00Z", 9, webl)
b.log(T("2026-09-14T13:45:41Z"), "sentry-web", W[0], "13:45:41 [WARNING] sentry.utils.warnings: The `SENTRY_USE_X_FORWARDED_HOST` setting is deprecated and will be removed in a future release.", "WARNING")
b.log(T("2026-09-14T13:45:44Z"), "sentry-web", W[0], "*** uWSGI is running in multiple interpreter mode ***\nspawned uWSGI master process (pid: 7)\nspawned uWSGI worker 1 (pid: 18, cores: 4)\nspawned uWSGI worker 2 (pid: 19, cores: 4)", None)


def ingest(t):
    if t < onset:
        if rng.random() < 0.3:
            b.log(t, "sentry-ingest-consumer", ING, "%s [INFO] arroyo.processing.processor: Paused partitions after 0 messages; resuming" % t.strftime("%H:%M:%S") if False else
                  "%s [INFO] sentry.ingest.consumer.processors: ingest-events batch processed messages=%d duration_ms=%d" % (t.strftime("%H:%M:%S"), rng.randint(40, 180), rng.randint(80, 400)), "INFO", container="sentry-ingest-consumer-events")
    else:
        b.log(t, "sentry-ingest-consumer", ING, '%s [ERROR] arroyo.backends.kafka.consumer: Error polling for messages: KafkaError{code=_TRANSPORT,val=-195,str="sentry-kafka:9092/0: Connect to ipv4#%s:9092 failed: Connection refused (after 1ms in state CONNECT, 12 identical error(s) suppressed)"}' % (t.strftime("%H:%M:%S"), kpod["status"]["podIP"]), "ERROR", container="sentry-ingest-consumer-events")


b.every("2026-09-14T13:30:00Z", "2026-09-14T14:40:00Z", 20, ingest)


def snuba(t):
    if t < onset:
        b.log(t, "snuba-consumer", SN, '{"timestamp":"%s","level":"info","fields":{"message":"Committed offsets","partition":0,"offset":%d},"target":"rust_arroyo::processing"}' % (iso(t, True), 8120000 + int((t - b.start).total_seconds() * 14)), "info", container="sentry-snuba-consumer")
    else:
        b.log(t, "snuba-consumer", SN, '{"timestamp":"%s","level":"error","fields":{"message":"Failed to poll: Message consumption error: BrokerTransportFailure (Local: Broker transport failure)"},"target":"rust_arroyo::backends::kafka"}' % iso(t, True), "error", container="sentry-snuba-consumer")


b.every("2026-09-14T13:30:00Z", "2026-09-14T14:40:00Z", 30, snuba)


def symb(t):
    b.log(t, "symbolicator", sym[0]["metadata"]["name"], "%s WARN symbolicator::services::download: Failed to fetch debug file error=download failed: 404 Not Found source=microsoft-symbol-server file=ntdll.pdb" % iso(t, True), "WARN", container="sentry-symbolicator")


b.every("2026-09-14T13:30:00Z", "2026-09-14T14:40:00Z", 240, symb)
PG = pg[0]["metadata"]["name"]
for t in ["2026-09-14T13:51:12Z", "2026-09-14T13:52:03Z"]:
    b.log(T(t), "sentry-postgresql", PG, "%s UTC [64] LOG:  checkpoints are occurring too frequently (%d seconds apart)\n%s UTC [64] HINT:  Consider increasing the configuration parameter \"max_wal_size\"." % (t.replace("T", " ")[:19], 24, t.replace("T", " ")[:19]), "LOG", container="postgresql")

# metrics
ons = ep(onset)


def pvc_ratio(t, i):
    x = ep(t)
    if x >= ons:
        return 1.0
    return 0.874 + 0.126 * (x - ep(b.start)) / (ons - ep(b.start)) + rng.uniform(-0.001, 0.001)


b.rng_series('kubelet_volume_stats_used_bytes{namespace="sentry"} / kubelet_volume_stats_capacity_bytes{namespace="sentry"}', "PVC usage ratio",
             [({"persistentvolumeclaim": "data-sentry-kafka-controller-0"}, lambda t, i: min(1.0, pvc_ratio(t, i))),
              ({"persistentvolumeclaim": "data-sentry-clickhouse-0"}, lambda t, i: 0.612 + i * 0.0002),
              ({"persistentvolumeclaim": "data-sentry-postgresql-0"}, lambda t, i: 0.331),
              ({"persistentvolumeclaim": "redis-data-sentry-sentry-redis-master-0"}, lambda t, i: 0.044)])
b.rng_series('kubelet_volume_stats_available_bytes{namespace="sentry", persistentvolumeclaim="data-sentry-kafka-controller-0"}', "Kafka PVC free bytes",
             [({"persistentvolumeclaim": "data-sentry-kafka-controller-0"}, lambda t, i: max(0, (1 - pvc_ratio(t, i)) * 21474836480 if ep(t) < ons else 0))], fmt="%.0f")


def relay_rate(code):
    def f(t, i):
        x = ep(t)
        base = 46 + 6 * math.sin(i / 9)
        if code == "200":
            if x < ons:
                return b.noise(base)
            return b.noise(base) * max(0.0, 1 - (x - ons) / 240)
        if code == "503":
            if x < ons:
                return 0.0
            return b.noise(base) * min(1.0, (x - ons) / 240)
        if code == "429":
            return b.noise(0.4, 0.5)
        if code == "400":
            return b.noise(0.9, 0.3)
    return f


import math
b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="sentry", ingress="sentry-relay"}[5m]))', "Relay ingest request rate by status",
             [({"status": c}, relay_rate(c)) for c in ["200", "400", "429", "503"]])
b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="sentry", ingress="sentry-web"}[5m]))', "Web UI/API request rate by status",
             [({"status": "200"}, lambda t, i: b.noise(7.5)), ({"status": "302"}, lambda t, i: b.noise(0.6)), ({"status": "404"}, lambda t, i: b.noise(0.2, 0.5)),
              ({"status": "502"}, lambda t, i: 0.35 if T("2026-09-14T13:45:00Z") <= t <= T("2026-09-14T13:47:00Z") else 0.0)])
b.rng_series('histogram_quantile(0.99, sum by (le) (rate(nginx_ingress_controller_request_duration_seconds_bucket{exported_namespace="sentry", ingress="sentry-web"}[5m])))', "Web p99 latency (s)",
             [({}, lambda t, i: b.noise(0.82, 0.15))])
b.rng_series('kafka_brokers{namespace="sentry"}', "Kafka brokers seen by kafka-exporter", [({"service": "sentry-kafka-exporter"}, lambda t, i: 1 if ep(t) < ons else 0)], fmt="%d")
b.rng_series('sum by (consumergroup) (kafka_consumergroup_lag{namespace="sentry"})', "Consumer group lag (absent while broker is down)",
             [({"consumergroup": g}, (lambda g: lambda t, i: (b.noise(base, 0.4) if ep(t) < ons else None))(g)) for g, base in [("ingest-consumer", 35), ("snuba-consumers", 120), ("snuba-post-processor", 12)]], fmt="%.0f")
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="sentry"})', "Container restarts",
             [({"pod": K}, lambda t, i: sum(1 for s in ["2026-09-14T14:12:58Z", "2026-09-14T14:13:30Z", "2026-09-14T14:14:21Z", "2026-09-14T14:16:02Z", "2026-09-14T14:19:09Z", "2026-09-14T14:24:30Z", "2026-09-14T14:31:43Z"] if T(s) <= t)),
              ] + [({"pod": p}, lambda t, i: 0) for p in R + W + [ING, SN]], fmt="%d")
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="sentry", container!=""})', "Memory working set by pod",
             [({"pod": p}, (lambda base, grow: lambda t, i: b.noise(base, 0.03) * (1 + (grow if t > onset else 0)))(base, grow)) for p, base, grow in
              [(R[0], 3.1e8, 0.9), (R[1], 2.9e8, 0.95), (W[0], 1.02e9, 0), (W[1], 9.8e8, 0), (ING, 4.1e8, 0), (SN, 1.3e8, 0)]] +
             [({"pod": K}, lambda t, i: b.noise(1.35e9, 0.02) if t < onset else b.noise(4.0e8, 0.3))], fmt="%.0f")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="sentry", container!=""}[5m]))', "CPU by pod",
             [({"pod": p}, (lambda base: lambda t, i: b.noise(base, 0.2))(base)) for p, base in [(R[0], 0.21), (R[1], 0.19), (W[0], 0.12), (W[1], 0.11), (ING, 0.15), (SN, 0.05), (K, 0.3)]])

notes = """
# apx-sentry-kafka-disk — Sentry's single Kafka broker runs out of disk; relay 503s and no new issues

**Incident.** Sentry self-hosted (Helm, ns `sentry`, staging). The single KRaft Kafka broker `sentry-kafka-controller-0`
(bitnami/kafka 3.7.1, 20Gi gp3 PVC, retention 168h and no byte cap) fills its data volume. At 14:12:41 an append to
`ingest-events-0` fails with `java.io.IOException: No space left on device`, the log dir is marked failed and the broker
shuts down ("Shutdown broker because all log dirs ... have failed"). Every restart dies while writing the recovery-point
checkpoint (no space) -> CrashLoopBackOff. Relay can no longer produce (`Message timed out`, then `Queue full`), its envelope
buffer fills and from ~14:14 it answers 503 to SDKs; ingest/snuba consumers cannot poll, so no new issues appear. The
web UI keeps working (it reads Postgres/ClickHouse).

**Chain / evidence.** Symptom: relay 503s (metrics `nginx_ingress_controller_requests{ingress="sentry-relay"}` by status;
relay logs `failed to store envelope ... failed to send kafka message`) -> consumers `Connection refused` to sentry-kafka (logs)
-> `kafka_brokers` 1 -> 0, `sentry-kafka-controller-0` CrashLoopBackOff with 7 restarts (k8s/pods.yaml, events BackOff/Unhealthy)
-> Kafka logs `No space left on device` (14:12:41, container kafka) -> PVC `data-sentry-kafka-controller-0` usage climbs
87% -> 100% (metrics `kubelet_volume_stats_*`), k8s/storage.yaml 20Gi, configmap `log.retention.bytes=-1`.

**Decoys.** sentry-web rollout at 13:45 (revision 8, routine; brief 502 blip, before onset); node `FreeDiskSpaceFailed`
image-GC warnings on ip-10-42-23-140 (node disk, not the Kafka PVC; DiskPressure False); symbolicator 404 symbol fetch
warnings throughout; Postgres checkpoint-frequency LOG lines; relay memory growth (consequence of buffering).

**must_mention:** `kafka`, `disk` (the broker's data disk/volume is full).

**Provenance.** Failure mode: disk/volume full (awesome-prometheus-alerts "KubernetesPersistentvolumeclaimPending / Host out of disk
space / Kafka"; Chaos Mesh/Litmus disk-fill experiment); Kafka LogDirFailureChannel behaviour when the only log dir fails
is upstream Kafka behaviour. Application objects follow getsentry/self-hosted and sentry-kubernetes/charts (sentry-web,
sentry-relay, ingest consumers, snuba rust-consumer, bitnami kafka subchart). Generated by gen/c01_sentry.py (seed 101).
"""
b.write(["kafka", "disk"], notes)
