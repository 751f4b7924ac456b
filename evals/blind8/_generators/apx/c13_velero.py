from lib import *
import math

b = Bundle("apx-velero-minio-clock-skew", "Velero nightly backup failed; BSL Unavailable", "2026-12-03T01:30:00Z", "2026-12-03T02:40:00Z",
           "test", "test-k3s-lab",
           "test cluster: last night's scheduled 02:00 velero backup daily-20261203020000 failed and the BackupStorageLocation 'default' flipped to Unavailable. "
           "minio (ns minio) is up and thanos still uploads blocks to it fine. what broke the backup?", 1313)
b.ns = "velero"
T = P
skew = 1031.4
nodes = ["lab-worker-01", "lab-worker-02", "lab-worker-03"]
for k, n in enumerate(nodes):
    b.node(n, labels={"node-role.kubernetes.io/worker": "true"}, zone="lab-rack1", instance="k3s", kubelet="v1.30.6+k3s1", runtime="containerd://1.7.22-k3s1",
           os_image="Ubuntu 24.04.1 LTS" if k != 1 else "Ubuntu 24.04.1 LTS (acme-hardened 2026.11)", kernel="6.8.0-49-generic", cpu="16", alloc_cpu="16", mem="65785960Ki", alloc_mem="65785960Ki",
           created="2026-11-19T10:00:00Z" if k == 1 else "2026-03-01T10:00:00Z")
for n in ["velero", "minio", "monitoring"]:
    b.namespace(n, {"environment": "test"})
vl = {"app.kubernetes.io/name": "velero", "app.kubernetes.io/instance": "velero", "component": "velero"}
vp = app(b, "velero", "velero", "velero/velero:v1.15.0", 1, [("http-monitoring", 8085)], nodes[1:2], labels=vl, container_name="velero",
         command=["/velero"], args=["server", "--uploader-type=kopia", "--default-backup-storage-location=default", "--log-format=text"],
         env={"AWS_SHARED_CREDENTIALS_FILE": "/credentials/cloud", "VELERO_NAMESPACE": "velero"}, sa="velero-server", created="2026-03-05T10:00:00Z", pod_created="2026-11-28T09:14:00Z",
         extra_containers=[], init=[b.container("velero-velero-plugin-for-aws", "velero/velero-plugin-for-aws:v1.11.0", None, None, {"requests": {"cpu": "50m", "memory": "64Mi"}})],
         init_status=[[{"name": "velero-velero-plugin-for-aws", "ready": True, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-11-28T09:14:03Z", "finishedAt": "2026-11-28T09:14:04Z"}}, "image": "velero/velero-plugin-for-aws:v1.11.0", "imageID": "", "started": False}]])
VP = pname(vp[0])
ml = {"app": "minio", "release": "minio"}
mp = app(b, "minio", "minio", "quay.io/minio/minio:RELEASE.2024-11-07T00-52-20Z", 4, [("http", 9000), ("http-console", 9001)], [nodes[0], nodes[2], nodes[0], nodes[2]], kind="StatefulSet", labels=ml,
         container_name="minio", command=["/bin/sh", "-ce", "/usr/bin/docker-entrypoint.sh minio server http://minio-{0...3}.minio-svc.minio.svc/export-{0...0} -S /etc/minio/certs/ --address :9000 --console-address :9001"],
         created="2026-03-05T10:00:00Z", pod_created="2026-11-20T11:00:00Z")
M = [pname(p) for p in mp]
th = app(b, "thanos-sidecar-uploader", "monitoring", "quay.io/thanos/thanos:v0.36.1", 1, None, nodes[0:1], labels={"app": "prometheus", "component": "thanos-sidecar"}, container_name="thanos-sidecar",
         created="2026-03-05T10:00:00Z", pod_created="2026-11-20T11:05:00Z")
ne = []
for n in nodes:
    ne += b.k8s.setdefault("pods.yaml", [])[-0:0]
b.raw("velero.yaml", {"apiVersion": "velero.io/v1", "kind": "BackupStorageLocation", "metadata": b.meta("BackupStorageLocation", "default", "velero", None, None, "2026-03-05T10:00:00Z"),
                      "spec": {"provider": "aws", "default": True, "objectStorage": {"bucket": "velero"}, "accessMode": "ReadWrite",
                               "config": {"region": "minio", "s3ForcePathStyle": "true", "s3Url": "http://minio.minio.svc:9000", "checksumAlgorithm": ""}},
                      "status": {"phase": "Unavailable", "lastValidationTime": "2026-12-03T02:38:11Z", "lastSyncedTime": "2026-12-02T04:05:09Z",
                                 "message": "BackupStorageLocation \"default\" is unavailable: rpc error: code = Unknown desc = operation error S3: ListObjectsV2, https response error StatusCode: 403, RequestID: 181DB5A0C6E1F2A4, HostID: dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8, api error RequestTimeTooSkewed: The difference between the request time and the server's time is too large."}})
b.raw("velero.yaml", {"apiVersion": "velero.io/v1", "kind": "Schedule", "metadata": b.meta("Schedule", "daily", "velero", None, None, "2026-03-05T10:00:00Z"),
                      "spec": {"schedule": "0 2 * * *", "template": {"ttl": "720h0m0s", "includedNamespaces": ["*"], "excludedNamespaces": ["kube-system"], "snapshotMoveData": False, "defaultVolumesToFsBackup": True}},
                      "status": {"phase": "Enabled", "lastBackup": "2026-12-03T02:00:00Z"}})
for d, ph, extra in [("20261201020000", "Completed", {"completionTimestamp": "2026-12-01T02:09:41Z", "progress": {"itemsBackedUp": 2114, "totalItems": 2114}}),
                     ("20261202020000", "Completed", {"completionTimestamp": "2026-12-02T02:10:12Z", "progress": {"itemsBackedUp": 2127, "totalItems": 2127}, "warnings": 2}),
                     ("20261203020000", "Failed", {"failureReason": "error checking if backup already exists in object storage: rpc error: code = Unknown desc = operation error S3: HeadObject, https response error StatusCode: 403, RequestID: 181DB4F9E83A27C1, HostID: dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8, api error Forbidden: Forbidden", "completionTimestamp": "2026-12-03T02:00:11Z"})]:
    st = {"phase": ph, "startTimestamp": "%s-%s-%sT02:00:00Z" % (d[:4], d[4:6], d[6:8]), "expiration": "2027-01-02T02:00:00Z", "version": 1, "formatVersion": "1.1.0"}
    st.update(extra)
    b.raw("velero.yaml", {"apiVersion": "velero.io/v1", "kind": "Backup", "metadata": b.meta("Backup", "daily-" + d, "velero", {"velero.io/schedule-name": "daily", "velero.io/storage-location": "default"}, None, {"20261201020000": "2026-12-01T01:47:37Z", "20261202020000": "2026-12-02T01:45:13Z", "20261203020000": "2026-12-03T01:42:49Z"}[d]),
                          "spec": {"storageLocation": "default", "ttl": "720h0m0s", "includedNamespaces": ["*"], "excludedNamespaces": ["kube-system"], "defaultVolumesToFsBackup": True}, "status": st})
b.event("Node", nodes[1], None, "Starting", "Starting kubelet.", "2026-11-19T10:02:11Z", host=nodes[1])
b.event("Pod", M[3], "minio", "Unhealthy", "Readiness probe failed: Get \"http://%s:9000/minio/health/live\": context deadline exceeded" % mp[3]["status"]["podIP"], "2026-12-03T01:47:12Z", type_="Warning", host=nodes[2], fieldPath="spec.containers{minio}")
b.configmap("node-time-config", "kube-system", {"README": "chrony is provisioned by the base image; acme-hardened images (2026.11+) use systemd-timesyncd with NTP servers from /etc/systemd/timesyncd.conf.d/acme.conf (ntp1.corp.acme.internal, ntp2.corp.acme.internal)"},
            created="2026-11-15T10:00:00Z")

rng = b.rng


def vtime(t):
    return t + dt.timedelta(seconds=skew)


def vlog(t, lvl, msg, src):
    st = vtime(t).strftime("%Y-%m-%dT%H:%M:%SZ")
    b.log(t, "velero", VP, 'time="%s" level=%s msg="%s" %s' % (st, lvl, msg, src), lvl, container="velero", ns="velero")


def bsl(t):
    vlog(t, "error", "Current BackupStorageLocations available/unavailable/unknown: 0/1/0)", 'controller=backup-storage-location logSource="pkg/controller/backup_storage_location_controller.go:180"')
    vlog(t + dt.timedelta(milliseconds=3), "error", "fail to validate backup store", 'backup-storage-location=velero/default controller=backup-storage-location error="rpc error: code = Unknown desc = operation error S3: ListObjectsV2, https response error StatusCode: 403, RequestID: %s, HostID: dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8, api error RequestTimeTooSkewed: The difference between the request time and the server\'s time is too large." error.file="/go/src/github.com/vmware-tanzu/velero/pkg/persistence/object_store.go:217" error.function="github.com/vmware-tanzu/velero/pkg/persistence.(*objectBackupStore).IsValid" logSource="pkg/controller/backup_storage_location_controller.go:144"' % rid(rng, 16, "0123456789ABCDEF"))


b.every(b.start, b.end, 60, bsl, jitter=0.02)


def sync(t):
    vlog(t, "error", "Error getting backups from object storage", 'backupLocation=velero/default controller=backup-sync error="rpc error: code = Unknown desc = operation error S3: ListObjectsV2, https response error StatusCode: 403, api error RequestTimeTooSkewed: The difference between the request time and the server\'s time is too large." logSource="pkg/controller/backup_sync_controller.go:112"')


b.every(b.start, b.end, 300, sync, jitter=0.02)
t0 = T("2026-12-03T02:00:00Z") - dt.timedelta(seconds=skew)
vlog(t0 + dt.timedelta(seconds=0.2), "info", "Checking schedule for due backup", 'controller=schedule logSource="pkg/controller/schedule_controller.go:170" schedule=velero/daily')
vlog(t0 + dt.timedelta(seconds=0.4), "info", "Schedule is due, going to submit backup.", 'controller=schedule logSource="pkg/controller/schedule_controller.go:196" schedule=velero/daily')
vlog(t0 + dt.timedelta(seconds=1), "info", "Setting up backup log", 'backup=velero/daily-20261203020000 controller=backup logSource="pkg/controller/backup_controller.go:658"')
vlog(t0 + dt.timedelta(seconds=1.5), "warning", "The specified default backup location default was unavailable at backup validation", 'backup=velero/daily-20261203020000 logSource="pkg/controller/backup_controller.go:519"')
vlog(t0 + dt.timedelta(seconds=10), "error", "backup failed", 'backuprequest=velero/daily-20261203020000 controller=backup error="error checking if backup already exists in object storage: rpc error: code = Unknown desc = operation error S3: HeadObject, https response error StatusCode: 403, RequestID: 181DB4F9E83A27C1, HostID: dd9025bab4ad464b049177c95eb6ebf374d3b3fd1af9251148b658df7ac2e3e8, api error Forbidden: Forbidden" logSource="pkg/controller/backup_controller.go:331"')
vlog(t0 + dt.timedelta(seconds=11), "error", "Error uploading log file", 'backup=daily-20261203020000 bucket=velero error="rpc error: code = Unknown desc = error putting object backups/daily-20261203020000/daily-20261203020000-logs.gz: operation error S3: PutObject, https response error StatusCode: 403, RequestID: 181DB4FA0D2E8B63, api error RequestTimeTooSkewed: The difference between the request time and the server\'s time is too large." logSource="pkg/persistence/object_store.go:252" prefix=')


def minio_l(t):
    p = rng.choice(M)
    if rng.random() < 0.15:
        b.log(t, "minio", p, json.dumps({"level": "WARNING", "errKind": "ALL", "time": iso(t, True), "message": "Drive usage is 81%% on /export-0 (minio-%d)" % M.index(p), "source": ["cmd/xl-storage.go:4021"]}), "warning", container="minio", ns="minio")


b.every(b.start, b.end, 120, minio_l)
TH = pname(th[0])


def thanos(t):
    b.log(t, "thanos-sidecar", TH, 'ts=%s caller=shipper.go:361 level=info component=shipper msg="upload new block" id=01JE%s' % (iso(t, True), rid(rng, 22, "0123456789ABCDEFGHJKMNPQRSTVWXYZ")), "info", container="thanos-sidecar", ns="monitoring")


b.every(b.start, b.end, 600, thanos, jitter=0.1)
0 and b.log(T("2026-12-03T02:00:05Z"), "node-agent", "node-agent-" + b.hsh(5, "na"), 'time="2026-12-03T02:17:16Z" level=info msg="No pod volume backups for this backup" logSource="pkg/controller/pod_volume_backup_controller.go:87"', "info", container="node-agent", ns="velero")

b.rng_series('node_timex_offset_seconds', "Node clock offset (node-exporter timex)", [({"instance": n}, (lambda n: lambda t, i: skew + i * 0.1 if n == nodes[1] else rng.uniform(-0.0004, 0.0004))(n)) for n in nodes])
b.rng_series('node_timex_sync_status', "Node clock synchronised (1=yes)", [({"instance": n}, (lambda n: lambda t, i: 0 if n == nodes[1] else 1)(n)) for n in nodes], fmt="%d")
b.rng_series('abs(timestamp(node_time_seconds) - node_time_seconds)', "Scrape time vs node wall clock (s)", [({"instance": n}, (lambda n: lambda t, i: skew + i * 0.1 if n == nodes[1] else rng.uniform(0, 0.05))(n)) for n in nodes])
b.rng_series('velero_backup_storage_location_available', "Velero BSL available", [({"backup_storage_location": "default"}, lambda t, i: 0)], fmt="%d")
b.rng_series('velero_backup_last_status{schedule="daily"}', "Velero last backup status (1=success)", [({"schedule": "daily"}, lambda t, i: 1 if t < t0 + dt.timedelta(seconds=11) else 0)], fmt="%d")
b.rng_series('increase(velero_backup_failure_total{schedule="daily"}[10m])', "Velero backup failures", [({"schedule": "daily"}, lambda t, i: 1 if t0 <= t < t0 + dt.timedelta(minutes=10) else 0)], fmt="%d")
b.rng_series('sum by (api, job) (rate(minio_s3_requests_total{namespace="minio"}[5m]))', "MinIO S3 requests by API", [({"api": "putobject", "job": "minio"}, lambda t, i: b.noise(0.4, 0.3)), ({"api": "listobjectsv2", "job": "minio"}, lambda t, i: b.noise(0.2, 0.2))])
b.rng_series('sum by (type) (rate(minio_s3_requests_errors_total{namespace="minio"}[5m]))', "MinIO S3 errors (4xx)", [({"type": "4xx"}, lambda t, i: b.noise(0.02, 0.2))])
b.rng_series('rate(thanos_shipper_uploads_total{namespace="monitoring"}[30m])', "Thanos block uploads", [({"pod": TH}, lambda t, i: b.noise(0.00055, 0.1))])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"velero|minio"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in [VP] + M], fmt="%d")

notes = """
# apx-velero-minio-clock-skew — the node running Velero drifted 17 minutes; MinIO rejects its signed requests

**Incident.** k3s lab cluster (test). Node `lab-worker-02` was rebuilt on 2026-11-19 from the new "acme-hardened 2026.11" image, which
uses systemd-timesyncd pointed at corporate NTP servers that the lab cannot reach; its clock has drifted ~+1031 s (~17 min) and keeps
drifting (~6 s/h). Velero runs on that node. S3 SigV4 requests carry the client's time; MinIO (on other nodes, correct time) rejects requests
more than 15 min off with `RequestTimeTooSkewed` (403). Since the drift crossed 15 min (early on 12-02, last successful sync 04:05),
the BackupStorageLocation validation fails -> phase Unavailable, and at 02:00 the scheduled backup `daily-20261203020000` fails
(HeadObject 403, log upload RequestTimeTooSkewed). Thanos and other clients on correctly-timed nodes upload fine.

**Chain / evidence.** Backup Failed, BSL Unavailable with `RequestTimeTooSkewed` (k8s/velero.yaml, velero logs) -> velero pod on
lab-worker-02 (k8s/pods.yaml) -> the Schedule fired at real 01:42:49 (Backup metadata.creationTimestamp, set by the API server) while Velero
stamped startTimestamp 02:00:00; Velero's own log `time=` fields are ~17 min ahead of the record @timestamp (logs.ndjson) ->
`node_timex_offset_seconds` ≈1031 s and `node_timex_sync_status` 0 only for lab-worker-02 (metrics) -> node osImage "acme-hardened 2026.11",
created 11-19 (k8s/nodes.yaml) and configmap `node-time-config` describing the timesyncd/NTP setup.

**Decoys.** MinIO drive-usage 81% warnings; a MinIO readiness timeout at 01:47; the generic `Forbidden` on HeadObject (looks like
credentials); previous backups completed (one with warnings).

**must_mention:** `clock` (clock skew/drift on the node).

**Provenance.** Chaos Mesh TimeChaos / clock-skew fault family; MinIO and AWS S3 reject SigV4 requests with a skew >15 min
(`RequestTimeTooSkewed`); awesome-prometheus-alerts "Host clock skew" / "Host clock not synchronising" rules use node_timex_*.
Velero objects follow vmware-tanzu/velero (Schedule, Backup, BackupStorageLocation, aws plugin, text log format). Generated by gen/c13_velero.py (seed 1313).
"""
b.write(["clock"], notes)
