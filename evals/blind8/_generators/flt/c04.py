from lib import *

b = B('flt-piggymetrics-statistics-jvm', 'PiggyMetrics statistics page 500s', '2026-11-26T16:00', 60, 'test', 'test-k3s-lab2', 'piggymetrics',
      "piggymetrics test env: the statistics/overview chart on the dashboard fails for every user since ~16:24 (gateway returns 500 on /statistics/current). account save still works. mongo looks fine to me. root cause?",
      ['statistics-service', 'chaos'], seed=404)
ON = 24
b.nodes(['lab2-k3s-worker-%d' % i for i in (1, 2, 3)], zone_prefix='lab2-', kubelet='v1.30.6+k3s1', runtime='containerd://1.7.22-k3s1',
        os_image='Ubuntu 24.04.1 LTS', itype='k3s', cpu='8', mem='32780344Ki')
b.namespace('piggymetrics')
b.namespace('chaos-mesh')
L = lambda a: {'project': 'piggymetrics', 'app': a}
JAVA = {'requests': {'cpu': '200m', 'memory': '512Mi'}, 'limits': {'memory': '768Mi'}}
envc = {'CONFIG_SERVICE_PASSWORD': {'valueFrom': {'secretKeyRef': {'name': 'piggymetrics', 'key': 'config-password'}}}, 'SPRING_PROFILES_ACTIVE': 'test'}
gw = b.deploy('gateway', 'sqshq/piggymetrics-gateway:2.0.1', 2, 4000, labels=L('gateway'), env=envc, res=JAVA, probe={'httpGet': {'path': '/actuator/health', 'port': 4000}})
au = b.deploy('auth-service', 'sqshq/piggymetrics-auth-service:2.0.1', 1, 5000, labels=L('auth-service'), env=dict(envc, NOTIFICATION_SERVICE_PASSWORD='***', STATISTICS_SERVICE_PASSWORD='***', ACCOUNT_SERVICE_PASSWORD='***'), res=JAVA, probe={'httpGet': {'path': '/uaa/actuator/health', 'port': 5000}}, svc_port=5000)
ac = b.deploy('account-service', 'sqshq/piggymetrics-account-service:2.0.1', 2, 6000, labels=L('account-service'), env=dict(envc, ACCOUNT_SERVICE_PASSWORD='***'), res=JAVA, probe={'httpGet': {'path': '/accounts/actuator/health', 'port': 6000}}, svc_port=6000)
st = b.deploy('statistics-service', 'sqshq/piggymetrics-statistics-service:2.0.1', 2, 7000, labels=L('statistics-service'), env=dict(envc, STATISTICS_SERVICE_PASSWORD='***', MONGODB_PASSWORD='***'), res=JAVA, probe={'httpGet': {'path': '/statistics/actuator/health', 'port': 7000}}, svc_port=7000)
no = b.deploy('notification-service', 'sqshq/piggymetrics-notification-service:2.0.1', 1, 8000, labels=L('notification-service'), env=dict(envc, NOTIFICATION_SERVICE_PASSWORD='***'), res=JAVA, probe={'httpGet': {'path': '/notifications/actuator/health', 'port': 8000}}, svc_port=8000)
cf = b.deploy('config', 'sqshq/piggymetrics-config:2.0.1', 1, 8888, labels=L('config'), res=JAVA, probe={'httpGet': {'path': '/actuator/health', 'port': 8888}}, svc_port=8888)
rg = b.deploy('registry', 'sqshq/piggymetrics-registry:2.0.1', 1, 8761, labels=L('registry'), res=JAVA, probe={'httpGet': {'path': '/actuator/health', 'port': 8761}}, svc_port=8761)
dbs = {}
for d in ['auth-mongodb', 'account-mongodb', 'statistics-mongodb', 'notification-mongodb']:
    dbs[d] = b.deploy(d, 'sqshq/piggymetrics-mongodb:2.0.1', 1, 27017, labels=L(d), kind='StatefulSet', probe=False, svc_port=27017, env={'MONGODB_PASSWORD': '***'})
jc = b.obj('chaos', 'chaos-mesh.org/v1alpha1', 'JVMChaos', 'statistics-current-exception', ns='piggymetrics', created=b.T(ON - 1, 41),
           labels={'app.kubernetes.io/managed-by': 'chaos-dashboard'}, ann={'experiment.chaos-mesh.org/pause': 'false'},
           spec={'action': 'exception', 'class': 'com.piggymetrics.statistics.service.StatisticsServiceImpl', 'method': 'findByAccountName',
                 'exception': 'org.springframework.dao.DataAccessResourceFailureException("Timed out after 30000 ms while waiting for a server that matches ReadPreferenceServerSelector{readPreference=primary}")',
                 'mode': 'all', 'port': 9277, 'duration': '45m', 'selector': {'namespaces': ['piggymetrics'], 'labelSelectors': {'app': 'statistics-service'}}},
           status={'conditions': [{'type': 'Selected', 'status': 'True'}, {'type': 'AllInjected', 'status': 'True'},
                                  {'type': 'AllRecovered', 'status': 'False'}, {'type': 'Paused', 'status': 'False'}],
                   'experiment': {'desiredPhase': 'Run', 'containerRecords': [
                       {'id': 'piggymetrics/%s/statistics-service' % p, 'phase': 'Injected', 'selectorKey': '.',
                        'injectedCount': 1, 'recoveredCount': 0,
                        'events': [{'operation': 'Apply', 'type': 'Succeeded', 'timestamp': iso(b.T(ON - 1, 44 + i))}]} for i, p in enumerate(st)]}})
b.event('JVMChaos', 'statistics-current-exception', 'FinalizerInited', 'Finalizer has been inited', b.T(ON - 1, 41), component='finalizer', api='chaos-mesh.org/v1alpha1')
b.event('JVMChaos', 'statistics-current-exception', 'Updated', 'Successfully update finalizer of resource', b.T(ON - 1, 41), component='finalizer', api='chaos-mesh.org/v1alpha1')
b.event('JVMChaos', 'statistics-current-exception', 'Started', 'Experiment has started', b.T(ON - 1, 42), component='desiredphase', api='chaos-mesh.org/v1alpha1')
for i, p in enumerate(st):
    b.event('JVMChaos', 'statistics-current-exception', 'Applied', 'Successfully apply chaos for piggymetrics/%s/statistics-service' % p, b.T(ON - 1, 44 + i), component='records', api='chaos-mesh.org/v1alpha1')
b.event('Pod', no[0], 'Unhealthy', 'Readiness probe failed: Get "http://10.42.1.33:8000/notifications/actuator/health": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', b.T(9, 2), typ='Warning', field='spec.containers{notification-service}')
b.event('Deployment', 'account-service', 'ScalingReplicaSet', 'Scaled up replica set account-service-%s to 2 from 1' % h(10, b.case, 'account-service', 'rs'), b.T(6, 0), component='deployment-controller', api='apps/v1')


def sb(t, lvl, svc, th, logger, msg):
    return '%s %5s [%s,%s,%s,true] 1 --- [%15s] %-40s : %s' % (t.strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (t.microsecond // 1000), lvl, svc, '%s', '%s', th[-15:], logger[:40], msg)


def tr(rnd):
    x = rid(rnd, 16)
    return x, rid(rnd, 16)


def st_fn(t, m, rnd, pod):
    a, s = tr(rnd)
    th = 'nio-7000-exec-%d' % rnd.randint(1, 10)
    if rnd.random() < 0.55:
        if m >= ON:
            return ('ERROR', (sb(t, 'ERROR', 'statistics-service', th, 'o.a.c.c.C.[.[.[/statistics].[dispatcherServlet]', 'Servlet.service() for servlet [dispatcherServlet] in context with path [/statistics] threw exception [Request processing failed; nested exception is org.springframework.dao.DataAccessResourceFailureException: Timed out after 30000 ms while waiting for a server that matches ReadPreferenceServerSelector{readPreference=primary}] with root cause') % (a, s)) +
                    '\n\norg.springframework.dao.DataAccessResourceFailureException: Timed out after 30000 ms while waiting for a server that matches ReadPreferenceServerSelector{readPreference=primary}\n\tat com.piggymetrics.statistics.service.StatisticsServiceImpl.findByAccountName(StatisticsServiceImpl.java)\n\tat com.piggymetrics.statistics.controller.StatisticsController.getCurrentAccountStatistics(StatisticsController.java:22)\n\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:897)')
        return None
    return ('INFO', sb(t, 'INFO', 'statistics-service', th, 'c.p.s.service.StatisticsServiceImpl', 'new datapoint has been created: DataPointId{account=%s, date=%s}' % (rnd.choice(['demo', 'alice', 'bob.k', 'qa-user-%d' % rnd.randint(1, 40)]), t.strftime('%a %b %d 00:00:00 UTC %Y'))) % (a, s))


b.stream('statistics-service', st, 7, st_fn)


def ac_fn(t, m, rnd, pod):
    a, s = tr(rnd)
    return ('DEBUG', sb(t, 'DEBUG', 'account-service', 'nio-6000-exec-%d' % rnd.randint(1, 10), 'c.p.account.service.AccountServiceImpl', 'account %s changes has been saved' % rnd.choice(['demo', 'alice', 'bob.k', 'qa-user-%d' % rnd.randint(1, 40)])) % (a, s))


b.stream('account-service', ac, 3.5, ac_fn)


def no_fn(t, m, rnd, pod):
    a, s = tr(rnd)
    return ('ERROR', sb(t, 'ERROR', 'notification-service', 'pool-2-thread-1', 'c.p.n.service.NotificationServiceImpl', 'an error during remind notification for %s' % rnd.choice(['demo', 'alice', 'bob.k'])) % (a, s) +
            '\n\norg.springframework.mail.MailSendException: Mail server connection failed; nested exception is com.sun.mail.util.MailConnectException: Couldn\'t connect to host, port: smtp.gmail.com, 465; timeout -1;\n  nested exception is:\n\tjava.net.UnknownHostException: smtp.gmail.com\n\tat org.springframework.mail.javamail.JavaMailSenderImpl.doSend(JavaMailSenderImpl.java:448)')


b.stream('notification-service', no, 0.7, no_fn)


def gw_fn(t, m, rnd, pod):
    a, s = tr(rnd)
    if rnd.random() < 0.1:
        return ('WARN', sb(t, 'WARN', 'gateway', 'nio-4000-exec-%d' % rnd.randint(1, 10), 'o.s.c.n.zuul.web.ZuulHandlerMapping', 'No route found for uri: /favicon.ico') % (a, s))
    return None


b.stream('gateway', gw, 3, gw_fn)
for d, pods in dbs.items():
    def mfn(t, m, rnd, pod, d=d):
        if d == 'statistics-mongodb' and rnd.random() < 0.03 and m < ON:
            return ('I', json.dumps({"t": {"$date": iso(t, ms=True).replace('Z', '+00:00')}, "s": "I", "c": "COMMAND", "id": 51803, "ctx": "conn%d" % rnd.randint(20, 60), "msg": "Slow query", "attr": {"type": "command", "ns": "piggymetrics.datapoints", "command": {"find": "datapoints", "filter": {"_id.account": "demo"}}, "planSummary": "COLLSCAN", "docsExamined": 48211, "nreturned": 31, "durationMillis": rnd.randint(110, 240)}}))
        return ('I', json.dumps({"t": {"$date": iso(t, ms=True).replace('Z', '+00:00')}, "s": "I", "c": "NETWORK", "id": 22943, "ctx": "listener", "msg": "Connection accepted", "attr": {"remote": "%s:%d" % (ip(rnd, 42), rnd.randint(30000, 60000)), "connectionCount": rnd.randint(8, 14)}}))
    b.stream(d, pods, 0.5 if d != 'statistics-mongodb' else 2.5, mfn)

b.rng('sum by (uri, status) (rate(http_server_requests_seconds_count{namespace="piggymetrics", service="gateway"}[5m]))', 'gateway requests/s by route and status',
      [({'uri': '/statistics/current', 'status': '200'}, step_fn(2.1, 0, ON + 1)), ({'uri': '/statistics/current', 'status': '500'}, step_fn(0, 2.1, ON + 1)),
       ({'uri': '/accounts/current', 'status': '200'}, noisy(3.4)), ({'uri': '/uaa/oauth/token', 'status': '200'}, noisy(0.6)),
       ({'uri': '/accounts/current', 'status': '401'}, noisy(0.05, .6))])
b.rng('histogram_quantile(0.99, sum by (le, uri) (rate(http_server_requests_seconds_bucket{namespace="piggymetrics", service="statistics-service"}[5m])))', 'statistics-service p99 latency (s) by uri',
      [({'uri': '/current'}, step_fn(0.061, 0.009, ON + 1, rel=.15)), ({'uri': '/{accountName}'}, noisy(0.048, .15))])
b.rng('sum by (uri, status) (rate(http_server_requests_seconds_count{namespace="piggymetrics", service="statistics-service"}[5m]))', 'statistics-service requests/s by uri and status',
      [({'uri': '/current', 'status': '200'}, step_fn(2.1, 0, ON + 1)), ({'uri': '/current', 'status': '500'}, step_fn(0, 2.1, ON + 1)),
       ({'uri': '/{accountName}', 'status': '200'}, noisy(1.7))])
b.rng('sum by (pod) (rate(mongodb_op_counters_total{namespace="piggymetrics", service="statistics-mongodb-metrics"}[5m]))', 'statistics-mongodb operations/s',
      [({'pod': dbs['statistics-mongodb'][0]}, step_fn(6.2, 2.3, ON + 1))])
b.rng('mongodb_up{namespace="piggymetrics"}', 'mongodb exporter up', [({'pod': p[0]}, const(1)) for p in dbs.values()])
cpu = {p: noisy(0.12) for p in gw + ac + st + no}
mem = {p: noisy(MiB(488), .02) for p in gw + ac + st + no}
for p in st:
    mem[p] = step_fn(MiB(471), MiB(503), ON - 1, rel=.01)
res_metrics(b, 'piggymetrics', cpu, mem)

b.notes = '''
# flt-piggymetrics-statistics-jvm — Chaos Mesh JVMChaos throws an exception in statistics-service

**Incident.** A Chaos Mesh `JVMChaos` `statistics-current-exception` (action `exception`, class
`com.piggymetrics.statistics.service.StatisticsServiceImpl`, method `findByAccountName`, all statistics-service pods, 45 m) was
created at 16:23:41Z and applied to both pods at 16:23:44–45Z. The injected exception is a
`DataAccessResourceFailureException("Timed out after 30000 ms ...")`, so it *looks* like a MongoDB outage, but it is thrown
immediately by the Byteman rule.

**Chain.** gateway 500 on `/statistics/current` from 16:24 (metrics) → statistics-service ERROR stack traces with
`DataAccessResourceFailureException ... StatisticsServiceImpl.findByAccountName` (logs) → but statistics-service p99 latency
*drops* to ~9 ms (a real 30 s server-selection timeout would take 30 s), statistics-mongodb is up, accepts connections and keeps
serving `/{accountName}` updates (metrics, logs) → `k8s/chaos.yaml` JVMChaos with containerRecords Injected, events `Applied`.

**Decoys.** notification-service `MailSendException` (no SMTP in test) all window; statistics-mongodb slow COLLSCAN query before onset;
notification readiness timeout before onset; account-service scaled 1→2 at 16:06 (routine); gateway favicon route warnings.

**must_mention:** `statistics-service`, `chaos` (JVMChaos / chaos experiment — blaming MongoDB is wrong).

**Provenance.** Chaos Mesh JVMChaos `action: exception` (class/method/exception/port fields, Byteman-based). App: sqshq/piggymetrics
(gateway Zuul :4000, auth-service :5000, account-service :6000, statistics-service :7000 with `/statistics/current`,
notification-service :8000, config, registry, per-service MongoDB). Generated by /tmp/b8/c04.py (seed 404).
'''
b.write()
