from lib import *
import math

b = Bundle("apx-nats-keda-scale-to-zero-healthy", "invoice-consumer at 0/0 overnight, HPA 'scaling disabled'", "2026-09-30T00:30:00Z", "2026-09-30T01:40:00Z",
           "test", "test-eks-euc1",
           "test (ns billing): invoice-consumer went to 0/0 replicas at ~00:52 tonight, its HPA says 'scaling is disabled', the events are full of Killing "
           "and the nats logs show 'Slow Consumer Detected'. is invoice processing broken?", 1515)
b.ns = ns = "billing"
T = P
drain = T("2026-09-30T00:46:30Z")
zero = T("2026-09-30T00:51:40Z")
act = T("2026-09-30T01:20:15Z")
done = T("2026-09-30T01:27:50Z")
nodes = mknodes(b, ["ip-10-42-14-9.eu-central-1.compute.internal", "ip-10-42-27-160.eu-central-1.compute.internal", "ip-10-42-39-71.eu-central-1.compute.internal"], zones=["eu-central-1a", "eu-central-1b", "eu-central-1c"])
b.namespace(ns, {"environment": "test"})
b.namespace("nats", {"environment": "test"})
b.namespace("keda", {"environment": "test"})
il = {"app": "invoice-consumer"}
ic = b.container("invoice-consumer", "registry.acme.io/billing/invoice-consumer:1.9.4", 8080, {"NATS_URL": "nats://nats.nats.svc:4222", "NATS_STREAM": "INVOICES", "NATS_CONSUMER": "invoice-consumer"},
                 {"requests": {"cpu": "200m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}, readiness=b.http_probe("/healthz", 8080))
h = b.deployment("invoice-consumer", ns, il, [ic], 1, created="2026-02-10T10:00:00Z", revision=12, ready=1, rs_created="2026-09-22T09:00:00Z")
ip = b.pod("invoice-consumer-%s-%s" % (h, b.hsh(5, "new")), ns, dict(il, **{"pod-template-hash": h}), ("ReplicaSet", "invoice-consumer-" + h), [ic], nodes[1], iso(act + dt.timedelta(seconds=2)))
b.service("invoice-consumer", ns, il, [("http", 8080, "http")], endpoints=b.eps_for([ip]))
nl = {"app.kubernetes.io/name": "nats", "app.kubernetes.io/instance": "nats", "app.kubernetes.io/component": "nats"}
nats = app(b, "nats", "nats", "nats:2.10.22-alpine", 3, [("nats", 4222), ("cluster", 6222), ("monitor", 8222)], nodes, kind="StatefulSet", labels=nl, container_name="nats",
           extra_containers=[b.container("reloader", "natsio/nats-server-config-reloader:0.16.0", None)], created="2026-02-10T10:00:00Z", pod_created="2026-09-01T08:00:00Z")
N = [pname(p) for p in nats]
kl = {"app": "keda-operator", "app.kubernetes.io/name": "keda-operator"}
ko = app(b, "keda-operator", "keda", "ghcr.io/kedacore/keda:2.15.1", 1, [("metricsservice", 9666)], nodes[:1], labels=kl, container_name="keda-operator", created="2026-02-10T10:00:00Z", pod_created="2026-09-01T08:00:00Z")
KO = pname(ko[0])
b.raw("keda.yaml", {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": b.meta("ScaledObject", "invoice-consumer", ns, None, None, "2026-02-10T10:00:00Z", extra={"generation": 3}),
                    "spec": {"scaleTargetRef": {"name": "invoice-consumer"}, "minReplicaCount": 0, "maxReplicaCount": 6, "pollingInterval": 15, "cooldownPeriod": 300,
                             "triggers": [{"type": "nats-jetstream", "metadata": {"natsServerMonitoringEndpoint": "nats.nats.svc:8222", "account": "$G", "stream": "INVOICES", "consumer": "invoice-consumer", "lagThreshold": "50", "activationLagThreshold": "0"}}]},
                    "status": {"scaleTargetKind": "apps/v1.Deployment", "scaleTargetGVKR": {"group": "apps", "version": "v1", "kind": "Deployment", "resource": "deployments"}, "originalReplicaCount": 2,
                               "lastActiveTime": "2026-09-30T01:39:40Z", "externalMetricNames": ["s0-nats-jetstream-INVOICES"], "hpaName": "keda-hpa-invoice-consumer",
                               "conditions": [{"type": "Ready", "status": "True", "reason": "ScaledObjectReady", "message": "ScaledObject is defined correctly and is ready for scaling"},
                                              {"type": "Active", "status": "False", "reason": "ScalerNotActive", "message": "Scaling is not performed because triggers are not active"},
                                              {"type": "Fallback", "status": "False", "reason": "NoFallbackFound", "message": "No fallbacks are active on this scaled object"},
                                              {"type": "Paused", "status": "False", "reason": "ScaledObjectUnpaused", "message": "ScaledObject is not paused"}]}})
b.raw("keda.yaml", {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": b.meta("HorizontalPodAutoscaler", "keda-hpa-invoice-consumer", ns, {"scaledobject.keda.sh/name": "invoice-consumer", "app.kubernetes.io/managed-by": "keda-operator"}, None, "2026-02-10T10:00:05Z", ("ScaledObject", "invoice-consumer")),
                    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "invoice-consumer"}, "minReplicas": 1, "maxReplicas": 6,
                             "metrics": [{"type": "External", "external": {"metric": {"name": "s0-nats-jetstream-INVOICES", "selector": {"matchLabels": {"scaledobject.keda.sh/name": "invoice-consumer"}}}, "target": {"type": "AverageValue", "averageValue": "50"}}}]},
                    "status": {"currentReplicas": 1, "desiredReplicas": 1, "lastScaleTime": iso(act),
                               "currentMetrics": [{"type": "External", "external": {"metric": {"name": "s0-nats-jetstream-INVOICES"}, "current": {"averageValue": "0"}}}],
                               "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale", "message": "recommended size matches current size", "lastTransitionTime": "2026-09-30T01:25:30Z"},
                                              {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound", "message": "the HPA was able to successfully calculate a replica count from external metric s0-nats-jetstream-INVOICES", "lastTransitionTime": iso(act + dt.timedelta(seconds=30))},
                                              {"type": "ScalingLimited", "status": "True", "reason": "TooFewReplicas", "message": "the desired replica count is less than the minimum replica count", "lastTransitionTime": "2026-09-30T01:28:45Z"}]}})
old = ["invoice-consumer-%s-%s" % (h, b.hsh(5, "old", k)) for k in range(3)]
for k, p in enumerate(old):
    b.event("Pod", p, ns, "Killing", "Stopping container invoice-consumer", iso(zero + dt.timedelta(seconds=1)), host=nodes[k], fieldPath="spec.containers{invoice-consumer}")
b.event("Deployment", "invoice-consumer", ns, "ScalingReplicaSet", "Scaled down replica set invoice-consumer-%s to 2 from 3" % h, "2026-09-30T00:49:10Z", component="deployment-controller", api="apps/v1")
b.event("Deployment", "invoice-consumer", ns, "ScalingReplicaSet", "Scaled down replica set invoice-consumer-%s to 0 from 2" % h, iso(zero), component="deployment-controller", api="apps/v1")
b.event("Deployment", "invoice-consumer", ns, "ScalingReplicaSet", "Scaled up replica set invoice-consumer-%s to 1 from 0" % h, iso(act), component="deployment-controller", api="apps/v1")
b.event("ScaledObject", "invoice-consumer", ns, "KEDAScaleTargetDeactivated", "Deactivated apps/v1.Deployment billing/invoice-consumer from 2 to 0", iso(zero), component="keda-operator", api="keda.sh/v1alpha1")
b.event("ScaledObject", "invoice-consumer", ns, "KEDAScaleTargetActivated", "Scaled apps/v1.Deployment billing/invoice-consumer from 0 to 1, triggered by natsJetStreamScaler", iso(act), component="keda-operator", api="keda.sh/v1alpha1")
b.event("HorizontalPodAutoscaler", "keda-hpa-invoice-consumer", ns, "SuccessfulRescale", "New size: 2; reason: All metrics below target", "2026-09-30T00:49:10Z", component="horizontal-pod-autoscaler", api="autoscaling/v2")
b.event("HorizontalPodAutoscaler", "keda-hpa-invoice-consumer", ns, "ScalingDisabled", "scaling is disabled since the replica count of the target is zero", iso(zero + dt.timedelta(seconds=15)), iso(act - dt.timedelta(seconds=10)), 110, "Normal", component="horizontal-pod-autoscaler", api="autoscaling/v2")

rng = b.rng


def lag(t):
    if t < drain:
        return max(0, 900 - (t - b.start).total_seconds() * 0.9)
    if t < act:
        return 0
    if t < done:
        return max(0, 620 - (t - act).total_seconds() * 1.4)
    return 0


def consumer(t):
    if drain + dt.timedelta(seconds=30) <= t < act + dt.timedelta(seconds=15) or t > done + dt.timedelta(seconds=20):
        return
    p = rng.choice(old) if t < act else pname(ip)
    b.log(t, "invoice-consumer", p, json.dumps({"level": "info", "ts": iso(t, True), "caller": "consumer/handler.go:88", "msg": "invoice processed", "invoice_id": "inv_" + rid(rng, 12), "subject": "invoices.created", "duration_ms": rng.randint(30, 200)}), "info")


b.every(b.start, b.end, 1.8, consumer)
for k, p in enumerate(old[:3]):
    t = zero + dt.timedelta(seconds=1) if k else T("2026-09-30T00:49:10Z")
    b.log(t, "invoice-consumer", p, json.dumps({"level": "info", "ts": iso(t, True), "caller": "main.go:141", "msg": "received SIGTERM, draining NATS subscription"}), "info")
    b.log(t + dt.timedelta(milliseconds=420), "invoice-consumer", p, json.dumps({"level": "info", "ts": iso(t + dt.timedelta(milliseconds=420), True), "caller": "main.go:152", "msg": "drained, exiting"}), "info")
b.log(act + dt.timedelta(seconds=9), "invoice-consumer", pname(ip), json.dumps({"level": "info", "ts": iso(act + dt.timedelta(seconds=9), True), "caller": "main.go:97", "msg": "bound to durable consumer", "stream": "INVOICES", "consumer": "invoice-consumer", "num_pending": 620}), "info")


def nlog(t):
    p = rng.choice(N)
    if rng.random() < 0.5:
        b.log(t, "nats", p, "[%d] %s [WRN] 10.42.%d.%d:%d - cid:%d - \"v1.27.0:go:nats-surveyor\" - Slow Consumer Detected: WriteDeadline of 10s exceeded with %d chunks of %d total bytes." % (
            7, t.strftime("%Y/%m/%d %H:%M:%S.%f"), rng.randint(0, 40), rng.randint(2, 250), rng.randint(40000, 60000), rng.randint(100, 999), rng.randint(2, 9), rng.randint(200000, 900000)), "warn", container="nats", ns="nats")
    else:
        b.log(t, "nats", p, "[7] %s [INF] JetStream cluster new consumer leader for '$G > INVOICES > invoice-consumer'" % t.strftime("%Y/%m/%d %H:%M:%S.%f") if rng.random() < 0.05 else
              "[7] %s [INF] 10.42.%d.%d:%d - rid:%d - Route connection created" % (t.strftime("%Y/%m/%d %H:%M:%S.%f"), rng.randint(0, 40), rng.randint(2, 250), 6222, rng.randint(10, 99)) if rng.random() < 0.1 else
              "[7] %s [INF] Self-signed certificate in chain not verified for monitoring endpoint (tls: insecure_skip_verify)" % t.strftime("%Y/%m/%d %H:%M:%S.%f") if False else
              "[7] %s [DBG] JetStream stream 'INVOICES' snapshot taken, msgs=%d, bytes=%d" % (t.strftime("%Y/%m/%d %H:%M:%S.%f"), rng.randint(180000, 190000), rng.randint(90000000, 99000000)), "info", container="nats", ns="nats")


b.every(b.start, b.end, 75, nlog)


def klog(t):
    v = lag(t)
    if v == 0 and not (t < act < t + dt.timedelta(seconds=60)):
        if rng.random() < 0.3:
            b.log(t, "keda-operator", KO, '%s\tINFO\tscaleexecutor\tSuccessfully updated ScaleTarget\t{"scaledobject.Name": "invoice-consumer", "scaledObject.Namespace": "billing", "scaleTarget.Name": "invoice-consumer", "Original Replicas Count": 2, "New Replicas Count": 0}' % iso(t, True), "info", container="keda-operator", ns="keda") if zero <= t < zero + dt.timedelta(seconds=60) else None


b.every(b.start, b.end, 30, klog)
b.log(zero, "keda-operator", KO, '%s\tINFO\tscaleexecutor\tSuccessfully set ScaleTarget replicas count to ScaledObject minReplicaCount\t{"scaledobject.Name": "invoice-consumer", "scaledObject.Namespace": "billing", "scaleTarget.Name": "invoice-consumer", "Original Replicas Count": 2, "New Replicas Count": 0}' % iso(zero, True), "info", container="keda-operator", ns="keda")
b.log(act, "keda-operator", KO, '%s\tINFO\tscaleexecutor\tSuccessfully updated ScaleTarget\t{"scaledobject.Name": "invoice-consumer", "scaledObject.Namespace": "billing", "scaleTarget.Name": "invoice-consumer", "Original Replicas Count": 0, "New Replicas Count": 1}' % iso(act, True), "info", container="keda-operator", ns="keda")
b.log(T("2026-09-30T01:05:12Z"), "keda-operator", KO, '2026-09-30T01:05:12.331Z\tERROR\tnats_jetstream_scaler\terror requesting jetstream info from nats-1 monitoring endpoint, falling back to leader\t{"type": "ScaledObject", "namespace": "billing", "name": "invoice-consumer", "error": "Get \\"http://nats-1.nats.nats.svc.cluster.local:8222/jsz?acc=$G&consumers=true&config=true\\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"}', "error", container="keda-operator", ns="keda")


def repl(t, i):
    if t < T("2026-09-30T00:49:10Z"):
        return 3
    if t < zero:
        return 2
    if t < act:
        return 0
    return 1


b.rng_series('kube_deployment_status_replicas{namespace="billing", deployment="invoice-consumer"}', "invoice-consumer replicas", [({"deployment": "invoice-consumer"}, repl)], fmt="%d")
b.rng_series('keda_scaler_metrics_value{namespace="billing", scaledObject="invoice-consumer"}', "KEDA scaler metric (consumer lag)", [({"scaler": "natsJetStreamScaler", "metric": "s0-nats-jetstream-INVOICES"}, lambda t, i: lag(t))], fmt="%.0f")
b.rng_series('keda_scaler_active{namespace="billing", scaledObject="invoice-consumer"}', "KEDA scaler active", [({"scaler": "natsJetStreamScaler"}, lambda t, i: 1 if lag(t) > 0 else 0)], fmt="%d")
b.rng_series('sum(rate(keda_scaler_errors_total{namespace="billing"}[5m]))', "KEDA scaler errors", [({}, lambda t, i: 0.0033 if T("2026-09-30T01:05:00Z") <= t < T("2026-09-30T01:10:00Z") else 0)])
b.rng_series('nats_consumer_num_pending{stream_name="INVOICES", consumer_name="invoice-consumer"}', "JetStream pending messages", [({"stream_name": "INVOICES", "consumer_name": "invoice-consumer"}, lambda t, i: lag(t))], fmt="%.0f")
b.rng_series('nats_consumer_num_ack_pending{stream_name="INVOICES", consumer_name="invoice-consumer"}', "JetStream ack-pending", [({"stream_name": "INVOICES", "consumer_name": "invoice-consumer"}, lambda t, i: rng.randint(0, 8) if lag(t) > 0 else 0)], fmt="%d")
b.rng_series('rate(nats_stream_total_messages{stream_name="INVOICES"}[5m])', "Messages published to INVOICES/s", [({"stream_name": "INVOICES"}, lambda t, i: b.noise(0.4) if t < T("2026-09-30T00:40:00Z") else (b.noise(1.3) if act - dt.timedelta(seconds=60) <= t < act + dt.timedelta(minutes=2) else 0.0))])
b.rng_series('sum(rate(invoice_processed_total{namespace="billing"}[5m]))', "Invoices processed/s", [({}, lambda t, i: b.noise(0.55) if t < drain else (0 if t < act else (b.noise(1.3) if t < done else 0)))])
b.rng_series('sum(rate(invoice_processing_errors_total{namespace="billing"}[5m]))', "Invoice processing errors/s", [({}, lambda t, i: 0)])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"billing|nats"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in N], fmt="%d")

notes = """
# apx-nats-keda-scale-to-zero-healthy — HEALTHY CONTROL: KEDA scaled an idle JetStream consumer to zero, by design

**Situation.** `invoice-consumer` (ns `billing`, test) is driven by a KEDA ScaledObject with the nats-jetstream scaler,
`minReplicaCount: 0`, `cooldownPeriod: 300`. The evening invoice batch finishes at ~00:46 (pending -> 0); the HPA scales 3 -> 2 and
after the 5-minute cooldown KEDA deactivates the Deployment 2 -> 0 (00:51:40). While the target is at zero the KEDA-managed HPA
reports `ScalingDisabled: scaling is disabled since the replica count of the target is zero` (normal for scale-to-zero). Pods are
stopped gracefully (SIGTERM, drained). At 01:20 a new batch arrives, KEDA activates 0 -> 1, the consumer processes the 620 pending
messages by 01:28 with zero errors, and stays at 1 (HPA minReplicas 1 while active).

**What looks scary but is benign.** Deployment at 0/0 and Killing events; HPA ScalingDisabled events (110x); NATS `Slow Consumer Detected`
warnings - they concern the `nats-surveyor` monitoring client (cid name), not the invoice consumer; one KEDA scaler timeout to the nats-1
monitoring endpoint at 01:05 (falls back to leader, no impact).

**Evidence that it is healthy.** `nats_consumer_num_pending` and the KEDA scaler metric drop to 0 before each scale-down and back to 0 after
the 01:20 batch; `invoice_processing_errors_total` 0; processed rate matches publish rate; ScaledObject Ready=True; no restarts.

**Expected.** status partial (or refused); must_mention [] - a good answer says nothing is broken (scale-to-zero by design).

**Provenance.** KEDA scale-to-zero semantics (minReplicaCount 0, cooldownPeriod, HPA ScalingDisabled message) from keda.sh docs and
kedacore/keda; NATS server log format and slow-consumer warning from nats-io/nats-server. Generated by gen/c15_keda.py (seed 1515).
"""
for r in b.logs:
    if "[DBG]" in r["message"]:
        r["level"] = "debug"
b.write([], notes, status=("partial", "refused"))
