from lib import *

b = B('flt-hashicups-product-targetport', 'HashiCups coffee menu empty', '2026-12-02T09:00', 60, 'test', 'test-aks-weu',
      'hashicups',
      "hashicups test: since ~09:17 the coffee menu on the frontend is empty and shows 'Unable to query products'. all pods are green in the dashboard. we did push a frontend change this morning. can you find out why?",
      ['product-api', 'port'], seed=202)
ON = 17
b.nodes(['aks-apps-31945577-vmss0000%02d' % i for i in (0, 1, 3)], zone_prefix='westeurope-', kubelet='v1.30.5',
        runtime='containerd://1.7.22-1', os_image='Ubuntu 22.04.5 LTS', itype='Standard_D4s_v5')
b.namespace('hashicups', {'environment': 'test'})
fe = b.deploy('frontend', 'hashicorpdemoapp/frontend:v1.0.9', 2, 3000, env={'NEXT_PUBLIC_PUBLIC_API_URL': '/', 'NEXT_PUBLIC_FOOTER_FLAG': 'test-aks'},
              probe={'httpGet': {'path': '/', 'port': 3000}}, gen=7, rs_created=b.T(5, 2), pod_created=b.T(5, 3), svc_port=3000)
ng = b.deploy('nginx', 'nginx:1.27.2-alpine', 1, 80, probe={'httpGet': {'path': '/health', 'port': 80}})
pa = b.deploy('public-api', 'hashicorpdemoapp/public-api:v0.0.7', 2, 8080,
              env={'BIND_ADDRESS': ':8080', 'PRODUCT_API_URI': 'http://product-api:9090', 'PAYMENT_API_URI': 'http://payments:1800'},
              probe={'httpGet': {'path': '/health', 'port': 8080}}, svc_port=8080)
pr = b.deploy('product-api', 'hashicorpdemoapp/product-api:v0.0.22', 2, 9090, svc=False,
              env={'CONFIG_FILE': '/config/config.json'}, probe={'httpGet': {'path': '/health/readyz', 'port': 9090}},
              mounts=[{'name': 'config', 'mountPath': '/config', 'readOnly': True}],
              volumes=[{'name': 'config', 'configMap': {'name': 'db-configmap'}}])
sv = b.service('product-api', {'app': 'product-api'}, 9090, 9091)
sv['metadata']['labels'].update({'app.kubernetes.io/managed-by': 'Helm', 'helm.sh/chart': 'product-api-0.3.2'})
sv['metadata']['annotations'] = {'meta.helm.sh/release-name': 'product-api', 'meta.helm.sh/release-namespace': 'hashicups'}
sv['metadata']['managedFields'] = [{'manager': 'helm', 'operation': 'Update', 'apiVersion': 'v1', 'time': iso(b.T(ON - 1, 37)),
                                    'fieldsType': 'FieldsV1', 'fieldsV1': {'f:spec': {'f:ports': {}}}}]
b.obj('services', 'v1', 'Endpoints', 'product-api', labels={'app': 'product-api'}, created=b.ago(days=30),
      extra={'subsets': [{'addresses': [{'ip': '10.244.%d.%d' % (1 + i, 31 + i * 7), 'nodeName': b.node_names[i],
                                         'targetRef': {'kind': 'Pod', 'name': p, 'namespace': 'hashicups'}} for i, p in enumerate(pr)],
                          'ports': [{'name': 'http', 'port': 9091, 'protocol': 'TCP'}]}]})
pay = b.deploy('payments', 'hashicorpdemoapp/payments:v0.0.16', 1, 8080, svc_port=1800,
               probe={'httpGet': {'path': '/actuator/health', 'port': 8080}}, res={'requests': {'cpu': '100m', 'memory': '384Mi'}, 'limits': {'memory': '512Mi'}})
db = b.deploy('product-api-db', 'hashicorpdemoapp/product-api-db:v0.0.22', 1, 5432, kind='StatefulSet', probe=False, svc_port=5432,
              env={'POSTGRES_DB': 'products', 'POSTGRES_USER': 'postgres', 'POSTGRES_PASSWORD': {'valueFrom': {'secretKeyRef': {'name': 'product-db', 'key': 'password'}}}})
b.obj('config', 'v1', 'ConfigMap', 'db-configmap', data={'config': '{"db_connection": "host=product-api-db port=5432 user=postgres password=REDACTED dbname=products sslmode=disable", "bind_address": ":9090", "metrics_address": ":9103"}'})
b.event('Deployment', 'frontend', 'ScalingReplicaSet', 'Scaled up replica set %s to 2' % fe[0].rsplit('-', 1)[0], b.T(5, 2), component='deployment-controller', api='apps/v1')
b.event('Deployment', 'frontend', 'ScalingReplicaSet', 'Scaled down replica set frontend-7c9d5c8b4f to 0 from 2', b.T(5, 41), component='deployment-controller', api='apps/v1')
for p in fe:
    b.event('Pod', p, 'Pulled', 'Successfully pulled image "hashicorpdemoapp/frontend:v1.0.9" in 4.113s (4.113s including waiting). Image size: 61847235 bytes.', b.T(5, 8), field='spec.containers{frontend}')
b.event('Pod', pay[0], 'Unhealthy', 'Readiness probe failed: Get "http://10.244.2.19:8080/actuator/health": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', b.ago(minutes=25), last=b.T(12, 0), count=4, typ='Warning', field='spec.containers{payments}')


def hts(t):
    return t.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t.microsecond // 1000)


def pa_fn(t, m, rnd, pod):
    if m >= ON + 0.05:
        return [('ERROR', '%s [ERROR] public-api: Unable to query products: error="Get \\"http://product-api:9090/coffees\\": dial tcp %s:9090: connect: connection refused"' % (hts(t), sv['spec']['clusterIP'])),
                ('INFO', '%s [INFO]  public-api: Handle Coffees: status=error duration=%dms' % (hts(t), rnd.randint(1, 4)))]
    return [('INFO', '%s [INFO]  public-api: Handle Coffees: status=ok duration=%dms' % (hts(t), rnd.randint(6, 31)))]


b.stream('public-api', pa, 9, pa_fn)


def pa_pay(t, m, rnd, pod):
    if rnd.random() < 0.3:
        return ('ERROR', '%s [ERROR] public-api: Unable to make payment: error="payment failed: status=500 body=\\"{\\\\\\"message\\\\\\":\\\\\\"Vault transit not configured, storing card in plain text is disabled\\\\\\"}\\""' % hts(t))
    return ('INFO', '%s [INFO]  public-api: Handle Pay: status=ok order_id=%d' % (hts(t), rnd.randint(100, 900)))


b.stream('public-api', pa, 0.6, pa_pay)


def pr_fn(t, m, rnd, pod):
    if m >= ON:
        return None
    return [('INFO', '%s [INFO]  Handle Coffee' % hts(t)), ('DEBUG', '%s [DEBUG] Found coffees: count=%d' % (hts(t), 9))]


b.stream('product-api', pr, 8, pr_fn)
b.stream('product-api', pr, 0.5, lambda t, m, rnd, pod: ('INFO', '%s [INFO]  Handle Health: ready=true db=ok' % hts(t)))


def ng_fn(t, m, rnd, pod):
    path, code, sz = rnd.choice([('/api', 200, rnd.randint(900, 1300) if m < ON else 213), ('/', 200, 5623), ('/_next/static/chunks/main-3a1f.js', 200, 91822), ('/images/terraspresso.png', 200, 30211)])
    return (None, '%s - - [%s] "%s %s HTTP/1.1" %d %d "http://hashicups.test.acme.internal/" "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" rt=%.3f uct="0.000" uht="%.3f" urt="%.3f"' % (
        ip(rnd, 244), t.strftime('%d/%b/%Y:%H:%M:%S +0000'), 'POST' if path == '/api' else 'GET', path, code, sz, rnd.uniform(.004, .04), rnd.uniform(.003, .03), rnd.uniform(.003, .035)))


b.stream('nginx', ng, 14, ng_fn)
b.log(b.T(0, 4), 'nginx', ng[0], '2026/12/02 09:00:04 [warn] 29#29: *41881 an upstream response is buffered to a temporary file /var/cache/nginx/proxy_temp/6/03/0000000036 while reading upstream, client: 10.244.0.1, server: localhost, request: "GET /_next/static/chunks/framework-8a1f.js HTTP/1.1", upstream: "http://172.20.40.18:3000/_next/static/chunks/framework-8a1f.js"', 'warn')


def fe_fn(t, m, rnd, pod):
    if m >= ON and rnd.random() < 0.5:
        return ('error', 'ApolloError: Unable to query products\n    at new ApolloError (/app/node_modules/@apollo/client/errors/errors.cjs:40:28)\n    at /app/.next/server/pages/index.js:1:5234 {\n  graphQLErrors: [ { message: \'Unable to query products\', path: [ \'coffees\' ] } ],\n  networkError: null\n}')
    return None


b.stream('frontend', fe, 6, fe_fn)
b.log(b.T(5, 14), 'frontend', fe[0], '  ▲ Next.js 14.2.15\n  - Local:        http://localhost:3000\n\n ✓ Starting...\n ✓ Ready in 412ms', 'info')


def pay_fn(t, m, rnd, pod):
    return ('INFO', '%s  INFO 1 --- [nio-8080-exec-%d] c.h.p.c.PaymentController               : Processing payment for card ending %04d' % (t.strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (t.microsecond // 1000), rnd.randint(1, 10), rnd.randint(0, 9999)))


b.stream('payments', pay, 0.6, pay_fn)
b.stream('product-api-db', db, 0.15, lambda t, m, rnd, pod: ('LOG', '%s UTC [%d] LOG:  checkpoint complete: wrote %d buffers (0.1%%); 0 WAL file(s) added, 0 removed, 0 recycled; write=%.3f s, sync=0.002 s, total=%.3f s' % (t.strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (t.microsecond // 1000), 27, rnd.randint(3, 40), rnd.uniform(.1, 3), rnd.uniform(.2, 3.2))))

b.rng('sum by (operation, status) (rate(graphql_requests_total{namespace="hashicups", service="public-api"}[5m]))', 'public-api GraphQL operations/s by status',
      [({'operation': 'coffees', 'status': 'ok'}, step_fn(8.8, 0, ON + 1)), ({'operation': 'coffees', 'status': 'error'}, step_fn(0, 8.8, ON + 1)),
       ({'operation': 'pay', 'status': 'ok'}, noisy(0.42, .3)), ({'operation': 'pay', 'status': 'error'}, noisy(0.18, .5))])
b.rng('sum by (status) (rate(nginx_http_requests_total{namespace="hashicups", service="nginx"}[5m]))', 'nginx requests/s by status',
      [({'status': '200'}, noisy(14.1, .06)), ({'status': '304'}, noisy(2.2, .2)), ({'status': '404'}, noisy(0.05, .6))])
b.rng('sum by (handler, code) (rate(http_requests_total{namespace="hashicups", service="product-api"}[5m]))', 'product-api requests/s by handler',
      [({'handler': '/coffees', 'code': '200'}, step_fn(8.1, 0, ON + 1)), ({'handler': '/health/readyz', 'code': '200'}, noisy(0.2, 0.02))])
b.rng('histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket{namespace="hashicups", service="public-api"}[5m])))', 'public-api p95 latency (s)',
      [({}, step_fn(0.028, 0.004, ON + 1, rel=.15))])
b.rng('kube_deployment_status_replicas_available{namespace="hashicups"}', 'available replicas by deployment',
      [({'deployment': d}, const(n)) for d, n in [('frontend', 2), ('nginx', 1), ('public-api', 2), ('product-api', 2), ('payments', 1)]])
cpu = {p: step_fn(0.03, 0.012, ON) for p in pa}
cpu.update({p: step_fn(0.02, 0.003, ON) for p in pr})
cpu.update({p: noisy(0.05) for p in fe})
cpu[pay[0]] = noisy(0.06)
mem = {p: noisy(MiB(24)) for p in pa}
mem.update({p: noisy(MiB(19)) for p in pr})
mem.update({p: noisy(MiB(96)) for p in fe})
mem[pay[0]] = noisy(MiB(301), .02)
res_metrics(b, 'hashicups', cpu, mem)

b.notes = '''
# flt-hashicups-product-targetport — product-api Service targetPort 9091 while the container listens on 9090

**Incident.** At 09:16:37Z a Helm upgrade of the `product-api` chart (0.3.2) rewrote the Service `product-api` with
`targetPort: 9091`; the product-api container listens on 9090 (`bind_address :9090` in `db-configmap`, containerPort 9090,
probes on 9090). Connections to the ClusterIP 172.20.x.x:9090 are DNATed to podIP:9091 and get RST → public-api
`connect: connection refused`; GraphQL `coffees` returns an error (HTTP 200 with errors), frontend shows "Unable to query products".

**Chain.** frontend ApolloError (logs) and GraphQL `coffees` status=error (metrics) → public-api ERROR `dial tcp 172.20...:9090: connect:
connection refused` (logs) → product-api pods Running/Ready, no restarts, health handler still ok, but `/coffees` traffic stops (metrics,
logs) → `k8s/services.yaml`: Service product-api `port 9090 → targetPort 9091`, managedFields helm update 09:16:37Z; Endpoints port 9091
vs containerPort 9090 in `k8s/workloads.yaml`.

**Decoys.** frontend rollout at 09:05 (the question points at it; it is unrelated); payments "Vault transit not configured" errors
before and after onset; payments readiness probe timeout events before onset; nginx returns 200 throughout (GraphQL errors ride in 200s);
nginx buffered-to-temp-file warn.

**must_mention:** `product-api`, `port` (target port / port mismatch).

**Provenance.** AIOpsLab `misconfig_app`/k8s target-port misconfiguration (`K8STargetPortMisconf`, e.g. `k8s_target_port-misconfig`
problems) and ITBench misconfigured-service scenarios. App: hashicorp-demoapp HashiCups (frontend Next.js 3000, nginx, public-api
GraphQL :8080 with PRODUCT_API_URI/PAYMENT_API_URI, product-api :9090 hclog, payments Spring Boot, product-api-db). Generated by /tmp/b8/c02.py (seed 202).
'''
b.write()
