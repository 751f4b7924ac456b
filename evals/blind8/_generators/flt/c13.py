from lib import *

b = B('flt-kuma-redis-iofault', 'kuma counter demo: increment returns 500', '2026-12-11T10:00', 60, 'test', 'test-kind-mesh', 'kuma-demo',
      "kuma-counter-demo in test: clicking Increment gives a 500 since ~10:31, the counter value still displays. redis says PONG and the volume is only 3% used. mesh or app?",
      ['redis', 'chaos'], seed=1313)
ON = 31
b.nodes(['mesh-worker', 'mesh-worker2', 'mesh-worker3'], zone_prefix='local-', kubelet='v1.31.2', runtime='containerd://1.7.18',
        os_image='Debian GNU/Linux 12 (bookworm)', itype='kind', cpu='8', mem='32780344Ki')
b.namespace('kuma-demo', {'kuma.io/sidecar-injection': 'enabled'})
b.namespace('chaos-mesh')
kdp = lambda: {'name': 'kuma-sidecar', 'image': 'docker.io/kumahq/kuma-dp:2.9.2', 'args': ['run', '--log-level=info', '--concurrency=2'],
               'resources': {'requests': {'cpu': '50m', 'memory': '64Mi'}, 'limits': {'cpu': '1', 'memory': '512Mi'}}}
da = b.deploy('demo-app', 'kumahq/kuma-counter-demo:latest', 2, 5000, labels={'app': 'demo-app'}, env={'REDIS_HOST': 'redis.kuma-demo.svc.cluster.local', 'REDIS_PORT': '6379', 'APP_VERSION': '1.0', 'APP_COLOR': '#efefef'},
              probe={'httpGet': {'path': '/', 'port': 5000}}, extra_containers=[kdp()], svc_port=5000)
rd = b.deploy('redis', 'redis:7.2.6', 1, 6379, labels={'app': 'redis'}, probe={'tcpSocket': {'port': 6379}}, svc_port=6379, extra_containers=[kdp()],
              args=['redis-server', '--save', '60 1', '--appendonly', 'no', '--dir', '/data'],
              mounts=[{'name': 'data', 'mountPath': '/data'}], volumes=[{'name': 'data', 'persistentVolumeClaim': {'claimName': 'redis-data'}}])
b.obj('storage', 'v1', 'PersistentVolumeClaim', 'redis-data', created=b.ago(days=12), spec={'accessModes': ['ReadWriteOnce'], 'resources': {'requests': {'storage': '1Gi'}}, 'storageClassName': 'standard', 'volumeName': 'pvc-' + uid('pv')},
      status={'phase': 'Bound', 'capacity': {'storage': '1Gi'}, 'accessModes': ['ReadWriteOnce']})
b.obj('chaos', 'chaos-mesh.org/v1alpha1', 'IOChaos', 'redis-data-enospc', ns='kuma-demo', created=b.T(ON - 1, 12),
      labels={'owner': 'sre-gameday'},
      spec={'action': 'fault', 'mode': 'one', 'selector': {'namespaces': ['kuma-demo'], 'labelSelectors': {'app': 'redis'}}, 'containerNames': ['redis'],
            'volumePath': '/data', 'path': '/data/**/*', 'errno': 28, 'percent': 100, 'methods': ['WRITE', 'CREATE', 'FSYNC'], 'duration': '40m'},
      status={'conditions': [{'type': 'Selected', 'status': 'True'}, {'type': 'AllInjected', 'status': 'True'}, {'type': 'AllRecovered', 'status': 'False'}, {'type': 'Paused', 'status': 'False'}],
              'experiment': {'desiredPhase': 'Run', 'containerRecords': [{'id': 'kuma-demo/%s/redis' % rd[0], 'phase': 'Injected', 'selectorKey': '.', 'injectedCount': 1, 'recoveredCount': 0}]}})
b.obj('chaos', 'chaos-mesh.org/v1alpha1', 'PodIOChaos', rd[0], ns='kuma-demo', created=b.T(ON - 1, 13),
      spec={'volumeMountPath': '/data', 'container': 'redis', 'actions': [{'type': 'fault', 'path': '/data/**/*', 'methods': ['WRITE', 'CREATE', 'FSYNC'], 'percent': 100, 'faults': [{'errno': 28, 'weight': 1}], 'source': 'kuma-demo/redis-data-enospc'}]},
      status={'pid': 1, 'startTime': int(b.T(ON - 1, 14).timestamp()), 'observedGeneration': 1})
for reason, msg, s in [('FinalizerInited', 'Finalizer has been inited', 12), ('Started', 'Experiment has started', 12), ('Applied', 'Successfully apply chaos for kuma-demo/%s/redis' % rd[0], 14)]:
    b.event('IOChaos', 'redis-data-enospc', reason, msg, b.T(ON - 1, s), component={'FinalizerInited': 'finalizer', 'Started': 'desiredphase'}.get(reason, 'records'), api='chaos-mesh.org/v1alpha1')
b.obj('mesh', 'kuma.io/v1alpha1', 'MeshTrafficPermission', 'allow-all', ns='kuma-system', created=b.ago(days=12), labels={'kuma.io/mesh': 'default'},
      spec={'targetRef': {'kind': 'Mesh'}, 'from': [{'targetRef': {'kind': 'Mesh'}, 'default': {'action': 'Allow'}}]})
b.obj('mesh', 'kuma.io/v1alpha1', 'MeshRetry', 'demo-app-retry', ns='kuma-system', created=b.T(6, 40), labels={'kuma.io/mesh': 'default'},
      spec={'targetRef': {'kind': 'Mesh'}, 'to': [{'targetRef': {'kind': 'MeshService', 'name': 'redis_kuma-demo_svc_6379'}, 'default': {'tcp': {'maxConnectAttempt': 3}}}]})
b.event('Pod', da[1], 'Unhealthy', 'Readiness probe failed: Get "http://10.244.2.7:9000/ready": dial tcp 10.244.2.7:9000: connect: connection refused', b.T(4, 2), typ='Warning', field='spec.containers{kuma-sidecar}')


def rts(t):
    return t.strftime('%d %b %Y %H:%M:%S.') + '%03d' % (t.microsecond // 1000)


for k in range(0, 60):
    t = b.T(k, 7)
    if k < ON:
        b.log(t, 'redis', rd[0], '1:M %s * 1 changes in 60 seconds. Saving...' % rts(t), 'NOTICE', container='redis')
        b.log(t, 'redis', rd[0], '1:M %s * Background saving started by pid %d' % (rts(t), 300 + k), 'NOTICE', container='redis')
        b.log(t + dt.timedelta(milliseconds=30), 'redis', rd[0], '%d:C %s * DB saved on disk' % (300 + k, rts(t + dt.timedelta(milliseconds=30))), 'NOTICE', container='redis')
        b.log(t + dt.timedelta(milliseconds=130), 'redis', rd[0], '1:M %s * Background saving terminated with success' % rts(t + dt.timedelta(milliseconds=130)), 'NOTICE', container='redis')
    elif k == ON:
        t = b.T(ON, 2)
        b.log(t, 'redis', rd[0], '1:M %s * 1 changes in 60 seconds. Saving...' % rts(t), 'NOTICE', container='redis')
        b.log(t, 'redis', rd[0], '1:M %s * Background saving started by pid %d' % (rts(t), 300 + k), 'NOTICE', container='redis')
        b.log(t + dt.timedelta(milliseconds=4), 'redis', rd[0], '%d:C %s # Failed opening the temp RDB file temp-%d.rdb (in server root dir /data) for saving: No space left on device' % (300 + k, rts(t + dt.timedelta(milliseconds=4)), 300 + k), 'WARNING', container='redis')
        b.log(t + dt.timedelta(milliseconds=100), 'redis', rd[0], '1:M %s # Background saving error' % rts(t + dt.timedelta(milliseconds=100)), 'WARNING', container='redis')
    elif k % 1 == 0 and k > ON:
        t = b.T(k, 8)
        b.log(t, 'redis', rd[0], '1:M %s * 1 changes in 60 seconds. Saving...' % rts(t), 'NOTICE', container='redis')
        b.log(t + dt.timedelta(milliseconds=4), 'redis', rd[0], '%d:C %s # Failed opening the temp RDB file temp-%d.rdb (in server root dir /data) for saving: No space left on device' % (300 + k, rts(t + dt.timedelta(milliseconds=4)), 300 + k), 'WARNING', container='redis')
        b.log(t + dt.timedelta(milliseconds=100), 'redis', rd[0], '1:M %s # Background saving error' % rts(t + dt.timedelta(milliseconds=100)), 'WARNING', container='redis')


def da_fn(t, m, rnd, pod):
    if rnd.random() < 0.6:
        return None if rnd.random() < 0.8 else ('info', 'GET /counter 200 %d ms' % rnd.randint(1, 6))
    if m >= ON + 0.05:
        return [('error', 'ReplyError: MISCONF Redis is configured to save RDB snapshots, but it\'s currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.\n    at parseError (/app/node_modules/redis-parser/lib/parser.js:179:12)\n    at parseType (/app/node_modules/redis-parser/lib/parser.js:302:14) {\n  command: \'INCR\',\n  args: [ \'counter\' ],\n  code: \'MISCONF\'\n}'),
                ('info', 'POST /increment 500 %d ms' % rnd.randint(1, 5))]
    return ('info', 'POST /increment 200 %d ms' % rnd.randint(1, 6))


b.stream('demo-app', da, 9, da_fn, container='demo-app')


def kdp_fn(t, m, rnd, pod):
    return ('info', '[%s][%d][warning][config] [source/extensions/config_subscription/grpc/grpc_stream.h:155] DeltaAggregatedResources gRPC config stream to kuma_control_plane closed: 13, ' % (t.strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (t.microsecond // 1000), 1))


b.stream('demo-app', da, 0.1, kdp_fn, container='kuma-sidecar')
b.log(b.T(6, 41), 'kuma-control-plane', 'kuma-control-plane-7b8d9c6f5-q2xlm', '%s\tINFO\tkds.zone\tMeshRetry demo-app-retry created' % iso(b.T(6, 41), ms=True), 'info', ns='kuma-system')

b.rng('sum by (envoy_response_code_class) (rate(envoy_cluster_upstream_rq_xx{namespace="kuma-demo", kuma_io_service="demo-app_kuma-demo_svc_5000", envoy_cluster_name="localhost_5000"}[1m]))', 'demo-app inbound (envoy) responses/s by class',
      [({'envoy_response_code_class': '2'}, step_fn(9.2, 5.6, ON + 0.2)), ({'envoy_response_code_class': '5'}, step_fn(0, 3.6, ON + 0.2))])
b.rng('sum(rate(redis_commands_failed_calls_total{namespace="kuma-demo", cmd="incr"}[1m]))', 'redis failed INCR/s', [({}, step_fn(0, 3.6, ON + 0.2))])
b.rng('redis_rdb_last_bgsave_status{namespace="kuma-demo"}', 'redis last bgsave ok (1) / failed (0)', [({'pod': rd[0]}, step_fn(1, 0, ON + 0.05, rel=0))])
b.rng('redis_rdb_changes_since_last_save{namespace="kuma-demo"}', 'redis changes since last successful save', [({'pod': rd[0]}, lambda m, r: r.randint(1, 4) if m < ON else 4 + int((m - ON) * 0.4))])
b.rng('kubelet_volume_stats_used_bytes{namespace="kuma-demo", persistentvolumeclaim="redis-data"} / kubelet_volume_stats_capacity_bytes{namespace="kuma-demo", persistentvolumeclaim="redis-data"}', 'redis-data PVC used fraction',
      [({'persistentvolumeclaim': 'redis-data'}, noisy(0.031, .01))])
b.rng('sum by (envoy_cluster_name) (rate(envoy_cluster_upstream_cx_connect_fail{namespace="kuma-demo", kuma_io_service="demo-app_kuma-demo_svc_5000"}[1m]))', 'demo-app outbound connect failures/s', [({'envoy_cluster_name': 'redis_kuma-demo_svc_6379'}, const(0))])
cpu = {p: noisy(0.02) for p in da + rd}
mem = {p: noisy(MiB(58)) for p in da}
mem[rd[0]] = noisy(MiB(14))
res_metrics(b, 'kuma-demo', cpu, mem)

b.notes = '''
# flt-kuma-redis-iofault — Chaos Mesh IOChaos returns ENOSPC on redis /data; Redis MISCONF blocks writes

**Incident.** A Chaos Mesh `IOChaos` `redis-data-enospc` (action `fault`, errno 28 = ENOSPC, 100 %, methods WRITE/CREATE/FSYNC,
volumePath `/data`, container `redis`) was applied at 10:30:14Z. At the next RDB snapshot (save 60 1) Redis fails with
"Failed opening the temp RDB file ... No space left on device" and, with `stop-writes-on-bgsave-error yes` (default), rejects all
writes with `MISCONF`. The demo-app's `INCR counter` fails → POST /increment 500; GET /counter still works. The PVC is only 3 % used —
the "disk full" is injected.

**Chain.** envoy inbound 5xx on demo-app (metrics) → demo-app `ReplyError: MISCONF ... unable to persist to disk` (logs) → redis
`Background saving error` / `No space left on device` from 10:31:02 (logs), `rdb_last_bgsave_status` 1→0, failed INCR (metrics)
→ PVC usage 3 % (metrics) → `k8s/chaos.yaml` IOChaos + PodIOChaos (errno 28 on /data), events `Applied`.

**Decoys.** MeshRetry created at 10:06 (mesh change, harmless); envoy xDS stream closed warnings; a sidecar readiness refusal at 10:04;
the question hints at the mesh; redis still answers PING and reads.

**must_mention:** `redis`, `chaos` (IOChaos / injected ENOSPC).

**Provenance.** Chaos Mesh `IOChaos` action `fault` (errno, percent, methods, volumePath) and Litmus `disk-fill` family; AIOpsLab/ITBench storage faults.
App: kumahq/kuma-counter-demo (demo-app Node.js :5000 with /increment and /counter, redis, kuma-dp sidecars). Generated by /tmp/b8/c13.py (seed 1313).
'''
b.write()
