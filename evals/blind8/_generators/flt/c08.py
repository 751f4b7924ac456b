from lib import *

b = B('flt-podinfo-backend-netdelay', 'podinfo frontend echo timeouts', '2026-11-21T15:00', 60, 'staging', 'stg-aks-neu', 'webapp',
      "podinfo staging: the frontend's /api/echo is returning 502s and p99 went from ~20ms to several seconds starting ~15:08. HPA already scaled the frontend up, didn't help. backend pods are healthy. where's the problem?",
      ['backend', 'chaos'], seed=808)
ON = 8
b.nodes(['aks-system-27394011-vmss00000%d' % i for i in (0, 1, 2)], zone_prefix='northeurope-', kubelet='v1.30.5', runtime='containerd://1.7.22-1',
        os_image='Ubuntu 22.04.5 LTS', itype='Standard_D4s_v5')
b.namespace('webapp', {'toolkit.fluxcd.io/tenant': 'platform'})
b.namespace('chaos-mesh')
IMG = 'ghcr.io/stefanprodan/podinfo:6.7.1'
fe_base = b.deploy('frontend', IMG, 2, 9898, labels={'app': 'frontend'},
                   command=['./podinfo', '--port=9898', '--port-metrics=9797', '--level=info', '--backend-url=http://backend:9898/echo', '--cache-server=tcp://cache:6379'],
                   probe={'httpGet': {'path': '/readyz', 'port': 9898}}, svc_port=9898,
                   res={'requests': {'cpu': '100m', 'memory': '32Mi'}, 'limits': {'cpu': '1', 'memory': '128Mi'}})
fe_new = []
for i in (2, 3):
    pn = 'frontend-%s-%s' % (h(10, b.case, 'frontend', 'rs'), h(5, 'fe', i))
    src = [p for p in b.objs['pods'] if p['metadata']['name'] == fe_base[0]][0]
    b.pod(pn, 'webapp', dict(src['metadata']['labels']), {k: v for k, v in src['spec'].items() if k != 'nodeName'}, b.node_names[i % 3],
          owner=('apps/v1', 'ReplicaSet', 'frontend-' + h(10, b.case, 'frontend', 'rs')), created=b.T(ON + 5, 31))
    fe_new.append(pn)
for o in b.objs['workloads']:
    if o['metadata']['name'] == 'frontend' and o['kind'] == 'Deployment':
        o['spec']['replicas'] = 4
        o['status'].update({'replicas': 4, 'readyReplicas': 4, 'availableReplicas': 4, 'updatedReplicas': 4})
fe = fe_base + fe_new
be = b.deploy('backend', IMG, 2, 9898, labels={'app': 'backend'},
              command=['./podinfo', '--port=9898', '--port-metrics=9797', '--level=info', '--cache-server=tcp://cache:6379'],
              probe={'httpGet': {'path': '/readyz', 'port': 9898}}, svc_port=9898,
              res={'requests': {'cpu': '100m', 'memory': '32Mi'}, 'limits': {'cpu': '1', 'memory': '128Mi'}})
ca = b.deploy('cache', 'redis:7.2.6', 1, 6379, labels={'app': 'cache'}, probe={'tcpSocket': {'port': 6379}}, svc_port=6379)
b.obj('autoscaling', 'autoscaling/v2', 'HorizontalPodAutoscaler', 'frontend', created=b.ago(days=60),
      spec={'scaleTargetRef': {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'name': 'frontend'}, 'minReplicas': 2, 'maxReplicas': 4,
            'metrics': [{'type': 'Pods', 'pods': {'metric': {'name': 'http_requests_inflight'}, 'target': {'type': 'AverageValue', 'averageValue': '10'}}}]},
      status={'currentReplicas': 4, 'desiredReplicas': 4, 'lastScaleTime': iso(b.T(ON + 5, 30)),
              'currentMetrics': [{'type': 'Pods', 'pods': {'metric': {'name': 'http_requests_inflight'}, 'current': {'averageValue': '14500m'}}}],
              'conditions': [{'type': 'ScalingLimited', 'status': 'True', 'reason': 'TooManyReplicas', 'message': 'the desired replica count is more than the maximum replica count', 'lastTransitionTime': iso(b.T(ON + 6, 0))}]})
b.event('HorizontalPodAutoscaler', 'frontend', 'SuccessfulRescale', 'New size: 4; reason: pods metric http_requests_inflight above target', b.T(ON + 5, 30), component='horizontal-pod-autoscaler', api='autoscaling/v2')
b.event('Deployment', 'frontend', 'ScalingReplicaSet', 'Scaled up replica set frontend-%s to 4 from 2' % h(10, b.case, 'frontend', 'rs'), b.T(ON + 5, 30), component='deployment-controller', api='apps/v1')
b.obj('chaos', 'chaos-mesh.org/v1alpha1', 'NetworkChaos', 'backend-latency-gameday', ns='webapp', created=b.T(ON - 1, 22),
      labels={'gameday': '2026-11-21'},
      spec={'action': 'delay', 'mode': 'all', 'selector': {'namespaces': ['webapp'], 'labelSelectors': {'app': 'backend'}},
            'delay': {'latency': '1500ms', 'jitter': '300ms', 'correlation': '25'}, 'direction': 'to', 'duration': '50m'},
      status={'conditions': [{'type': 'Selected', 'status': 'True'}, {'type': 'AllInjected', 'status': 'True'},
                             {'type': 'AllRecovered', 'status': 'False'}, {'type': 'Paused', 'status': 'False'}],
              'instances': {'webapp/' + p: 1 for p in be},
              'experiment': {'desiredPhase': 'Run', 'containerRecords': [{'id': 'webapp/' + p, 'phase': 'Injected', 'selectorKey': '.', 'injectedCount': 1, 'recoveredCount': 0} for p in be]}})
b.obj('chaos', 'chaos-mesh.org/v1alpha1', 'PodNetworkChaos', be[0], ns='webapp', created=b.T(ON - 1, 23),
      spec={'qdisc': [{'type': 'netem', 'parameters': {'latency': '1500ms', 'jitter': '300ms', 'correlation': '25'}, 'source': 'webapp/backend-latency-gameday'}]},
      status={'observedGeneration': 2, 'failedMessage': ''})
for reason, msg, s in [('FinalizerInited', 'Finalizer has been inited', 22), ('Updated', 'Successfully update finalizer of resource', 22),
                       ('Started', 'Experiment has started', 23), ('Applied', 'Successfully apply chaos for webapp/%s' % be[0], 25), ('Applied', 'Successfully apply chaos for webapp/%s' % be[1], 26),
                       ('Updated', 'Successfully update records of resource', 26)]:
    b.event('NetworkChaos', 'backend-latency-gameday', reason, msg, b.T(ON - 1, s), component={'FinalizerInited': 'finalizer', 'Started': 'desiredphase'}.get(reason, 'records'), api='chaos-mesh.org/v1alpha1')
b.obj('config', 'kustomize.toolkit.fluxcd.io/v1', 'Kustomization', 'webapp', ns='flux-system', created=b.ago(days=90),
      spec={'interval': '10m', 'path': './kustomize/webapp', 'prune': True, 'sourceRef': {'kind': 'GitRepository', 'name': 'podinfo'}},
      status={'lastAppliedRevision': 'master@sha1:3b1f9e2c7d4a', 'conditions': [{'type': 'Ready', 'status': 'True', 'reason': 'ReconciliationSucceeded', 'message': 'Applied revision: master@sha1:3b1f9e2c7d4a', 'lastTransitionTime': iso(b.T(30, 4))}]})
b.event('Kustomization', 'webapp', 'ReconciliationSucceeded', 'Reconciliation finished in 1.204s, next run in 10m0s', b.T(0, 4), last=b.T(50, 4), count=6, component='kustomize-controller', ns='flux-system', api='kustomize.toolkit.fluxcd.io/v1')


def z(t, lvl, caller, msg, **kw):
    d = {'level': lvl, 'ts': iso(t, ms=True).replace('Z', '') + '%03dZ' % (t.microsecond % 1000), 'caller': caller, 'msg': msg}
    d.update(kw)
    return json.dumps(d, separators=(',', ':'))


def fe_fn(t, m, rnd, pod):
    if pod in fe_new and m < ON + 5.6:
        return None
    if m >= ON and rnd.random() < 0.55:
        return ('error', z(t, 'error', 'api/echo.go:52', 'backend call failed', error='Post "http://backend:9898/echo": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', url='http://backend:9898/echo'))
    if rnd.random() < 0.04:
        return ('warn', z(t, 'warn', 'api/cache.go:71', 'cache get failed', key='session:%s' % rid(rnd, 8), error='redis: nil'))
    return None


b.stream('frontend', fe, 18, fe_fn, container='podinfo')
for p in fe_new:
    t = b.T(ON + 5, 38)
    b.log(t, 'frontend', p, z(t, 'info', 'podinfo/main.go:153', 'Starting podinfo', version='6.7.1', revision='3b1f9e2c7d4a', port='9898'), 'info', container='podinfo')
    b.log(t + dt.timedelta(seconds=1), 'frontend', p, z(t + dt.timedelta(seconds=1), 'info', 'api/server.go:275', 'Starting HTTP Server.', addr=':9898'), 'info', container='podinfo')


def be_fn(t, m, rnd, pod):
    if rnd.random() < 0.02:
        return ('info', z(t, 'info', 'api/echo.go:38', 'payload received', size=rnd.randint(30, 900)))
    return None


b.stream('backend', be, 10, be_fn, container='podinfo')
b.stream('cache', ca, 0.05, lambda t, m, rnd, pod: ('NOTICE', '1:M %s * 100 changes in 300 seconds. Saving...' % (t.strftime('%d %b %Y %H:%M:%S.') + '%03d' % (t.microsecond // 1000))), container='cache')

b.rng('sum by (status) (rate(http_requests_total{namespace="webapp", app="frontend", path="api/echo"}[1m]))', 'frontend /api/echo requests/s by status',
      [({'status': '200'}, step_fn(21.0, 9.4, ON)), ({'status': '502'}, step_fn(0, 11.6, ON))])
b.rng('histogram_quantile(0.99, sum by (le, app) (rate(http_request_duration_seconds_bucket{namespace="webapp", path="api/echo"}[1m])))', 'p99 of /api/echo (or /echo) server-side duration by app (s)',
      [({'app': 'frontend'}, step_fn(0.021, 2.0, ON, rel=.01)), ({'app': 'backend'}, step_fn(0.0042, 0.0045, ON, rel=.1))])
b.rng('sum by (app) (rate(http_requests_total{namespace="webapp", path="echo"}[1m]))', 'backend /echo requests/s received',
      [({'app': 'backend'}, step_fn(21.0, 19.5, ON))])
b.rng('sum by (app) (http_requests_inflight{namespace="webapp"})', 'in-flight requests by app',
      [({'app': 'frontend'}, step_fn(0.6, 52, ON, rel=.1)), ({'app': 'backend'}, noisy(0.2, .5))])
b.rng('sum by (pod) (rate(container_network_transmit_packets_dropped_total{namespace="webapp"}[5m]))', 'transmit packets dropped/s by pod',
      [({'pod': p}, noisy(0.02, .9)) for p in be + fe_base])
b.rng('kube_horizontalpodautoscaler_status_current_replicas{namespace="webapp", horizontalpodautoscaler="frontend"}', 'frontend HPA current replicas',
      [({}, step_fn(2, 4, ON + 5.5, rel=0))])
cpu = {p: noisy(0.02) for p in fe}
cpu.update({p: noisy(0.015) for p in be})
cpu[ca[0]] = noisy(0.004)
mem = {p: noisy(MiB(17)) for p in fe}
mem.update({p: noisy(MiB(15)) for p in be})
mem[ca[0]] = noisy(MiB(4))
res_metrics(b, 'webapp', {k: (sometimes(v, lambda m: m > ON + 5.6) if k in fe_new else v) for k, v in cpu.items()},
            {k: (sometimes(v, lambda m: m > ON + 5.6) if k in fe_new else v) for k, v in mem.items()})

b.notes = '''
# flt-podinfo-backend-netdelay — Chaos Mesh NetworkChaos adds 1.5 s egress delay to the backend pods

**Incident.** A Chaos Mesh `NetworkChaos` `backend-latency-gameday` (action `delay`, latency 1500ms, jitter 300ms, direction `to`,
mode all, selector `app=backend`, 50 m) was created at 15:07:22Z and applied to both backend pods at 15:07:25–26Z (netem qdisc
in `PodNetworkChaos`). Every packet the backend sends is delayed ~1.5 s, so frontend→backend calls (`--backend-url=http://backend:9898/echo`)
exceed the frontend's 2 s client timeout → `context deadline exceeded` → 502 from /api/echo.

**Chain.** /api/echo 502s and frontend p99 ≈ 2 s (metrics; frontend zap logs `backend call failed ... context deadline exceeded`) →
backend receives the requests and its *server-side* duration stays ~4 ms, no restarts, probes fine (metrics, pods) → the delay is
on the wire → `k8s/chaos.yaml` NetworkChaos + PodNetworkChaos (netem), events `Applied` on the NetworkChaos.

**Decoys.** HPA scaled frontend 2→4 at 15:13 (consequence of in-flight requests, hits max, no help); Flux Kustomization reconciles
every 10 min (no changes); frontend `cache get failed ... redis: nil` warnings (normal cache misses); redis save notices.

**must_mention:** `backend`, `chaos` (NetworkChaos / Chaos Mesh network delay).

**Provenance.** Chaos Mesh `NetworkChaos` action `delay` (latency/jitter/correlation, direction); Litmus `pod-network-latency`.
App: stefanprodan/podinfo `kustomize/webapp` layout (frontend with --backend-url, backend, cache redis; zap JSON logs, `http_requests_total`,
`http_request_duration_seconds`, HPA on custom metrics). Generated by /tmp/b8/c08.py (seed 808).
'''
b.write()
