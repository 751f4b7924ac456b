from lib import *

b = B('flt-voting-vote-dns-error', 'voting app: votes fail with 500', '2026-12-08T11:00', 60, 'test', 'test-kind-ci3', 'vote',
      "example-voting-app in test: submitting a vote returns 500 since ~11:18 and the result page numbers stopped moving. the vote page itself loads fine. redis pod looks healthy. what broke?",
      ['dns'], seed=505)
ON = 18
b.nodes(['ci3-worker', 'ci3-worker2', 'ci3-worker3'], zone_prefix='local-', kubelet='v1.31.2', runtime='containerd://1.7.18',
        os_image='Debian GNU/Linux 12 (bookworm)', itype='kind', cpu='8', mem='32780344Ki')
b.namespace('vote')
b.namespace('litmus')
vo = b.deploy('vote', 'dockersamples/examplevotingapp_vote:latest', 2, 80, labels={'app': 'vote'}, probe={'httpGet': {'path': '/', 'port': 80}},
              env={'OPTION_A': 'Cats', 'OPTION_B': 'Dogs'})
rd = b.deploy('redis', 'redis:7.4-alpine', 1, 6379, labels={'app': 'redis'}, probe={'exec': {'command': ['redis-cli', 'ping']}}, svc_port=6379)
wk = b.deploy('worker', 'dockersamples/examplevotingapp_worker:latest', 1, None, labels={'app': 'worker'}, svc=False)
db = b.deploy('db', 'postgres:15-alpine', 1, 5432, labels={'app': 'db'}, probe={'exec': {'command': ['pg_isready', '-U', 'postgres']}}, svc_port=5432,
              env={'POSTGRES_USER': 'postgres', 'POSTGRES_PASSWORD': 'postgres'})
rs = b.deploy('result', 'dockersamples/examplevotingapp_result:latest', 1, 80, labels={'app': 'result'}, probe={'httpGet': {'path': '/', 'port': 80}})
job = 'pod-dns-error-' + h(6, 'job')
hp = 'pod-dns-error-helper-' + h(5, 'hp')
b.pod('vote-dns-chaos-runner', 'vote', {'app': 'vote-dns-chaos', 'app.kubernetes.io/part-of': 'litmus'}, {'containers': [{'name': 'chaos-runner', 'image': 'litmuschaos/chaos-runner:3.11.0'}], 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
      b.node_names[0], owner=('litmuschaos.io/v1alpha1', 'ChaosEngine', 'vote-dns-chaos'), created=b.T(ON - 1, 5))
b.pod(job + '-' + h(5, 'j'), 'vote', {'job-name': job, 'name': 'pod-dns-error', 'app.kubernetes.io/part-of': 'litmus'}, {'containers': [{'name': 'pod-dns-error', 'image': 'litmuschaos.docker.scarf.sh/litmuschaos/go-runner:3.11.0'}], 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
      b.node_names[0], owner=('batch/v1', 'Job', job), created=b.T(ON - 1, 14))
for i, p in enumerate(vo):
    b.pod(hp + str(i), 'vote', {'app': 'pod-dns-error-helper', 'app.kubernetes.io/part-of': 'litmus'}, {'containers': [{'name': 'helper', 'image': 'litmuschaos.docker.scarf.sh/litmuschaos/go-runner:3.11.0', 'command': ['/bin/bash', '-c', './helpers -name dns-chaos']}], 'hostPID': True, 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
          b.node_names[(i + 4) % 3], owner=('batch/v1', 'Job', job), created=b.T(ON - 1, 30))
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosEngine', 'vote-dns-chaos', ns='vote', created=b.T(ON - 1, 3),
      spec={'engineState': 'active', 'annotationCheck': 'false', 'chaosServiceAccount': 'litmus-admin', 'jobCleanUpPolicy': 'retain',
            'appinfo': {'appns': 'vote', 'applabel': 'app=vote', 'appkind': 'deployment'},
            'experiments': [{'name': 'pod-dns-error', 'spec': {'components': {'env': [
                {'name': 'TARGET_CONTAINER', 'value': 'vote'}, {'name': 'TARGET_HOSTNAMES', 'value': '["redis"]'},
                {'name': 'MATCH_SCHEME', 'value': 'substring'}, {'name': 'TOTAL_CHAOS_DURATION', 'value': '3000'},
                {'name': 'PODS_AFFECTED_PERC', 'value': '100'}, {'name': 'CONTAINER_RUNTIME', 'value': 'containerd'},
                {'name': 'SOCKET_PATH', 'value': '/run/containerd/containerd.sock'}]}}}]},
      status={'engineStatus': 'initialized', 'experiments': [{'name': 'pod-dns-error', 'runner': 'vote-dns-chaos-runner', 'experimentPod': job,
                                                              'status': 'Running', 'verdict': 'Awaited', 'lastUpdateTime': iso(b.T(ON, 1))}]})
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosResult', 'vote-dns-chaos-pod-dns-error', ns='vote', created=b.T(ON - 1, 20),
      spec={'engine': 'vote-dns-chaos', 'experiment': 'pod-dns-error'},
      status={'experimentStatus': {'phase': 'Running', 'verdict': 'Awaited', 'probeSuccessPercentage': 'Awaited'},
              'history': {'passedRuns': 0, 'failedRuns': 0, 'stoppedRuns': 1, 'targets': [{'name': 'vote', 'kind': 'deployment', 'chaosStatus': 'targeted'}]}})
b.event('ChaosEngine', 'vote-dns-chaos', 'ChaosEngineInitialized', 'Identifying app under test & launching vote-dns-chaos-runner', b.T(ON - 1, 4), component='chaos-operator', api='litmuschaos.io/v1alpha1')
b.event('ChaosEngine', 'vote-dns-chaos', 'ExperimentJobCreate', 'Experiment Job %s for Chaos Experiment: pod-dns-error' % job, b.T(ON - 1, 13), component='chaos-runner', api='litmuschaos.io/v1alpha1')
b.event('ChaosEngine', 'vote-dns-chaos', 'PreChaosCheck', 'AUT: Running', b.T(ON - 1, 25), component=job + '-' + h(5, 'j'), api='litmuschaos.io/v1alpha1')
for p in vo:
    b.event('Pod', p, 'ChaosInject', 'Injecting pod-dns-error chaos on application pod', b.T(ON - 1, 40), component=job + '-' + h(5, 'j'))
b.event('Pod', wk[0], 'BackOff', 'Back-off restarting failed container worker in pod %s' % wk[0], b.ago(minutes=50), typ='Warning', field='spec.containers{worker}')
b.event('Pod', 'coredns-7db6d8ff4d-9xk2p', 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', b.T(33, 9), typ='Warning', ns='kube-system', field='spec.containers{coredns}')
for i in (1, 2):
    b.log(b.T(ON - 1, 41 + i), 'pod-dns-error-helper', hp + str(i - 1), 'time="%s" level=info msg="[Chaos]: Starting dns interceptor, targetHostnames: [\\"redis\\"], matchScheme: substring, chaosType: error"' % iso(b.T(ON - 1, 41 + i)), 'info')
b.log(b.T(ON, 3), 'pod-dns-error-helper', hp + '0', 'time="%s" level=info msg="[Wait]: Waiting for 3000s"' % iso(b.T(ON, 3)), 'info')

v = {'n': 0}


def vote_fn(t, m, rnd, pod):
    pid = rnd.choice([8, 9, 10, 11])
    ts = t.strftime('[%Y-%m-%d %H:%M:%S +0000]')
    acc = t.strftime('%d/%b/%Y:%H:%M:%S +0000')
    c = ip(rnd, 244)
    ua = '"http://vote.test.local/" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"'
    if rnd.random() < 0.35:
        return ('INFO', '%s - - [%s] "GET / HTTP/1.1" 200 1289 "-" "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"' % (c, acc))
    choice = rnd.choice('ab')
    if m >= ON:
        return [('ERROR', '%s [%d] [ERROR] Exception on / [POST]\nTraceback (most recent call last):\n  File "/usr/local/lib/python3.11/site-packages/redis/connection.py", line 357, in connect\n    sock = self.retry.call_with_retry(\n  File "/usr/local/lib/python3.11/site-packages/redis/connection.py", line 709, in _connect\n    for res in socket.getaddrinfo(\nsocket.gaierror: [Errno -2] Name or service not known\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File "/usr/local/lib/python3.11/site-packages/flask/app.py", line 1511, in wsgi_app\n    response = self.full_dispatch_request()\n  File "/app/app.py", line 37, in hello\n    redis.rpush(\'votes\', data)\nredis.exceptions.ConnectionError: Error -2 connecting to redis:6379. Name or service not known.' % (ts, pid)),
                ('INFO', '%s - - [%s] "POST / HTTP/1.1" 500 265 %s' % (c, acc, ua))]
    return [('INFO', '%s [%d] [INFO] Received vote for %s' % (ts, pid, choice)),
            ('INFO', '%s - - [%s] "POST / HTTP/1.1" 200 1412 %s' % (c, acc, ua))]


b.stream('vote', vo, 9, vote_fn)


def wk_fn(t, m, rnd, pod):
    if m >= ON + 0.05:
        return None
    return ('INFO', "Processing vote for '%s' by '%s'" % (rnd.choice('ab'), rid(rnd, 15)))


b.stream('worker', wk, 5.5, wk_fn)


def rd_fn(t, m, rnd, pod):
    return ('NOTICE', '1:M %s * 100 changes in 300 seconds. Saving...' % t.strftime('%d %b %Y %H:%M:%S.') + '%03d' % (t.microsecond // 1000)) if m < ON else None


for mm in range(0, 60, 5):
    if mm < ON:
        t = b.T(mm, 11)
        b.log(t, 'redis', rd[0], '1:M %s * 100 changes in 300 seconds. Saving...' % (t.strftime('%d %b %Y %H:%M:%S.') + '204'), 'NOTICE')
        b.log(t + dt.timedelta(milliseconds=2), 'redis', rd[0], '1:M %s * Background saving started by pid %d' % (t.strftime('%d %b %Y %H:%M:%S.') + '206', 400 + mm), 'NOTICE')
        b.log(t + dt.timedelta(milliseconds=60), 'redis', rd[0], '%d:C %s * DB saved on disk' % (400 + mm, t.strftime('%d %b %Y %H:%M:%S.') + '266'), 'NOTICE')


def res_fn(t, m, rnd, pod):
    return ('info', '%s Connected to db' % '') if False else None


b.log(b.ago(minutes=48), 'worker', wk[0], 'Waiting for db', 'INFO')
b.log(b.ago(minutes=47, ), 'worker', wk[0], 'Connected to db', 'INFO')
b.log(b.ago(minutes=47), 'worker', wk[0], 'Found redis at 10.96.140.22', 'INFO')


def cd_fn(t, m, rnd, pod):
    return ('ERROR', '[ERROR] plugin/errors: 2 %s. A: read udp 10.244.0.3:%d->172.18.0.1:53: i/o timeout' % (rnd.choice(['api.segment.io', 'update.traefik.io', 'ghcr.io']), rnd.randint(30000, 60000)))


b.stream('coredns', ['coredns-7db6d8ff4d-9xk2p', 'coredns-7db6d8ff4d-tz5hw'], 0.4, cd_fn, ns='kube-system')
b.stream('result', rs, 0.1, lambda t, m, rnd, pod: ('info', 'Tue, %s GMT body-parser deprecated undefined extended: provide extended option at server.js:60:17' % t.strftime('%d %b %Y %H:%M:%S')) if rnd.random() < 0.2 else None)

b.rng('sum by (method, status) (rate(flask_http_request_total{namespace="vote", app="vote"}[5m]))', 'vote requests/s by method and status',
      [({'method': 'GET', 'status': '200'}, noisy(3.2)), ({'method': 'POST', 'status': '200'}, step_fn(5.9, 0, ON + 1)),
       ({'method': 'POST', 'status': '500'}, step_fn(0, 5.9, ON + 1))])
b.rng('histogram_quantile(0.99, sum by (le) (rate(flask_http_request_duration_seconds_bucket{namespace="vote", app="vote", method="POST"}[5m])))', 'vote POST p99 latency (s)',
      [({}, step_fn(0.012, 0.019, ON + 1, rel=.15))])
b.rng('redis_list_length{namespace="vote", key="votes"}', 'redis votes queue length', [({}, const(0))])
b.rng('sum(rate(redis_commands_processed_total{namespace="vote"}[5m]))', 'redis commands/s', [({}, step_fn(17.8, 5.1, ON + 1))])
b.rng('sum(rate(coredns_dns_responses_total{namespace="kube-system", rcode="NXDOMAIN"}[5m]))', 'cluster CoreDNS NXDOMAIN responses/s', [({}, noisy(4.1, .15))])
b.rng('sum by (rcode) (rate(coredns_dns_responses_total{namespace="kube-system"}[5m]))', 'cluster CoreDNS responses/s by rcode',
      [({'rcode': 'NOERROR'}, noisy(61, .08)), ({'rcode': 'NXDOMAIN'}, noisy(4.1, .15)), ({'rcode': 'SERVFAIL'}, noisy(0.07, .5))])
b.rng('sum(rate(pg_stat_user_tables_n_tup_ins{namespace="vote", relname="votes"}[5m])) + sum(rate(pg_stat_user_tables_n_tup_upd{namespace="vote", relname="votes"}[5m]))', 'postgres votes table writes/s',
      [({}, step_fn(5.7, 0, ON + 1))])
cpu = {p: noisy(0.03) for p in vo}
cpu[rd[0]] = step_fn(0.012, 0.006, ON)
cpu[wk[0]] = step_fn(0.04, 0.02, ON)
cpu[db[0]] = noisy(0.01)
mem = {p: noisy(MiB(71), .02) for p in vo}
mem[rd[0]] = noisy(MiB(9), .03)
mem[wk[0]] = noisy(MiB(64), .02)
mem[db[0]] = noisy(MiB(52), .02)
res_metrics(b, 'vote', cpu, mem, {wk[0]: const(3)})

b.notes = '''
# flt-voting-vote-dns-error — Litmus pod-dns-error makes `redis` unresolvable from the vote pods

**Incident.** Litmus ChaosEngine `vote-dns-chaos` (experiment `pod-dns-error`, TARGET_HOSTNAMES `["redis"]`, MATCH_SCHEME substring,
3000 s) was started 11:17:03Z; helpers injected the DNS interceptor into both vote pods at ~11:17:40–11:18. The vote app opens a
Redis connection per request (`Redis(host="redis")`), so every POST fails with `socket.gaierror: [Errno -2] Name or service not known`
→ `redis.exceptions.ConnectionError: Error -2 connecting to redis:6379` → 500. GET / doesn't touch Redis and still works; the worker
gets nothing to process so the result page freezes.

**Chain.** vote POST 500 (metrics `flask_http_request_total`, gunicorn access log) → Flask traceback with getaddrinfo failure (logs)
→ redis healthy, commands/s drop, worker stops logging "Processing vote", postgres writes stop (metrics/logs) → cluster CoreDNS
responses unchanged (the failure is pod-local) → `k8s/chaos.yaml` ChaosEngine/ChaosResult, helper pods, ChaosInject events, helper logs.

**Decoys.** CoreDNS upstream i/o timeout errors for external names and a CoreDNS readiness blip at 11:33 (unrelated to `redis`);
worker restarted 3 times before the window ("Waiting for db"); Redis background-save notices; result body-parser deprecation.

**must_mention:** `dns`.

**Provenance.** LitmusChaos `pod-dns-error` (TARGET_HOSTNAMES, MATCH_SCHEME, dns interceptor helper); DNS faults in AIOpsLab/RCAEval.
App: dockersamples/example-voting-app (vote Flask/gunicorn :80 with OPTION_A/OPTION_B, redis, .NET worker, postgres db, Node result).
Generated by /tmp/b8/c05.py (seed 505).
'''
b.write()
