from lib import *

b = B('flt-yelb-appserver-cpu', 'Yelb UI slow and intermittent 504s', '2026-11-30T13:00', 60, 'staging', 'stg-eks-use2', 'yelb',
      "FIRING: YelbUILatencyHigh — p99 of yelb-ui /api/* above 2s since 13:27 (staging). some 504s from nginx too. no deploys today. what's the cause?",
      ['yelb-appserver', 'cpu'], seed=606)
ON = 26
b.nodes(['ip-10-61-%d-%d.us-east-2.compute.internal' % (x, y) for x, y in [(11, 201), (27, 14), (44, 92)]], zone_prefix='us-east-2')
b.namespace('yelb')
ui = b.deploy('yelb-ui', 'mreferre/yelb-ui:0.10', 2, 80, labels={'app': 'yelb-ui', 'tier': 'frontend'}, probe={'httpGet': {'path': '/', 'port': 80}},
              env={'UI_ENV': 'prod'})
ap = b.deploy('yelb-appserver', 'mreferre/yelb-appserver:0.7', 1, 4567, labels={'app': 'yelb-appserver', 'tier': 'middletier'},
              probe={'httpGet': {'path': '/api/hostname', 'port': 4567}}, svc_port=4567,
              env={'RACK_ENV': 'custom', 'YELB_DB_SERVER_ENDPOINT': 'yelb-db', 'REDIS_SERVER_ENDPOINT': 'redis-server', 'YELB_DDB_RESTAURANTS': ''},
              res={'requests': {'cpu': '250m', 'memory': '128Mi'}, 'limits': {'cpu': '500m', 'memory': '256Mi'}})
rd = b.deploy('redis-server', 'redis:4.0.2', 1, 6379, labels={'app': 'redis-server', 'tier': 'cache'}, probe=False, svc_port=6379)
db = b.deploy('yelb-db', 'mreferre/yelb-db:0.6', 1, 5432, labels={'app': 'yelb-db', 'tier': 'backenddb'}, probe=False, svc_port=5432)
# other namespace batch job on another node (decoy)
bj = b.pod('reports-nightly-backfill-28881060-' + h(5, 'bj'), 'analytics', {'job-name': 'reports-nightly-backfill-28881060'},
           {'containers': [{'name': 'backfill', 'image': '123456789012.dkr.ecr.us-east-2.amazonaws.com/analytics/backfill:2026.11.3',
                            'resources': {'requests': {'cpu': '2', 'memory': '2Gi'}, 'limits': {'cpu': '3', 'memory': '3Gi'}}}], 'restartPolicy': 'Never'},
           b.node_names[2], owner=('batch/v1', 'Job', 'reports-nightly-backfill-28881060'), created=b.T(4, 0))
b.event('Job', 'reports-nightly-backfill-28881060', 'SuccessfulCreate', 'Created pod: %s' % bj['metadata']['name'], b.T(4, 0), component='job-controller', ns='analytics', api='batch/v1')
b.event('Pod', ap[0], 'Unhealthy', 'Readiness probe failed: Get "http://10.61.27.55:4567/api/hostname": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', b.T(ON + 2, 13), last=b.T(57, 3), count=23, typ='Warning', field='spec.containers{yelb-appserver}')
b.event('Pod', ap[0], 'Unhealthy', 'Liveness probe failed: Get "http://10.61.27.55:4567/api/hostname": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', b.T(ON + 4, 43), last=b.T(51, 13), count=6, typ='Warning', field='spec.containers{yelb-appserver}')

EP = ['/api/getvotes', '/api/pageviews', '/api/hostname', '/api/getstats', '/api/outback', '/api/ihop', '/api/chipotle', '/api/bucadibeppo']


def lat(m, rnd):
    if m < ON:
        return rnd.uniform(0.006, 0.06)
    return rnd.uniform(0.3, 2.0) if rnd.random() < 0.6 else rnd.uniform(2.0, 6.5)


def ui_fn(t, m, rnd, pod):
    p = rnd.choices(EP + ['/', '/main.bundle.js'], [4, 3, 2, 2, 1, 1, 1, 1, 2, 1])[0]
    if p.startswith('/api'):
        l = lat(m, rnd)
        code = 200
        if l > 5:
            code = 504
        out = [(None, '%s - - [%s] "GET %s HTTP/1.1" %d %d "http://yelb.stg.acme.internal/" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" rt=%.3f' % (ip(rnd, 61), t.strftime('%d/%b/%Y:%H:%M:%S +0000'), p, code, 167 if code == 504 else rnd.randint(20, 200), min(l, 5.0)))]
        if code == 504:
            out.append(('error', '%s [error] 29#29: *%d upstream timed out (110: Connection timed out) while reading response header from upstream, client: %s, server: localhost, request: "GET %s HTTP/1.1", upstream: "http://172.20.133.41:4567%s", host: "yelb.stg.acme.internal"' % (t.strftime('%Y/%m/%d %H:%M:%S'), rnd.randint(10000, 99999), ip(rnd, 61), p, p)))
        return out
    return (None, '%s - - [%s] "GET %s HTTP/1.1" 200 %d "-" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" rt=0.000' % (ip(rnd, 61), t.strftime('%d/%b/%Y:%H:%M:%S +0000'), p, rnd.randint(600, 290000)))


b.stream('yelb-ui', ui, 16, ui_fn)


def ap_fn(t, m, rnd, pod):
    p = rnd.choice(EP)
    l = lat(m, rnd)
    return ('INFO', '%s - - [%s] "GET %s HTTP/1.1" 200 %d %.4f' % (ip(rnd, 61), t.strftime('%d/%b/%Y:%H:%M:%S'), p, rnd.randint(20, 200), l))


b.stream('yelb-appserver', ap, 11, ap_fn)
b.log(b.T(0, 30), 'redis-server', rd[0], '1:M %s # WARNING: The TCP backlog setting of 511 cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of 128.' % b.T(0, 30).strftime('%d %b %H:%M:%S.123'), 'WARNING')
for mm in range(3, 60, 9):
    b.log(b.T(mm, 40), 'yelb-db', db[0], '%s UTC [%d] LOG:  automatic vacuum of table "yelbdatabase.public.restaurants": index scans: 0\n\tpages: 0 removed, 1 remain, 0 scanned (0.00%% of total)\n\ttuples: 0 removed, 8 remain, 0 are dead but not yet removable' % (b.T(mm, 40).strftime('%Y-%m-%d %H:%M:%S.%f')[:-3], 2000 + mm), 'LOG')
b.stream('reports-nightly-backfill', [bj['metadata']['name']], 1, lambda t, m, rnd, pod: ('INFO', '%s INFO backfill: processed partition dt=2026-11-%02d rows=%d elapsed=%.1fs' % (iso(t), rnd.randint(1, 29), rnd.randint(100000, 900000), rnd.uniform(20, 90))), ns='analytics')

b.rng('histogram_quantile(0.99, sum by (le) (rate(nginx_ingress_controller_request_duration_seconds_bucket{namespace="yelb", service="yelb-ui", path="/api"}[5m])))', 'yelb-ui /api p99 latency (s)',
      [({}, step_fn(0.071, 4.9, ON + 1, rel=.07))])
b.rng('sum by (status) (rate(nginx_ingress_controller_requests{namespace="yelb", service="yelb-ui"}[5m]))', 'yelb-ui requests/s by status',
      [({'status': '200'}, step_fn(16.0, 14.3, ON + 1)), ({'status': '504'}, step_fn(0, 1.7, ON + 1, rel=.2)), ({'status': '304'}, noisy(1.1, .2))])
b.rng('sum by (pod) (rate(container_cpu_cfs_throttled_periods_total{namespace="yelb", container="yelb-appserver"}[5m])) / sum by (pod) (rate(container_cpu_cfs_periods_total{namespace="yelb", container="yelb-appserver"}[5m]))', 'yelb-appserver CPU throttled ratio',
      [({'pod': ap[0]}, step_fn(0.01, 0.93, ON, rel=.04))])
b.rng('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="yelb", container="yelb-appserver"}[5m])) / sum by (pod) (kube_pod_container_resource_limits{namespace="yelb", container="yelb-appserver", resource="cpu"})', 'yelb-appserver CPU usage / limit',
      [({'pod': ap[0]}, step_fn(0.09, 0.998, ON, rel=.004))])
b.rng('sum by (pod) (container_processes{namespace="yelb", container="yelb-appserver"})', 'yelb-appserver process count in container',
      [({'pod': ap[0]}, step_fn(3, 5, ON, rel=0))])
b.rng('1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m]))', 'node CPU utilisation by instance',
      [({'instance': b.node_names[0]}, noisy(0.21)), ({'instance': b.node_names[1]}, step_fn(0.18, 0.33, ON)), ({'instance': b.node_names[2]}, step_fn(0.22, 0.74, 4))])
cpu = {p: noisy(0.02) for p in ui}
cpu[ap[0]] = step_fn(0.045, 0.499, ON, rel=.003)
cpu[rd[0]] = noisy(0.004)
cpu[db[0]] = noisy(0.006)
mem = {p: noisy(MiB(6)) for p in ui}
mem[ap[0]] = step_fn(MiB(61), MiB(69), ON, rel=.02)
mem[rd[0]] = noisy(MiB(3))
mem[db[0]] = noisy(MiB(28))
res_metrics(b, 'yelb', cpu, mem)

b.notes = '''
# flt-yelb-appserver-cpu — CPU hog inside yelb-appserver (500m limit), CFS throttling

**Incident.** At ~13:26 a CPU-stress process (Litmus `pod-cpu-hog`, injected from the `litmus` namespace, not captured) started
inside the `yelb-appserver` container. The container has `limits.cpu: 500m`; the stressor consumes the whole quota, the Ruby
appserver is CFS-throttled (~93 % of periods) and request latency goes from tens of ms to seconds; nginx in yelb-ui hits its 5 s
proxy timeout on some calls (504).

**Chain.** YelbUILatencyHigh / 504s (metrics; yelb-ui access log and `upstream timed out` errors) → yelb-appserver requests still 200
but slow (appserver access log durations) → appserver CPU usage/limit ≈ 1.0, throttled ratio ~0.93, container process count 3 → 5
from 13:26 with no change in request rate (metrics) → readiness/liveness probe timeouts on the appserver pod (events). No deploy,
no restarts; redis and db idle.

**Decoys.** analytics `reports-nightly-backfill` job drives node 3 to 74 % CPU from 13:04 (different node, no yelb pods affected);
redis somaxconn warning; postgres autovacuum logs.

**must_mention:** `yelb-appserver`, `cpu`.

**Provenance.** LitmusChaos `pod-cpu-hog` (CPU_CORES / stress-ng in the target container cgroup); RCAEval/AIOpsLab CPU-stress faults.
App: mreferre/yelb (yelb-ui nginx+Angular :80, yelb-appserver Sinatra :4567 with /api/getvotes, /api/pageviews, redis-server,
yelb-db postgres). Generated by /tmp/b8/c06.py (seed 606).
'''
b.write()
