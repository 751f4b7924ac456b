from lib import *

b = B('flt-nats-ctl-rolling-restart', 'NATS JetStream leader alert and warnings (control)', '2026-12-15T14:00', 60, 'staging', 'stg-eks-euw1', 'nats',
      "staging: alert 'NatsJetStreamMetaLeaderMissing' fired around 14:11 and the nats server logs are full of WRN lines since. orders-api and fulfillment-worker look ok to me but are we losing orders? what's the root cause?",
      [], status=('partial', 'refused'), seed=1616)
ON = 10
b.nodes(['ip-10-20-%d-%d.eu-west-1.compute.internal' % (x, y) for x, y in [(33, 12), (61, 140), (90, 7)]])
b.namespace('nats')
b.namespace('orders')
natsc = [{'name': 'reloader', 'image': 'natsio/nats-server-config-reloader:0.16.0', 'resources': {}},
         {'name': 'prom-exporter', 'image': 'natsio/prometheus-nats-exporter:0.15.0', 'args': ['-port=7777', '-connz', '-routez', '-subz', '-varz', '-prefix=nats', '-use_internal_server_id', '-jsz=all', 'http://localhost:8222/'], 'resources': {}}]
restart = {2: 10.2, 1: 11.6, 0: 13.1}
nt = b.deploy('nats', 'nats:2.10.22-alpine', 3, 4222, kind='StatefulSet', labels={'app.kubernetes.io/name': 'nats', 'app.kubernetes.io/instance': 'nats', 'app.kubernetes.io/component': 'nats'},
              args=['--config', '/etc/nats-config/nats.conf'], probe={'httpGet': {'path': '/healthz?js-enabled-only=true', 'port': 8222}}, svc_port=4222, extra_containers=natsc,
              env={'SERVER_NAME': {'valueFrom': {'fieldRef': {'fieldPath': 'metadata.name'}}}, 'GOMEMLIMIT': '1800MiB'},
              res={'requests': {'cpu': '500m', 'memory': '1Gi'}, 'limits': {'memory': '2Gi'}},
              pods_override={i: {'created': b.T(0, restart[i] * 60)} for i in range(3)}, gen=9,
              status_override={'currentRevision': 'nats-6b9f7d8c4d', 'updateRevision': 'nats-6b9f7d8c4d', 'updatedReplicas': 3})
for o in b.objs['workloads']:
    if o['metadata']['name'] == 'nats':
        o['metadata']['labels']['helm.sh/chart'] = 'nats-1.2.7'
        o['spec']['updateStrategy'] = {'type': 'RollingUpdate', 'rollingUpdate': {'partition': 0}}
        o['spec']['podManagementPolicy'] = 'Parallel'
oa = b.deploy('orders-api', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/orders/orders-api:3.14.2', 2, 8080, labels={'app': 'orders-api'}, ns='orders', env={'NATS_URL': 'nats://nats.nats.svc:4222', 'JS_STREAM': 'ORDERS'})
fw = b.deploy('fulfillment-worker', '123456789012.dkr.ecr.eu-west-1.amazonaws.com/orders/fulfillment-worker:3.14.2', 2, None, labels={'app': 'fulfillment-worker'}, ns='orders', svc=False, env={'NATS_URL': 'nats://nats.nats.svc:4222', 'JS_DURABLE': 'fulfillment'})
b.obj('policy', 'policy/v1', 'PodDisruptionBudget', 'nats', created=b.ago(days=80), spec={'maxUnavailable': 1, 'selector': {'matchLabels': {'app.kubernetes.io/name': 'nats'}}},
      status={'currentHealthy': 3, 'desiredHealthy': 2, 'disruptionsAllowed': 1, 'expectedPods': 3})
b.obj('config', 'v1', 'ConfigMap', 'nats-config', data={'nats.conf': 'server_name: $SERVER_NAME\nport: 4222\nhttp_port: 8222\nlame_duck_duration: 30s\nlame_duck_grace_period: 10s\njetstream {\n  max_file_store: 20Gi\n  store_dir: /data\n}\ncluster {\n  name: nats\n  port: 6222\n  routes: [nats://nats-0.nats-headless:6222, nats://nats-1.nats-headless:6222, nats://nats-2.nats-headless:6222]\n}\n'})
b.event('StatefulSet', 'nats', 'SuccessfulDelete', 'delete Pod nats-2 in StatefulSet nats successful', b.T(0, 10.2 * 60 - 40), component='statefulset-controller', api='apps/v1')
for i in (2, 1, 0):
    t = b.T(0, restart[i] * 60)
    b.event('Pod', 'nats-%d' % i, 'Killing', 'Stopping container nats', t - dt.timedelta(seconds=40), field='spec.containers{nats}')
    b.event('StatefulSet', 'nats', 'SuccessfulCreate', 'create Pod nats-%d in StatefulSet nats successful' % i, t, component='statefulset-controller', api='apps/v1')
    b.event('Pod', 'nats-%d' % i, 'Unhealthy', 'Startup probe failed: HTTP probe failed with statuscode: 503', t + dt.timedelta(seconds=8), count=2, last=t + dt.timedelta(seconds=18), typ='Warning', field='spec.containers{nats}')
b.obj('config', 'helm.toolkit.fluxcd.io/v2', 'HelmRelease', 'nats', ns='nats', created=b.ago(days=80),
      spec={'chart': {'spec': {'chart': 'nats', 'version': '1.2.7', 'sourceRef': {'kind': 'HelmRepository', 'name': 'nats'}}}, 'interval': '10m'},
      status={'lastAttemptedRevision': '1.2.7', 'conditions': [{'type': 'Ready', 'status': 'True', 'reason': 'UpgradeSucceeded', 'message': 'Helm upgrade succeeded for release nats/nats.v9 with chart nats@1.2.7', 'lastTransitionTime': iso(b.T(14, 5))}]})


def nl(t, pid, lvl, msg):
    return '[%d] %s [%s] %s' % (pid, t.strftime('%Y/%m/%d %H:%M:%S.%f'), lvl, msg)


for i in (2, 1, 0):
    t0 = b.T(0, restart[i] * 60 - 40)
    for k in range(3):
        if k == i:
            continue
        b.log(t0 + dt.timedelta(seconds=1), 'nats', 'nats-%d' % k, nl(t0, 1, 'INF', '10.20.%d.%d:6222 - rid:%d - Router connection closed: Client Closed' % (61, 30 + i, 100 + i)), 'INF', container='nats')
    b.log(t0, 'nats', 'nats-%d' % i, nl(t0, 1, 'INF', 'Entering lame duck mode, stop accepting new clients'), 'INF', container='nats')
    b.log(t0 + dt.timedelta(seconds=30), 'nats', 'nats-%d' % i, nl(t0, 1, 'INF', 'Initiating JetStream Shutdown...'), 'INF', container='nats')
    t1 = b.T(0, restart[i] * 60 + 3)
    for msg in ['Starting nats-server', '  Version:  2.10.22', '  Git:      [240e9a4]', '  Name:     nats-%d' % i, 'Starting JetStream',
                '  Max Storage:     20.00 GB', '  Store Directory: "/data/jetstream"', 'Listening for client connections on 0.0.0.0:4222', 'Server is ready',
                'Cluster name is nats', 'Listening for route connections on 0.0.0.0:6222']:
        b.log(t1, 'nats', 'nats-%d' % i, nl(t1, 1, 'INF', msg), 'INF', container='nats')
        t1 += dt.timedelta(milliseconds=7)
    t2 = t1 + dt.timedelta(seconds=2)
    b.log(t2, 'nats', 'nats-%d' % i, nl(t2, 1, 'WRN', 'JetStream cluster no metadata leader'), 'WRN', container='nats')
    b.log(t2 + dt.timedelta(seconds=3), 'nats', 'nats-%d' % i, nl(t2, 1, 'WRN', 'Catchup for stream \'$G > ORDERS\' stalled'), 'WRN', container='nats')
    b.log(t2 + dt.timedelta(seconds=5), 'nats', 'nats-%d' % i, nl(t2, 1, 'INF', 'JetStream cluster new metadata leader: nats-%d/nats' % ((i + 1) % 3)), 'INF', container='nats')
    b.log(t2 + dt.timedelta(seconds=9), 'nats', 'nats-%d' % i, nl(t2, 1, 'INF', 'Catchup for stream \'$G > ORDERS\' complete'), 'INF', container='nats')
    b.log(t2 + dt.timedelta(seconds=9), 'nats', 'nats-%d' % i, nl(t2, 1, 'INF', 'JetStream cluster new stream leader for \'$G > ORDERS\''), 'INF', container='nats')


def nwarn(t, m, rnd, pod):
    if m < ON:
        return ('WRN', nl(t, 1, 'WRN', '10.20.%d.%d:%d - cid:%d - "v1.37.0:go:nats-box" - Readloop processing time: %.3fs' % (33, rnd.randint(2, 250), rnd.randint(30000, 60000), rnd.randint(100, 900), rnd.uniform(2, 2.6)))) if rnd.random() < 0.1 else None
    return ('WRN', nl(t, 1, 'WRN', rnd.choice(['10.20.%d.%d:%d - cid:%d - "v1.37.0:go:orders-api" - Slow Consumer Detected: WriteDeadline of 10s exceeded with 1 chunks of 512 total bytes.' % (61, rnd.randint(2, 250), rnd.randint(30000, 60000), rnd.randint(100, 900)),
                                               'JetStream resource limits exceeded for account: "$G"'] if False else ['10.20.%d.%d:%d - rid:%d - Route connection write deadline exceeded' % (90, rnd.randint(2, 250), 6222, rnd.randint(100, 900)),
                                                                                                                        'Healthcheck failed: "JetStream is not current with the meta leader"' if m < 14 else '10.20.61.%d:%d - cid:%d - "v1.37.0:go:nats-box" - Readloop processing time: %.3fs' % (rnd.randint(2, 250), rnd.randint(30000, 60000), rnd.randint(100, 900), rnd.uniform(2, 2.6))])))


b.stream('nats', ['nats-0', 'nats-1', 'nats-2'], lambda m: 0.6 if m < ON or m > 16 else 3, nwarn, container='nats')


def oa_fn(t, m, rnd, pod):
    if rnd.random() < 0.2:
        return ('info', json.dumps({'level': 'info', 'time': iso(t, ms=True), 'msg': 'order published', 'stream': 'ORDERS', 'seq': int((t - b.t0).total_seconds() * 9.1) + 8811200, 'duplicate': False, 'latency_ms': rnd.randint(1, 6)}, separators=(',', ':')))
    return None


b.stream('orders-api', oa, 45, oa_fn, ns='orders')
for i in (2, 1, 0):
    for p in oa + fw:
        t = b.T(0, restart[i] * 60 - 9 + b.rnd.uniform(0, 3))
        if b.rnd.random() < 0.6:
            svc = 'orders-api' if p in oa else 'fulfillment-worker'
            b.log(t, svc, p, json.dumps({'level': 'warn', 'time': iso(t, ms=True), 'msg': 'nats: disconnected', 'server': 'nats://10.20.61.%d:4222' % (30 + i)}, separators=(',', ':')), 'warn', ns='orders')
            b.log(t + dt.timedelta(seconds=1.2), svc, p, json.dumps({'level': 'info', 'time': iso(t + dt.timedelta(seconds=1.2), ms=True), 'msg': 'nats: reconnected', 'server': 'nats://10.20.33.%d:4222' % (12 + i)}, separators=(',', ':')), 'info', ns='orders')
    t = b.T(0, restart[i] * 60 + 9)
    b.log(t, 'orders-api', oa[0], json.dumps({'level': 'warn', 'time': iso(t, ms=True), 'msg': 'publish ack timeout, retrying', 'stream': 'ORDERS', 'attempt': 1, 'error': 'nats: timeout'}, separators=(',', ':')), 'warn', ns='orders')
    b.log(t + dt.timedelta(milliseconds=450), 'orders-api', oa[0], json.dumps({'level': 'info', 'time': iso(t + dt.timedelta(milliseconds=450), ms=True), 'msg': 'order published', 'stream': 'ORDERS', 'duplicate': False, 'attempt': 2}, separators=(',', ':')), 'info', ns='orders')


def fw_fn(t, m, rnd, pod):
    if rnd.random() < 0.2:
        return ('info', json.dumps({'level': 'info', 'time': iso(t, ms=True), 'msg': 'order fulfilled', 'consumer': 'fulfillment', 'num_delivered': 1, 'pending': rnd.randint(0, 12)}, separators=(',', ':')))
    return None


b.stream('fulfillment-worker', fw, 45, fw_fn, ns='orders')

b.rng('sum by (stream_name) (rate(nats_stream_total_messages{namespace="nats"}[5m]))', 'JetStream stream message growth rate (msgs/s)', [({'stream_name': 'ORDERS'}, noisy(9.1, .05))])
b.rng('sum by (consumer_name) (nats_consumer_num_pending{namespace="nats", stream_name="ORDERS"})', 'consumer pending messages', [({'consumer_name': 'fulfillment'}, lambda m, r: r.randint(0, 15) + (30 if 10 <= m <= 13.5 else 0))])
b.rng('sum by (consumer_name) (rate(nats_consumer_num_redelivered{namespace="nats", stream_name="ORDERS"}[5m]))', 'consumer redeliveries/s', [({'consumer_name': 'fulfillment'}, lambda m, r: 0.01 * r.random() + (0.05 if 10 <= m <= 15 else 0))])
b.rng('min(nats_jetstream_meta_leader_present{namespace="nats"})', 'JetStream meta leader present', [({}, lambda m, r: 0 if m in (10, 13) else 1)])
b.rng('sum by (code) (rate(http_requests_total{namespace="orders", service="orders-api", handler="/orders"}[5m]))', 'orders-api POST /orders by code', [({'code': '201'}, noisy(9.1, .05)), ({'code': '500'}, lambda m, r: 0.004 if 10 <= m <= 15 else 0)])
b.rng('sum(rate(orders_publish_retries_total{namespace="orders"}[5m]))', 'orders-api JetStream publish retries/s', [({}, lambda m, r: 0.01 if 10 <= m <= 15 else 0)])
b.rng('sum(rate(orders_fulfilled_total{namespace="orders"}[5m]))', 'orders fulfilled/s', [({}, noisy(9.1, .05))])
cpu = {'nats-%d' % i: noisy(0.11) for i in range(3)}
mem = {'nats-%d' % i: noisy(MiB(310), .04) for i in range(3)}
res_metrics(b, 'nats', cpu, mem)

b.notes = '''
# flt-nats-ctl-rolling-restart — CONTROL: Flux upgraded the NATS chart (1.2.6 → 1.2.7); routine rolling restart

**Situation.** At ~14:09 Flux applied HelmRelease `nats` chart 1.2.7; the StatefulSet rolled nats-2, nats-1, nats-0 one at a time
(lame-duck 30 s, PDB maxUnavailable 1). Each restart produces the normal sequence: router connections closed, "JetStream cluster no
metadata leader" and "Catchup for stream ... stalled" warnings, a new meta leader within seconds, clients reconnect. The meta-leader
alert fires briefly; extra WRN lines (route write deadline, health check "not current with the meta leader") appear during the roll.

**Why benign.** Stream growth 9.1 msg/s steady; orders fulfilled 9.1/s steady; consumer pending blips by ~30 messages and drains;
redeliveries tiny; 3 publish-ack timeouts all succeeded on retry (duplicate=false); POST /orders 500 ≈ 0; all pods Ready; no data loss.

**Expected.** No fault: the answer should say no orders are lost and the warnings are from the planned rolling upgrade; status
`partial` or `refused`, nothing to `must_mention`.

**Provenance.** NATS Helm chart (nats-io/k8s `nats` 1.2.x: StatefulSet with reloader and prometheus-nats-exporter, lame duck,
`/healthz?js-enabled-only=true`), nats-server 2.10 log format. App: an orders publisher / durable pull consumer in the style of the
NATS by Example JetStream samples. Generated by /tmp/b8/c16.py (seed 1616).
'''
b.write()
