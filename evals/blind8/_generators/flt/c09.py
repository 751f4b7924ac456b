from lib import *

b = B('flt-dapr-order-processor-timeskew', 'dapr checkout: every order fails with ERR_DIRECT_INVOKE', '2026-11-28T09:00', 60, 'test', 'test-aks-dapr', 'dapr-demo',
      "dapr quickstart env (test, ns dapr-demo): checkout has been failing every order since ~09:14 with ERR_DIRECT_INVOKE. order-processor pods are Running and ready, nothing was deployed. what's broken?",
      ['order-processor', 'clock'], seed=909)
ON = 14
b.nodes(['aks-nodepool1-40718224-vmss00000%d' % i for i in (0, 1, 2)], zone_prefix='westeurope-', kubelet='v1.30.5', runtime='containerd://1.7.22-1',
        os_image='Ubuntu 22.04.5 LTS', itype='Standard_D4s_v5')
b.namespace('dapr-demo')
b.namespace('dapr-system')
b.namespace('chaos-mesh')
DAPR = {'dapr.io/enabled': 'true', 'dapr.io/app-port': '6001', 'dapr.io/log-as-json': 'true', 'dapr.io/config': 'appconfig'}
sidecar = lambda app: {'name': 'daprd', 'image': 'ghcr.io/dapr/daprd:1.14.4', 'args': ['/daprd', '--dapr-http-port=3500', '--dapr-grpc-port=50001', '--app-id=%s' % app, '--log-as-json', '--enable-mtls', '--sentry-address=dapr-sentry.dapr-system.svc.cluster.local:443', '--control-plane-trust-domain=cluster.local'],
                       'ports': [{'containerPort': 3500, 'name': 'dapr-http'}, {'containerPort': 50001, 'name': 'dapr-grpc'}, {'containerPort': 50002, 'name': 'dapr-internal'}],
                       'resources': {'requests': {'cpu': '100m', 'memory': '250Mi'}}}
op = b.deploy('order-processor', 'ghcr.io/dapr/samples/hello-k8s-order-processor:1.14', 2, 6001, labels={'app': 'order-processor'},
              ann={}, extra_containers=[sidecar('order-processor')], probe={'httpGet': {'path': '/healthz', 'port': 6001}}, svc_port=80, env={'APP_PORT': '6001'})
ck = b.deploy('checkout', 'ghcr.io/dapr/samples/hello-k8s-checkout:1.14', 1, None, labels={'app': 'checkout'}, extra_containers=[sidecar('checkout')], svc=False,
              env={'DAPR_HTTP_PORT': '3500'})
for p in b.objs['pods']:
    p['metadata']['annotations'] = dict(DAPR, **{'dapr.io/app-id': p['metadata']['labels']['app']})
for o in b.objs['workloads']:
    o['spec']['template']['metadata']['annotations'] = dict(DAPR, **{'dapr.io/app-id': o['metadata']['name'].rsplit('-', 1)[0] if o['kind'] == 'ReplicaSet' else o['metadata']['name']})
se = b.deploy('dapr-sentry', 'ghcr.io/dapr/sentry:1.14.4', 1, 50001, labels={'app': 'dapr-sentry'}, ns='dapr-system', svc_port=443, probe={'httpGet': {'path': '/healthz', 'port': 8080}})
pl = b.deploy('dapr-placement-server', 'ghcr.io/dapr/placement:1.14.4', 1, 50005, labels={'app': 'dapr-placement-server'}, ns='dapr-system', kind='StatefulSet', svc_port=50005, probe=False)
b.obj('config', 'dapr.io/v1alpha1', 'Configuration', 'appconfig', ns='dapr-demo', created=b.ago(days=50),
      spec={'mtls': {'enabled': True, 'workloadCertTTL': '24h', 'allowedClockSkew': '15m'}, 'tracing': {'samplingRate': '1'}})
b.obj('chaos', 'chaos-mesh.org/v1alpha1', 'TimeChaos', 'order-processor-clock-skew', ns='dapr-demo', created=b.T(ON - 1, 39),
      labels={'app.kubernetes.io/managed-by': 'chaos-dashboard'},
      spec={'mode': 'all', 'selector': {'namespaces': ['dapr-demo'], 'labelSelectors': {'app': 'order-processor'}}, 'timeOffset': '-2h', 'clockIds': ['CLOCK_REALTIME'], 'duration': '60m'},
      status={'conditions': [{'type': 'Selected', 'status': 'True'}, {'type': 'AllInjected', 'status': 'True'}, {'type': 'AllRecovered', 'status': 'False'}, {'type': 'Paused', 'status': 'False'}],
              'experiment': {'desiredPhase': 'Run', 'containerRecords': [{'id': 'dapr-demo/%s/%s' % (p, c), 'phase': 'Injected', 'selectorKey': '.', 'injectedCount': 1, 'recoveredCount': 0} for p in op for c in ('order-processor', 'daprd')]}})
for reason, msg, s in [('FinalizerInited', 'Finalizer has been inited', 39), ('Started', 'Experiment has started', 40)] + [('Applied', 'Successfully apply chaos for dapr-demo/%s/%s' % (p, c), 43) for p in op for c in ('order-processor', 'daprd')]:
    b.event('TimeChaos', 'order-processor-clock-skew', reason, msg, b.T(ON - 1, s), component={'FinalizerInited': 'finalizer', 'Started': 'desiredphase'}.get(reason, 'records'), api='chaos-mesh.org/v1alpha1')
b.event('Pod', ck[0], 'Unhealthy', 'Readiness probe failed: Get "http://10.244.1.40:3501/v1.0/healthz": dial tcp 10.244.1.40:3501: connect: connection refused', b.ago(minutes=30), typ='Warning', field='spec.containers{daprd}')

SKEW = dt.timedelta(hours=-2)


def dj(t, app, pod, level, msg, scope, skew=False):
    tt = t + SKEW if skew else t
    return json.dumps({'app_id': app, 'instance': pod, 'level': level, 'msg': msg, 'scope': scope, 'time': tt.strftime('%Y-%m-%dT%H:%M:%S.') + '%06d' % tt.microsecond + 'Z', 'type': 'log', 'ver': '1.14.4'}, separators=(',', ':'))


ctr = {'n': 1000}


def ck_fn(t, m, rnd, pod):
    ctr['n'] += 1
    n = ctr['n']
    if m >= ON:
        return [('error', 'Order %d failed: 500 {"errorCode":"ERR_DIRECT_INVOKE","message":"failed to invoke, id: order-processor, err: rpc error: code = Unavailable desc = connection error: desc = \\"transport: authentication handshake failed: remote error: tls: bad certificate\\""}' % n, {'container': 'checkout'}),
                ('warning', dj(t, 'checkout', pod, 'warning', 'Error invoking app order-processor: rpc error: code = Unavailable desc = connection error: desc = "transport: authentication handshake failed: remote error: tls: bad certificate"', 'dapr.runtime.direct_messaging'), {'container': 'daprd'})]
    return ('info', 'Order passed: {"orderId":%d}' % n, {'container': 'checkout'})


b.stream('checkout', ck, 12, ck_fn)


def op_fn(t, m, rnd, pod):
    if m >= ON:
        return ('warning', dj(t, 'order-processor', pod, 'warning', 'http: TLS handshake error from %s:%d: tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time %s is before %s' % (
            '10.244.1.40', rnd.randint(33000, 60000), (t + SKEW).strftime('%Y-%m-%dT%H:%M:%SZ'), iso(b.ago(minutes=52 + 15))), 'dapr.runtime.grpc.internal', skew=True), {'container': 'daprd'})
    return ('info', 'Order received: {"orderId":%d}' % rnd.randint(1, 2000), {'container': 'order-processor'})


b.stream('order-processor', op, 6, op_fn)
for p in op:
    tt = b.T(ON - 1, 44)
    b.log(tt, 'order-processor', p, dj(tt, 'order-processor', p, 'info', 'Workload certificate will expire at %s, renewing in 16h48m0s' % iso(b.ago(minutes=52) + dt.timedelta(hours=24)), 'dapr.runtime.security', skew=True), 'info', container='daprd')
b.stream('dapr-sentry', se, 0.3, lambda t, m, rnd, pod: ('info', json.dumps({'instance': pod, 'level': 'info', 'msg': 'Successfully signed certificate for ID spiffe://cluster.local/ns/%s' % rnd.choice(['monitoring/prometheus-adapter', 'payments/payments-api', 'dapr-demo/checkout']), 'scope': 'dapr.sentry.server', 'time': iso(t, ms=True), 'type': 'log', 'ver': '1.14.4'}, separators=(',', ':'))), ns='dapr-system')
b.stream('checkout', ck, 0.2, lambda t, m, rnd, pod: ('warning', dj(t, 'checkout', pod, 'warning', 'Failed to get actor placement table: rpc error: code = Unavailable desc = actor runtime is disabled: no state store configured', 'dapr.runtime.actor'), {'container': 'daprd'}))

b.rng('sum by (app_id, status) (rate(dapr_http_client_completed_count{namespace="dapr-demo", app_id="checkout"}[5m]))', 'checkout outbound invocation completions/s by status',
      [({'app_id': 'checkout', 'status': '200'}, step_fn(12.1, 0, ON + 0.9)), ({'app_id': 'checkout', 'status': '500'}, step_fn(0, 12.1, ON + 0.9))])
b.rng('sum by (app_id, grpc_client_status) (rate(dapr_grpc_io_client_completed_rpcs{namespace="dapr-demo", grpc_client_method="/dapr.proto.internals.v1.ServiceInvocation/CallLocal"}[5m]))', 'daprd service-invocation gRPC client completions/s',
      [({'app_id': 'checkout', 'grpc_client_status': 'OK'}, step_fn(12.1, 0, ON + 0.9)), ({'app_id': 'checkout', 'grpc_client_status': 'UNAVAILABLE'}, step_fn(0, 12.1, ON + 0.9))])
b.rng('sum by (app_id) (rate(dapr_http_server_request_count{namespace="dapr-demo", app_id="order-processor"}[5m]))', 'order-processor app requests/s received via daprd',
      [({'app_id': 'order-processor'}, step_fn(12.1, 0, ON + 0.9))])
b.rng('timestamp(up{namespace="dapr-demo"}) - dapr_runtime_time_seconds{namespace="dapr-demo"}', 'wall clock of prometheus minus clock reported by daprd (s)',
      [({'app_id': 'order-processor', 'pod': p}, lambda m, r: 0.0 if m < ON - 1 + 43 / 60 else 7200.0) for p in op] + [({'app_id': 'checkout', 'pod': ck[0]}, const(0))])
b.rng('sum(rate(dapr_sentry_cert_sign_request_received_total{namespace="dapr-system"}[5m]))', 'sentry cert sign requests/s', [({}, noisy(0.005, .9))])
cpu = {p: noisy(0.01) for p in op + ck}
mem = {p: noisy(MiB(41)) for p in op + ck}
res_metrics(b, 'dapr-demo', cpu, mem)

b.notes = '''
# flt-dapr-order-processor-timeskew — Chaos Mesh TimeChaos sets order-processor's clock back 2 h; Dapr mTLS rejects peer certs

**Incident.** A Chaos Mesh `TimeChaos` `order-processor-clock-skew` (timeOffset `-2h`, CLOCK_REALTIME, all containers of the
order-processor pods incl. daprd) was applied at 09:13:43Z. The order-processor daprd now believes it is ~07:14; the client
certificate presented by checkout's daprd (signed by Sentry at ~08:08 with 15 m back-dating) is "not yet valid", so the internal
gRPC mTLS handshake fails. Every service invocation checkout → order-processor fails with ERR_DIRECT_INVOKE.

**Chain.** checkout `Order N failed: 500 ERR_DIRECT_INVOKE ... tls: bad certificate` (logs, metrics status 500) → order-processor daprd
`TLS handshake error ... x509: certificate has expired or is not yet valid: current time 2026-11-28T07:1x is before 2026-11-28T07:53` and
its JSON `time` fields are 2 h behind the ingest @timestamp (logs); clock-offset metric jumps to 7200 s for both order-processor pods
(metrics) → `k8s/chaos.yaml` TimeChaos with containerRecords Injected and `Applied` events.

**Decoys.** sentry routine certificate signing logs (sentry healthy), an old checkout daprd readiness failure at start-up, actor placement
warnings (no state store configured — normal for the quickstart), mTLS config `allowedClockSkew: 15m` (irrelevant to 2 h).

**must_mention:** `order-processor`, `clock` (clock skew / time offset).

**Provenance.** Chaos Mesh `TimeChaos` (timeOffset, clockIds; vDSO-based), Litmus `time-chaos`; Dapr quickstarts
`hello-kubernetes` / service invocation (checkout → order-processor via daprd :3500, `ERR_DIRECT_INVOKE`, JSON daprd logs, Sentry mTLS).
Generated by /tmp/b8/c09.py (seed 909).
'''
b.write()
