from lib import *

b = B('flt-booksapp-authors-http-status', 'booksapp webapp 500s on author and book pages', '2026-11-19T14:00', 60, 'staging',
      'stg-gke-ew4', 'booksapp',
      "booksapp webapp (staging) is throwing a lot more 500s since about 14:12 — book pages and the authors list. the books service always has some errors but this looks different. what changed?",
      ['authors'], seed=303)
ON = 12
b.nodes(['gke-stg-ew4-pool-apps-8c1b2f4e-%s' % x for x in ('4jqm', 'k8vd', 'x2sl')], zone_prefix='europe-west4-', kubelet='v1.30.5-gke.1443001',
        runtime='containerd://1.7.23', os_image='Container-Optimized OS from Google', itype='e2-standard-4')
b.namespace('booksapp', {'linkerd.io/inject': 'enabled'})
b.namespace('litmus')
lp = {'name': 'linkerd-proxy', 'image': 'cr.l5d.io/linkerd/proxy:edge-24.11.3', 'ports': [{'containerPort': 4143, 'name': 'linkerd-proxy'}, {'containerPort': 4191, 'name': 'linkerd-admin'}],
      'resources': {'requests': {'cpu': '10m', 'memory': '20Mi'}}}
IMG = 'buoyantio/booksapp:v0.0.5'
ann = {'linkerd.io/inject': 'enabled'}
wa = b.deploy('webapp', IMG, 3, 7000, args=['prod:webapp'], env={'DATABASE_URL': 'mysql2://booksapp:booksapp@mysql:3306/booksapp_production', 'AUTHOR_SITE': 'http://authors:7001', 'BOOK_SITE': 'http://books:7002'},
              probe={'httpGet': {'path': '/ping', 'port': 7000}}, extra_containers=[lp], svc_port=7000)
au = b.deploy('authors', IMG, 1, 7001, args=['prod:authors'], env={'DATABASE_URL': 'mysql2://booksapp:booksapp@mysql:3306/booksapp_production', 'BOOK_SITE': 'http://books:7002', 'FAILURE_RATE': '0'},
              probe={'httpGet': {'path': '/ping', 'port': 7001}}, extra_containers=[lp], svc_port=7001,
              ann={'litmuschaos.io/chaos': 'true'})
bo = b.deploy('books', IMG, 1, 7002, args=['prod:books'], env={'DATABASE_URL': 'mysql2://booksapp:booksapp@mysql:3306/booksapp_production', 'AUTHOR_SITE': 'http://authors:7001', 'FAILURE_RATE': '0.1'},
              probe={'httpGet': {'path': '/ping', 'port': 7002}}, extra_containers=[lp], svc_port=7002)
tr = b.deploy('traffic', 'buoyantio/booksapp-traffic:v0.0.3', 1, None, args=['-sleep=100ms', 'webapp:7000'], svc=False, extra_containers=[lp])
my = b.deploy('mysql', 'mysql:5.7', 1, 3306, kind='StatefulSet', probe=False, svc_port=3306)
# litmus
hp = 'pod-http-status-code-helper-' + h(5, 'hp')
for p, lbl in [('authors-http-chaos-runner', {'app': 'authors-http-chaos', 'chaosUID': uid('ce'), 'app.kubernetes.io/part-of': 'litmus'}),
               ('pod-http-status-code-' + h(6, 'job') + '-' + h(5, 'j2'), {'job-name': 'pod-http-status-code-' + h(6, 'job'), 'name': 'pod-http-status-code', 'app.kubernetes.io/part-of': 'litmus'}),
               (hp, {'app': 'pod-http-status-code-helper', 'name': 'pod-http-status-code-helper-' + h(5, 'hp'), 'app.kubernetes.io/part-of': 'litmus'})]:
    b.pod(p, 'booksapp', lbl, {'containers': [{'name': 'chaos-runner' if 'runner' in p else ('helper' if 'helper' in p else 'pod-http-status-code'),
                                              'image': 'litmuschaos/chaos-runner:3.11.0' if 'runner' in p else 'litmuschaos.docker.scarf.sh/litmuschaos/go-runner:3.11.0'}],
                               'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'}, b.node_names[1 if 'helper' not in p else (1 + len('authors')) % 3],
          owner=('batch/v1', 'Job', 'pod-http-status-code-' + h(6, 'job')) if 'helper' not in p and 'runner' not in p else ('litmuschaos.io/v1alpha1', 'ChaosEngine', 'authors-http-chaos'),
          created=b.T(ON - 1, 20 if 'runner' in p else (31 if 'helper' not in p else 52)))
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosEngine', 'authors-http-chaos', ns='booksapp', created=b.T(ON - 1, 18),
      labels={'context': 'staging-gameday', 'workflow_name': 'booksapp-resilience'},
      spec={'engineState': 'active', 'annotationCheck': 'false', 'chaosServiceAccount': 'litmus-admin', 'jobCleanUpPolicy': 'retain',
            'appinfo': {'appns': 'booksapp', 'applabel': 'app=authors', 'appkind': 'deployment'},
            'experiments': [{'name': 'pod-http-status-code', 'spec': {'components': {'env': [
                {'name': 'TARGET_SERVICE_PORT', 'value': '7001'}, {'name': 'STATUS_CODE', 'value': '500'},
                {'name': 'MODIFY_RESPONSE_BODY', 'value': 'true'}, {'name': 'RESPONSE_BODY', 'value': ''},
                {'name': 'TOXICITY', 'value': '70'}, {'name': 'PROXY_PORT', 'value': '20000'},
                {'name': 'NETWORK_INTERFACE', 'value': 'eth0'}, {'name': 'TOTAL_CHAOS_DURATION', 'value': '2700'},
                {'name': 'PODS_AFFECTED_PERC', 'value': '100'}]}}}]},
      status={'engineStatus': 'initialized', 'experiments': [{'name': 'pod-http-status-code', 'runner': 'authors-http-chaos-runner',
                                                              'experimentPod': 'pod-http-status-code-' + h(6, 'job'), 'status': 'Running',
                                                              'verdict': 'Awaited', 'lastUpdateTime': iso(b.T(ON, 2))}]})
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosResult', 'authors-http-chaos-pod-http-status-code', ns='booksapp', created=b.T(ON - 1, 40),
      labels={'chaosUID': uid('ce'), 'name': 'authors-http-chaos-pod-http-status-code'},
      spec={'engine': 'authors-http-chaos', 'experiment': 'pod-http-status-code'},
      status={'experimentStatus': {'phase': 'Running', 'verdict': 'Awaited', 'probeSuccessPercentage': 'Awaited'},
              'history': {'passedRuns': 3, 'failedRuns': 0, 'stoppedRuns': 0,
                          'targets': [{'name': au[0], 'kind': 'deployment', 'chaosStatus': 'targeted'}]}})
for reason, msg, s in [('ChaosEngineInitialized', 'Identifying app under test & launching authors-http-chaos-runner', (ON - 1, 19)),
                       ('ExperimentJobCreate', 'Experiment Job pod-http-status-code-%s for Chaos Experiment: pod-http-status-code' % h(6, 'job'), (ON - 1, 30)),
                       ('Awaited', 'experiment: pod-http-status-code, Result: Awaited', (ON - 1, 40))]:
    b.event('ChaosEngine', 'authors-http-chaos', reason, msg, b.T(*s), component='chaos-operator' if 'Job' not in reason else 'chaos-runner', api='litmuschaos.io/v1alpha1')
b.event('ChaosEngine', 'authors-http-chaos', 'PreChaosCheck', 'AUT: Running', b.T(ON - 1, 47), component='pod-http-status-code-' + h(6, 'job') + '-' + h(5, 'j2'), api='litmuschaos.io/v1alpha1')
b.event('Pod', au[0], 'ChaosInject', 'Injecting pod-http-status-code chaos on application pod', b.T(ON - 1, 55), component='pod-http-status-code-' + h(6, 'job') + '-' + h(5, 'j2'))
b.event('Pod', bo[0], 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 500', b.T(3, 0), last=b.T(47, 0), count=3, typ='Warning', field='spec.containers{books}')
b.event('Pod', hp, 'Pulled', 'Container image "litmuschaos.docker.scarf.sh/litmuschaos/go-runner:3.11.0" already present on machine', b.T(ON - 1, 53), field='spec.containers{helper}')

W = {}


def wa_fn(t, m, rnd, pod):
    ts = t.strftime('%d/%b/%Y:%H:%M:%S +0000')
    r = rnd.random()
    path = rnd.choices(['/', '/books/%d' % rnd.randint(1, 800), '/authors/%d' % rnd.randint(1, 120), '/books', '/authors', '/books/%d/edit' % rnd.randint(1, 800)], [2, 4, 3, 2, 1, 1])[0]
    needs_author = path != '/books' and not path.startswith('/books') or path.startswith('/books/') or path == '/'
    fail_auth = m >= ON and needs_author and r < 0.7
    fail_book = (path == '/books' and rnd.random() < 0.1)
    out = []
    if fail_auth:
        out.append(('ERROR', '%s - ActiveResource::ServerError - Failed.  Response code = 500.  Response message = Internal Server Error.:\n\t/usr/local/bundle/gems/activeresource-6.1.4/lib/active_resource/connection.rb:149:in `handle_response\'\n\t/usr/local/bundle/gems/activeresource-6.1.4/lib/active_resource/connection.rb:124:in `request\'\n\t/usr/local/bundle/gems/activeresource-6.1.4/lib/active_resource/base.rb:1010:in `find_every\'\n\t/app/webapp.rb:37:in `block in <class:WebApp>\'' % t.strftime('%Y-%m-%d %H:%M:%S')))
    elif fail_book:
        out.append(('ERROR', '%s - ActiveResource::ServerError - Failed.  Response code = 500.  Response message = Internal Server Error.:\n\t/usr/local/bundle/gems/activeresource-6.1.4/lib/active_resource/connection.rb:149:in `handle_response\'\n\t/app/webapp.rb:78:in `block in <class:WebApp>\'' % t.strftime('%Y-%m-%d %H:%M:%S')))
    code = 500 if (fail_auth or fail_book) else 200
    out.append(('INFO', '10.%d.%d.%d - - [%s] "GET %s HTTP/1.1" %d %d %.4f' % (24, rnd.randint(0, 3), rnd.randint(2, 60), ts, path, code, 30 if code == 500 else rnd.randint(2400, 9100), rnd.uniform(.01, .09))))
    return out


b.stream('webapp', wa, 11, wa_fn)


def au_fn(t, m, rnd, pod):
    p = rnd.choice(['/authors.json', '/authors/%d.json' % rnd.randint(1, 120), '/authors/%d.json' % rnd.randint(1, 120)])
    return ('INFO', '127.0.0.1 - - [%s] "GET %s HTTP/1.1" 200 %d %.4f' % (t.strftime('%d/%b/%Y:%H:%M:%S +0000'), p, rnd.randint(180, 4000), rnd.uniform(.003, .02)))


b.stream('authors', au, 8, au_fn)


def bo_fn(t, m, rnd, pod):
    if rnd.random() < 0.1:
        return [('ERROR', '%s - RuntimeError - Failure injected (FAILURE_RATE=0.1):\n\t/app/books.rb:21:in `maybe_fail\'' % t.strftime('%Y-%m-%d %H:%M:%S')),
                ('INFO', '127.0.0.1 - - [%s] "GET /books.json HTTP/1.1" 500 30 %.4f' % (t.strftime('%d/%b/%Y:%H:%M:%S +0000'), rnd.uniform(.002, .01)))]
    return ('INFO', '127.0.0.1 - - [%s] "GET /books/%d.json HTTP/1.1" 200 %d %.4f' % (t.strftime('%d/%b/%Y:%H:%M:%S +0000'), rnd.randint(1, 800), rnd.randint(300, 900), rnd.uniform(.003, .02)))


b.stream('books', bo, 7, bo_fn)


def hp_fn(t, m, rnd, pod):
    return None


b.log(b.T(ON - 1, 56), 'pod-http-status-code-helper', hp, 'time="%s" level=info msg="Helper Name: http-chaos"' % iso(b.T(ON - 1, 56)), 'info', ns='booksapp')
b.log(b.T(ON - 1, 57), 'pod-http-status-code-helper', hp, 'time="%s" level=info msg="[Info]: Container ID=authors, PID=%d"' % (iso(b.T(ON - 1, 57)), 3122), 'info', ns='booksapp')
b.log(b.T(ON - 1, 58), 'pod-http-status-code-helper', hp, 'time="%s" level=info msg="[Chaos]: Starting proxy server"' % iso(b.T(ON - 1, 58)), 'info', ns='booksapp')
b.log(b.T(ON - 1, 59), 'pod-http-status-code-helper', hp, 'time="%s" level=info msg="[Chaos]: Adding IPtables ruleset"' % iso(b.T(ON - 1, 59)), 'info', ns='booksapp')
b.log(b.T(ON, 0), 'pod-http-status-code-helper', hp, 'time="%s" level=info msg="[Info]: Chaos injected successfully on %s" ' % (iso(b.T(ON, 0)), au[0]), 'info', ns='booksapp')
b.log(b.T(ON, 1), 'pod-http-status-code-helper', hp, 'time="%s" level=info msg="[Chaos]: Waiting for 2700s"' % iso(b.T(ON, 1)), 'info', ns='booksapp')
b.log(b.T(2, 10), 'mysql', my[0], '%sZ 118 [Note] Aborted connection 118 to db: \'booksapp_production\' user: \'booksapp\' host: \'10.24.1.19\' (Got timeout reading communication packets)' % iso(b.T(2, 10))[:-1], 'Note')

rq = 'sum by (deployment, dst_deployment, status_code) (rate(response_total{namespace="booksapp", direction="outbound", deployment="webapp"}[1m]))'
b.rng(rq, 'linkerd: webapp outbound responses/s by destination and status',
      [({'deployment': 'webapp', 'dst_deployment': 'authors', 'status_code': '200'}, step_fn(21.0, 6.3, ON)),
       ({'deployment': 'webapp', 'dst_deployment': 'authors', 'status_code': '500'}, step_fn(0, 14.7, ON)),
       ({'deployment': 'webapp', 'dst_deployment': 'books', 'status_code': '200'}, step_fn(15.1, 10.6, ON)),
       ({'deployment': 'webapp', 'dst_deployment': 'books', 'status_code': '500'}, step_fn(1.7, 1.2, ON, rel=.3))])
b.rng('sum by (deployment, status_code) (rate(response_total{namespace="booksapp", direction="inbound"}[1m]))', 'linkerd: inbound responses/s by deployment and status',
      [({'deployment': 'webapp', 'status_code': '200'}, step_fn(21.6, 7.6, ON)), ({'deployment': 'webapp', 'status_code': '500'}, step_fn(2.2, 16.2, ON)),
       ({'deployment': 'authors', 'status_code': '200'}, step_fn(21.0, 21.0, ON)),
       ({'deployment': 'books', 'status_code': '200'}, step_fn(15.1, 10.6, ON)), ({'deployment': 'books', 'status_code': '500'}, step_fn(1.7, 1.2, ON, rel=.3))])
b.rng('histogram_quantile(0.99, sum by (le, deployment) (rate(response_latency_ms_bucket{namespace="booksapp", direction="inbound"}[1m])))', 'linkerd: inbound p99 latency (ms) by deployment',
      [({'deployment': 'webapp'}, step_fn(88, 71, ON, rel=.1)), ({'deployment': 'authors'}, noisy(19, .1)), ({'deployment': 'books'}, noisy(24, .1))])
b.rng('sum(litmuschaos_awaited_experiments{chaosresult_namespace="booksapp"})', 'litmus: awaited (running) experiments in booksapp',
      [({}, step_fn(0, 1, ON - 0.5, rel=0))])
cpu = {p: noisy(0.09) for p in wa}
cpu[au[0]] = step_fn(0.05, 0.08, ON)
cpu[bo[0]] = noisy(0.05)
mem = {p: noisy(MiB(162), .02) for p in wa}
mem[au[0]] = noisy(MiB(118), .02)
mem[bo[0]] = noisy(MiB(121), .02)
res_metrics(b, 'booksapp', cpu, mem)

b.notes = '''
# flt-booksapp-authors-http-status — Litmus pod-http-status-code on `authors` (500 with toxicity 70 %)

**Incident.** A Litmus ChaosEngine `authors-http-chaos` (experiment `pod-http-status-code`, STATUS_CODE=500, TOXICITY=70,
TARGET_SERVICE_PORT=7001, 2700 s) was started at 14:11:18Z and injected at ~14:12 into the authors pod (helper starts a proxy and
redirects port 7001 with iptables). ~70 % of responses from authors to webapp are rewritten to 500. The webapp's ActiveResource
client raises `ActiveResource::ServerError ... Response code = 500` and webapp returns 500 for pages that load authors.

**Chain.** webapp 500s (linkerd inbound metrics, webapp access log and ActiveResource errors in logs) → webapp outbound
to `authors` 500 rate jumps at 14:12 while books 500s stay at their usual 10 % (metrics) → authors app itself logs 200s
and linkerd inbound on authors shows only 200 (rewriting happens after the app, in the helper's proxy) → `k8s/chaos.yaml`
ChaosEngine/ChaosResult (Running, Awaited), helper/runner pods in `k8s/pods.yaml`, events ChaosInject on the authors pod and
helper logs "Chaos injected successfully".

**Decoys.** books has FAILURE_RATE=0.1 (RuntimeError "Failure injected", 500s all window) and readiness-probe 500 events;
mysql "Aborted connection" note; the question frames it as "books always has errors".

**must_mention:** `authors`.

**Provenance.** LitmusChaos experiment catalog `pod-http-status-code` (generic/pod-http-status-code: STATUS_CODE,
MODIFY_RESPONSE_BODY, TOXICITY, TARGET_SERVICE_PORT, PROXY_PORT). App: BuoyantIO/booksapp (webapp :7000, authors :7001,
books :7002, traffic, ActiveResource clients, FAILURE_RATE env), Linkerd proxy metrics `response_total`. Generated by /tmp/b8/c03.py (seed 303).
'''
b.write()
