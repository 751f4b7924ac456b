from lib import *

b = B('flt-hashicups-ctl-pod-delete-gameday', 'hashicups frontend pods churning (control)', '2026-12-14T15:00', 60, 'test', 'test-aks-weu', 'hashicups',
      "hashicups test: KubePodNotReady / pod-churn alerts keep firing for the frontend since ~15:10, pods are getting killed every minute or so. are users affected and what's broken?",
      [], status=('partial', 'refused'), seed=1515)
ON = 10
b.nodes(['aks-apps-31945577-vmss0000%02d' % i for i in (0, 1, 3)], zone_prefix='westeurope-', kubelet='v1.30.5',
        runtime='containerd://1.7.22-1', os_image='Ubuntu 22.04.5 LTS', itype='Standard_D4s_v5')
b.namespace('hashicups', {'environment': 'test'})
b.namespace('litmus')
FRS = h(10, b.case, 'frontend', 'rs')
kills = [ON + 0.5 + 1.5 * i for i in range(26) if ON + 0.5 + 1.5 * i < 49]
fe = b.deploy('frontend', 'hashicorpdemoapp/frontend:v1.0.9', 3, 3000, probe={'httpGet': {'path': '/', 'port': 3000}}, svc_port=3000,
              env={'NEXT_PUBLIC_PUBLIC_API_URL': '/'}, pods_override={0: {'created': b.T(47, 59)}, 1: {'created': b.T(46, 29)}, 2: {'created': b.T(44, 59)}})
ng = b.deploy('nginx', 'nginx:1.27.2-alpine', 1, 80, probe={'httpGet': {'path': '/health', 'port': 80}})
pa = b.deploy('public-api', 'hashicorpdemoapp/public-api:v0.0.7', 2, 8080, env={'PRODUCT_API_URI': 'http://product-api:9090', 'PAYMENT_API_URI': 'http://payments:1800'}, probe={'httpGet': {'path': '/health', 'port': 8080}}, svc_port=8080)
pr = b.deploy('product-api', 'hashicorpdemoapp/product-api:v0.0.22', 2, 9090, probe={'httpGet': {'path': '/health/readyz', 'port': 9090}}, svc_port=9090)
pay = b.deploy('payments', 'hashicorpdemoapp/payments:v0.0.16', 1, 8080, svc_port=1800, probe={'httpGet': {'path': '/actuator/health', 'port': 8080}})
b.obj('policy', 'policy/v1', 'PodDisruptionBudget', 'frontend', created=b.ago(days=40), spec={'minAvailable': 2, 'selector': {'matchLabels': {'app': 'frontend'}}},
      status={'currentHealthy': 3, 'desiredHealthy': 2, 'disruptionsAllowed': 1, 'expectedPods': 3, 'observedGeneration': 1})
job = 'pod-delete-' + h(6, 'job')
b.pod('frontend-pod-delete-runner', 'hashicups', {'app': 'frontend-pod-delete', 'app.kubernetes.io/part-of': 'litmus'}, {'containers': [{'name': 'chaos-runner', 'image': 'litmuschaos/chaos-runner:3.11.0'}], 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
      b.node_names[0], owner=('litmuschaos.io/v1alpha1', 'ChaosEngine', 'frontend-pod-delete'), created=b.T(ON - 1, 0))
b.pod(job + '-' + h(5, 'j'), 'hashicups', {'job-name': job, 'name': 'pod-delete'}, {'containers': [{'name': 'pod-delete', 'image': 'litmuschaos.docker.scarf.sh/litmuschaos/go-runner:3.11.0'}], 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
      b.node_names[0], owner=('batch/v1', 'Job', job), created=b.T(ON - 1, 10))
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosEngine', 'frontend-pod-delete', ns='hashicups', created=b.T(ON - 1, 0), labels={'context': 'resilience-gameday', 'ticket': 'GAMEDAY-42'},
      spec={'engineState': 'active', 'annotationCheck': 'false', 'chaosServiceAccount': 'litmus-admin', 'jobCleanUpPolicy': 'retain',
            'appinfo': {'appns': 'hashicups', 'applabel': 'app=frontend', 'appkind': 'deployment'},
            'experiments': [{'name': 'pod-delete', 'spec': {'components': {'env': [{'name': 'TOTAL_CHAOS_DURATION', 'value': '2400'}, {'name': 'CHAOS_INTERVAL', 'value': '90'},
                                                                                  {'name': 'FORCE', 'value': 'false'}, {'name': 'PODS_AFFECTED_PERC', 'value': '30'}, {'name': 'SEQUENCE', 'value': 'serial'}]},
                                                            'probe': [{'name': 'frontend-availability', 'type': 'httpProbe', 'mode': 'Continuous',
                                                                       'httpProbe/inputs': {'url': 'http://nginx.hashicups.svc:80/', 'method': {'get': {'criteria': '==', 'responseCode': '200'}}},
                                                                       'runProperties': {'probeTimeout': '2s', 'interval': '2s', 'retry': 1}}]}}]},
      status={'engineStatus': 'initialized', 'experiments': [{'name': 'pod-delete', 'runner': 'frontend-pod-delete-runner', 'experimentPod': job, 'status': 'Running', 'verdict': 'Awaited', 'lastUpdateTime': iso(b.T(ON, 0))}]})
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosResult', 'frontend-pod-delete-pod-delete', ns='hashicups', created=b.T(ON - 1, 20),
      spec={'engine': 'frontend-pod-delete', 'experiment': 'pod-delete'},
      status={'experimentStatus': {'phase': 'Running', 'verdict': 'Awaited', 'probeSuccessPercentage': 'Awaited'},
              'probeStatuses': [{'name': 'frontend-availability', 'type': 'httpProbe', 'mode': 'Continuous', 'status': {'verdict': 'Awaited', 'description': 'Probe is running'}}],
              'history': {'passedRuns': 4, 'failedRuns': 0, 'stoppedRuns': 0, 'targets': [{'name': 'frontend', 'kind': 'deployment', 'chaosStatus': 'targeted'}]}})
b.event('ChaosEngine', 'frontend-pod-delete', 'ChaosEngineInitialized', 'Identifying app under test & launching frontend-pod-delete-runner', b.T(ON - 1, 1), component='chaos-operator', api='litmuschaos.io/v1alpha1')
b.event('ChaosEngine', 'frontend-pod-delete', 'ExperimentJobCreate', 'Experiment Job %s for Chaos Experiment: pod-delete' % job, b.T(ON - 1, 10), component='chaos-runner', api='litmuschaos.io/v1alpha1')
for i, k in enumerate(kills):
    victim = 'frontend-%s-%s' % (FRS, h(5, 'v', i))
    t = b.T(0, k * 60)
    b.event('Pod', victim, 'Killing', 'Stopping container frontend', t, field='spec.containers{frontend}')
    b.event('Pod', victim, 'ChaosInject', 'Injecting pod-delete chaos on application pod', t, component=job + '-' + h(5, 'j'))
    nw = 'frontend-%s-%s' % (FRS, h(5, 'v', i + 1))
    b.event('ReplicaSet', 'frontend-' + FRS, 'SuccessfulCreate', 'Created pod: %s' % nw, t + dt.timedelta(seconds=1), component='replicaset-controller', api='apps/v1')
    b.event('Pod', nw, 'Unhealthy', 'Readiness probe failed: Get "http://10.244.%d.%d:3000/": dial tcp 10.244.%d.%d:3000: connect: connection refused' % (1, 40 + i, 1, 40 + i), t + dt.timedelta(seconds=4), typ='Warning', field='spec.containers{frontend}')
b.event('Pod', pay[0], 'Unhealthy', 'Readiness probe failed: Get "http://10.244.2.19:8080/actuator/health": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', b.T(2, 0), typ='Warning', field='spec.containers{payments}')


def hts(t):
    return t.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t.microsecond // 1000)


def ng_fn(t, m, rnd, pod):
    path, sz = rnd.choice([('/api', rnd.randint(900, 1300)), ('/', 5623), ('/_next/static/chunks/main-3a1f.js', 91822), ('/images/terraspresso.png', 30211)])
    code = 200
    if rnd.random() < 0.0015:
        code, sz = 502, 157
    return (None, '%s - - [%s] "%s %s HTTP/1.1" %d %d "http://hashicups.test.acme.internal/" "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" rt=%.3f' % (
        ip(rnd, 244), t.strftime('%d/%b/%Y:%H:%M:%S +0000'), 'POST' if path == '/api' else 'GET', path, code, sz, rnd.uniform(.004, .04)))


b.stream('nginx', ng, 14, ng_fn)
for i, k in enumerate(kills):
    t = b.T(0, k * 60 + 6)
    p = 'frontend-%s-%s' % (FRS, h(5, 'v', i + 1))
    b.log(t, 'frontend', p, '  ▲ Next.js 14.2.15\n  - Local:        http://localhost:3000\n\n ✓ Starting...\n ✓ Ready in %dms' % b.rnd.randint(380, 520), 'info')
    if b.rnd.random() < 0.5:
        t2 = b.T(0, k * 60 + 0.2)
        b.log(t2, 'nginx', ng[0], '%s [error] 29#29: *%d connect() failed (111: Connection refused) while connecting to upstream, client: 10.244.0.1, server: localhost, request: "GET /_next/data/build-9c1/index.json HTTP/1.1", upstream: "http://10.244.1.%d:3000/_next/data/build-9c1/index.json", host: "hashicups.test.acme.internal"' % (t2.strftime('%Y/%m/%d %H:%M:%S'), b.rnd.randint(10000, 99999), 40 + i), 'error')
b.stream('public-api', pa, 9, lambda t, m, rnd, pod: ('INFO', '%s [INFO]  public-api: Handle Coffees: status=ok duration=%dms' % (hts(t), rnd.randint(6, 31))))
b.stream('public-api', pa, 0.5, lambda t, m, rnd, pod: ('ERROR', '%s [ERROR] public-api: Unable to make payment: error="payment failed: status=500"' % hts(t)) if rnd.random() < 0.3 else ('INFO', '%s [INFO]  public-api: Handle Pay: status=ok order_id=%d' % (hts(t), rnd.randint(100, 900))))
b.log(b.T(ON - 1, 30), 'pod-delete', job + '-' + h(5, 'j'), 'time="%s" level=info msg="[PreReq]: Getting the ENV for the experiment"' % iso(b.T(ON - 1, 30)), 'info')
b.log(b.T(ON - 1, 31), 'pod-delete', job + '-' + h(5, 'j'), 'time="%s" level=info msg="[Status]: Verify that the AUT (Application Under Test) is running (pre-chaos)"' % iso(b.T(ON - 1, 31)), 'info')
b.log(b.T(ON - 1, 45), 'pod-delete', job + '-' + h(5, 'j'), 'time="%s" level=info msg="[Probe]: frontend-availability probe has been Passed 😄 " ProbeName=frontend-availability ProbeType=httpProbe Phase=PreChaos' % iso(b.T(ON - 1, 45)), 'info')

b.rng('sum by (status) (rate(nginx_http_requests_total{namespace="hashicups", service="nginx"}[5m]))', 'nginx requests/s by status',
      [({'status': '200'}, noisy(14.1, .05)), ({'status': '304'}, noisy(2.2, .2)), ({'status': '502'}, lambda m, r: 0.02 * r.random() if m > ON else 0)])
b.rng('histogram_quantile(0.99, sum by (le) (rate(nginx_http_request_duration_seconds_bucket{namespace="hashicups", service="nginx"}[5m])))', 'nginx p99 latency (s)', [({}, lambda m, r: (0.041 if m < ON else 0.047) * (1 + r.uniform(-.1, .1)))])
b.rng('sum by (operation, status) (rate(graphql_requests_total{namespace="hashicups", service="public-api"}[5m]))', 'public-api GraphQL operations/s by status',
      [({'operation': 'coffees', 'status': 'ok'}, noisy(8.8)), ({'operation': 'pay', 'status': 'ok'}, noisy(0.35, .3)), ({'operation': 'pay', 'status': 'error'}, noisy(0.15, .5))])
b.rng('kube_deployment_status_replicas_available{namespace="hashicups", deployment="frontend"}', 'frontend available replicas', [({}, lambda m, r: 3 if m < ON or r.random() < 0.7 else 2)])
b.rng('sum(changes(kube_pod_created{namespace="hashicups", pod=~"frontend-.*"}[5m]))', 'frontend pod creations in last 5m', [({}, lambda m, r: 0 if m < ON + 1 else min(4, int((m - ON) / 1.5) + 1) if m < 50 else max(0, 4 - int(m - 49)))])
b.rng('probe_success{namespace="litmus", probe="frontend-availability"}', 'litmus continuous HTTP probe success', [({}, sometimes(const(1), lambda m: m >= ON - 0.3))])
cpu = {p: noisy(0.05) for p in fe + pa + pr}
mem = {p: noisy(MiB(96)) for p in fe}
mem.update({p: noisy(MiB(22)) for p in pa + pr})
res_metrics(b, 'hashicups', cpu, mem)

b.notes = '''
# flt-hashicups-ctl-pod-delete-gameday — CONTROL: scheduled Litmus pod-delete game day, no user impact

**Situation.** Litmus ChaosEngine `frontend-pod-delete` (label ticket GAMEDAY-42, TOTAL_CHAOS_DURATION 2400 s, CHAOS_INTERVAL 90 s,
PODS_AFFECTED_PERC 30, serial, graceful) started 15:09 and deletes one of three frontend pods every ~90 s. The ReplicaSet recreates
each pod in seconds; the PDB (minAvailable 2) is respected; the continuous httpProbe passes. Killing / SuccessfulCreate / readiness
"connection refused" events during start-up, pod churn alerts and a handful of nginx `connect() failed` upstream errors look alarming.

**Why benign.** nginx 200 rate and p99 unchanged (0.041 → 0.047 s); 502s ≈ 0.02/s at most; GraphQL ok; available replicas never below 2;
no other component touched. The payments 500s ("Unable to make payment") are the usual background and pre-date the game day.

**Expected.** There is no fault to root-cause for users: a correct answer says users are not (materially) affected and that the churn
is the planned chaos experiment; status `partial` or `refused`, nothing to `must_mention`.

**Provenance.** LitmusChaos `pod-delete` (TOTAL_CHAOS_DURATION, CHAOS_INTERVAL, PODS_AFFECTED_PERC, SEQUENCE, httpProbe Continuous).
App: hashicorp-demoapp HashiCups. Generated by /tmp/b8/c15.py (seed 1515).
'''
b.write()
