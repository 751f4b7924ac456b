from lib import *

b = B('flt-retail-catalog-netpol', 'retail-store ui 500s on product pages', '2026-11-24T10:00', 60, 'staging',
      'stg-eks-euw1', 'ui',
      "retail store staging: product listing and product detail pages started returning 500 around 10:22, home page and cart still load. nothing deployed to ui today. what's going on?",
      ['catalog', 'policy'], seed=101)
ON = 22
b.nodes(['ip-10-42-%d-%d.eu-west-1.compute.internal' % (x, y) for x, y in [(112, 7), (141, 90), (168, 23)]])
for ns in ['ui', 'catalog', 'carts', 'checkout', 'orders']:
    b.namespace(ns, {'app.kubernetes.io/created-by': 'eks-workshop'})
IMG = 'public.ecr.aws/aws-containers/retail-store-sample-%s:1.1.0'
common = {'JAVA_OPTS': '-XX:MaxRAMPercentage=75.0 -Djava.security.egd=file:/dev/urandom'}
ui = b.deploy('ui', IMG % 'ui', 2, 8080, ns='ui', labels={'app.kubernetes.io/name': 'ui', 'app.kubernetes.io/instance': 'ui', 'app.kubernetes.io/component': 'service'},
              env=dict(common, RETAIL_UI_ENDPOINTS_CATALOG='http://catalog.catalog.svc:80', RETAIL_UI_ENDPOINTS_CARTS='http://carts.carts.svc:80',
                       RETAIL_UI_ENDPOINTS_ORDERS='http://orders.orders.svc:80', RETAIL_UI_ENDPOINTS_CHECKOUT='http://checkout.checkout.svc:80'),
              res={'requests': {'cpu': '250m', 'memory': '1Gi'}, 'limits': {'memory': '1Gi'}},
              probe={'httpGet': {'path': '/actuator/health/liveness', 'port': 8080}})
cat = b.deploy('catalog', IMG % 'catalog', 2, 8080, ns='catalog', labels={'app.kubernetes.io/name': 'catalog', 'app.kubernetes.io/instance': 'catalog', 'app.kubernetes.io/component': 'service'},
               env={'RETAIL_CATALOG_PERSISTENCE_PROVIDER': 'mysql', 'RETAIL_CATALOG_PERSISTENCE_ENDPOINT': 'catalog-mysql:3306',
                    'RETAIL_CATALOG_PERSISTENCE_DB_NAME': 'catalog', 'RETAIL_CATALOG_PERSISTENCE_USER': {'valueFrom': {'secretKeyRef': {'name': 'catalog-db', 'key': 'username'}}}},
               probe={'httpGet': {'path': '/health', 'port': 8080}})
b.deploy('catalog-mysql', 'public.ecr.aws/docker/library/mysql:8.0', 1, 3306, ns='catalog', kind='StatefulSet',
         labels={'app.kubernetes.io/name': 'catalog', 'app.kubernetes.io/component': 'mysql'}, probe=False, svc_port=3306)
carts = b.deploy('carts', IMG % 'cart', 2, 8080, ns='carts', labels={'app.kubernetes.io/name': 'carts', 'app.kubernetes.io/component': 'service'},
                 env=dict(common, RETAIL_CART_PERSISTENCE_PROVIDER='dynamodb', RETAIL_CART_PERSISTENCE_DYNAMODB_TABLE_NAME='retail-stg-carts'),
                 probe={'httpGet': {'path': '/actuator/health/liveness', 'port': 8080}})
chk = b.deploy('checkout', IMG % 'checkout', 1, 8080, ns='checkout', labels={'app.kubernetes.io/name': 'checkout', 'app.kubernetes.io/component': 'service'},
               env={'RETAIL_CHECKOUT_PERSISTENCE_PROVIDER': 'redis', 'RETAIL_CHECKOUT_PERSISTENCE_REDIS_URL': 'redis://checkout-redis:6379',
                    'RETAIL_CHECKOUT_ENDPOINTS_ORDERS': 'http://orders.orders.svc:80'}, gen=4, rs_created=b.ago(hours=1, minutes=20),
               pod_created=b.ago(hours=1, minutes=19))
orders = b.deploy('orders', IMG % 'orders', 1, 8080, ns='orders', labels={'app.kubernetes.io/name': 'orders', 'app.kubernetes.io/component': 'service'},
                  env=dict(common, RETAIL_ORDERS_PERSISTENCE_PROVIDER='postgres', RETAIL_ORDERS_PERSISTENCE_ENDPOINT='orders-postgresql:5432'),
                  probe={'httpGet': {'path': '/actuator/health/liveness', 'port': 8080}})

# network policies
b.obj('networkpolicies', 'networking.k8s.io/v1', 'NetworkPolicy', 'default-deny-ingress', ns='carts', created=b.ago(days=14),
      spec={'podSelector': {}, 'policyTypes': ['Ingress']})
b.obj('networkpolicies', 'networking.k8s.io/v1', 'NetworkPolicy', 'allow-ui-ingress', ns='carts', created=b.ago(days=14),
      spec={'podSelector': {'matchLabels': {'app.kubernetes.io/component': 'service'}}, 'policyTypes': ['Ingress'],
            'ingress': [{'from': [{'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'ui'}}},
                                  {'namespaceSelector': {'matchLabels': {'kubernetes.io/metadata.name': 'checkout'}}}]}]})
b.obj('networkpolicies', 'networking.k8s.io/v1', 'NetworkPolicy', 'catalog-restrict-ingress', ns='catalog', created=b.T(ON - 1, 48),
      ann={'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"catalog-restrict-ingress","namespace":"catalog"}}'},
      labels={'app.kubernetes.io/part-of': 'retail-store', 'security.acme.io/ticket': 'SEC-2291'},
      spec={'podSelector': {'matchLabels': {'app.kubernetes.io/name': 'catalog'}}, 'policyTypes': ['Ingress'],
            'ingress': [{'from': [{'namespaceSelector': {'matchLabels': {'name': 'ui'}},
                                   'podSelector': {'matchLabels': {'app.kubernetes.io/component': 'service'}}},
                                  {'podSelector': {'matchLabels': {'app.kubernetes.io/name': 'catalog'}}}],
                         'ports': [{'protocol': 'TCP', 'port': 8080}, {'protocol': 'TCP', 'port': 3306}]}]})
# events
b.event('Deployment', 'checkout', 'ScalingReplicaSet', 'Scaled up replica set checkout-%s to 1' % chk[0].split('-')[1],
        b.ago(hours=1, minutes=20), component='deployment-controller', ns='checkout', api='apps/v1')
for p in ui:
    b.event('Pod', p, 'Unhealthy', 'Readiness probe failed: Get "http://%s:8080/actuator/health/liveness": context deadline exceeded (Client.Timeout exceeded while awaiting headers)' % ip(b.rnd),
            b.T(8, 11), typ='Warning', ns='ui', field='spec.containers{ui}') if p == ui[0] else None
b.event('Pod', carts[1], 'Unhealthy', 'Liveness probe failed: Get "http://10.20.51.17:8080/actuator/health/liveness": context deadline exceeded', b.T(41, 3), typ='Warning', ns='carts', field='spec.containers{carts}')

rndp = lambda rnd: rnd.choice(['1ca35e86-4b4c-4124-b6b5-076ba4134d0d', '4f18544b-70a5-4352-8e19-0d070f46b4e5', '631a3db5-2c4a-4f1a-9d7b-8a3f6a1d0f44',
                               '79bce3f3-935f-4912-8c62-0d2f3e059405', '87e89b11-d319-446d-b9be-50adcca5224a', 'a1258cd2-176c-4507-ade6-746dab5ad625',
                               'd27cf49f-b689-4a75-a249-d373e0330bb5', 'd3104128-1d14-4465-99d3-8ab9267c687b', 'd4edfedb-dbe9-4dd9-aae8-009489394955'])
thr = ['or-http-epoll-%d' % i for i in range(1, 5)]
catip = '172.20.88.41'


def ui_fn(t, m, rnd, pod):
    th = rnd.choice(thr)
    pre = '%s %s 1 --- [ui] [%s] ' % (t.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t.microsecond // 1000), '%s', th)
    page = rnd.choices(['/home', '/catalog', '/catalog/' + rndp(rnd), '/cart', '/checkout'], [3, 3, 4, 2, 1])[0]
    if m >= ON + 0.3 and page.startswith('/catalog'):
        rq = rid(rnd, 8)
        return [('ERROR', (pre % 'ERROR') + 'a.w.r.e.AbstractErrorWebExceptionHandler : [%s-%d]  500 Server Error for HTTP GET "%s"\n\n'
                 'io.netty.channel.ConnectTimeoutException: connection timed out after 5000 ms: catalog.catalog.svc/%s:80\n'
                 '\tSuppressed: The stacktrace has been enhanced by Reactor, refer to additional information below: \n'
                 'Error has been observed at the following site(s):\n'
                 '\t*__checkpoint ⇢ Request to GET http://catalog.catalog.svc:80/catalog/products [DefaultWebClient]\n'
                 '\t*__checkpoint ⇢ HTTP GET "%s" [ExceptionHandlingWebHandler]\n'
                 'Original Stack Trace:\n\t\tat io.netty.channel.epoll.AbstractEpollChannel$AbstractEpollUnsafe$2.run(AbstractEpollChannel.java:615)' % (rq, rnd.randint(1, 900), page, catip, page))]
    if page == '/cart' and rnd.random() < 0.06:
        return ('WARN', (pre % ' WARN') + 'c.a.s.u.s.carts.KiotaCartsService       : Slow response from carts service: %d ms (threshold 1000 ms)' % rnd.randint(1050, 1900))
    return None


def ui_info(t, m, rnd, pod):
    th = rnd.choice(thr)
    ts = t.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t.microsecond // 1000)
    if rnd.random() < 0.5:
        return ('INFO', '%s  INFO 1 --- [ui] [%s] c.a.s.ui.web.CatalogController         : Rendering catalog page tags=%s page=%d' % (ts, th, rnd.choice(['', 'watch', 'jewellery', 'accessories']), rnd.randint(1, 3)) if m < ON else
                '%s  INFO 1 --- [ui] [%s] c.a.s.ui.web.HomeController            : Rendering home page' % (ts, th))
    return ('INFO', '%s  INFO 1 --- [ui] [%s] c.a.s.ui.web.CartController            : Fetching cart for customer %s' % (ts, th, rid(rnd, 8)))


b.stream('ui', ui, lambda m: 14, ui_fn, ns='ui')
b.stream('ui', ui, 4, ui_info, ns='ui')


def cat_fn(t, m, rnd, pod):
    if m >= ON:
        if rnd.random() < 0.85:
            return None
    p = rnd.choice(['/catalog/products?page=1&size=12&order=&tags=', '/catalog/products/' + rndp(rnd), '/catalog/tags', '/catalog/size?tags='])
    return (None, '[GIN] %s | 200 | %9s | %15s | GET      "%s"' % (t.strftime('%Y/%m/%d - %H:%M:%S'), '%.3fms' % rnd.uniform(0.8, 9), ip(rnd), p))


def cat_health(t, m, rnd, pod):
    return (None, '[GIN] %s | 200 | %9s | %15s | GET      "/health"' % (t.strftime('%Y/%m/%d - %H:%M:%S'), '%dµs' % rnd.randint(30, 90), '10.42.%d.%d' % (112, 7)))


b.stream('catalog', cat, 15, cat_fn, ns='catalog')
b.stream('catalog', cat, 6, cat_health, ns='catalog')


def carts_fn(t, m, rnd, pod):
    ts = t.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t.microsecond // 1000)
    if rnd.random() < 0.1:
        return ('WARN', '%s  WARN 1 --- [carts] [http-nio-8080-exec-%d] c.a.s.c.s.d.DynamoDBCartService        : DynamoDB request throttled (ProvisionedThroughputExceededException), retry attempt 1 for table retail-stg-carts' % (ts, rnd.randint(1, 10)))
    return ('INFO', '%s  INFO 1 --- [carts] [http-nio-8080-exec-%d] c.a.s.c.controllers.CartsController     : Get cart %s' % (ts, rnd.randint(1, 10), rid(rnd, 8)))


b.stream('carts', carts, 5, carts_fn, ns='carts')


def chk_fn(t, m, rnd, pod):
    return ('info', '{"level":"info","time":%d,"pid":1,"hostname":"%s","context":"CheckoutService","msg":"Checkout updated for customer %s"}' % (int(t.timestamp() * 1000), pod, rid(rnd, 8)))


b.stream('checkout', chk, 1.2, chk_fn, ns='checkout')
b.log(b.T(3, 12), 'orders', orders[0], '%s  WARN 1 --- [orders] [           main] o.s.b.a.o.j.JpaBaseConfiguration$JpaWebConfiguration : spring.jpa.open-in-view is enabled by default.' % iso(b.T(3, 12)), 'WARN', ns='orders')

# metrics
def ui_rate(code):
    def f(m, r):
        tot = 9.5 * (1 + r.uniform(-.07, .07))
        cat_share = 0.62
        if code == '200':
            return tot * (1 - cat_share) if m >= ON + 1 else tot - 0.05
        if code == '500':
            return tot * cat_share if m >= ON + 1 else (0.05 if m < ON else tot * cat_share * (m - ON))
        return None
    return f


b.rng('sum by (status) (rate(http_server_requests_seconds_count{namespace="ui", application="ui"}[5m]))', 'ui requests/s by HTTP status',
      [({'status': '200'}, ui_rate('200')), ({'status': '500'}, ui_rate('500')), ({'status': '404'}, noisy(0.04, .5))])
b.rng('histogram_quantile(0.99, sum by (le) (rate(http_server_requests_seconds_bucket{namespace="ui", application="ui"}[5m])))', 'ui p99 latency (s)',
      [({}, step_fn(0.21, 5.02, ON + 1, rel=.04))])
b.rng('sum by (uri, outcome) (rate(http_client_requests_seconds_count{namespace="ui", application="ui"}[5m]))', 'ui outbound client requests/s by target and outcome',
      [({'uri': '/catalog/products', 'outcome': 'SUCCESS'}, step_fn(5.9, 0, ON + 1)),
       ({'uri': '/catalog/products', 'outcome': 'UNKNOWN'}, step_fn(0, 5.9, ON + 1)),
       ({'uri': '/carts/{customerId}', 'outcome': 'SUCCESS'}, noisy(3.1)),
       ({'uri': '/checkout/{customerId}', 'outcome': 'SUCCESS'}, noisy(0.6))])
b.rng('sum by (code) (rate(gin_request_total{namespace="catalog"}[5m]))', 'catalog requests/s by code (gin)',
      [({'code': '200'}, sometimes(noisy(7.8), lambda m: m < ON + 1))])
b.rng('sum by (namespace) (rate(container_network_receive_bytes_total{namespace=~"ui|catalog|carts"}[5m]))', 'network receive bytes/s by namespace',
      [({'namespace': 'ui'}, step_fn(412000, 190000, ON + 1)), ({'namespace': 'catalog'}, step_fn(236000, 21000, ON + 1)),
       ({'namespace': 'carts'}, noisy(98000))])
b.rng('sum(rate(carts_dynamodb_throttled_requests_total{namespace="carts"}[5m]))', 'carts DynamoDB throttled requests/s', [({}, noisy(0.5, .6))])
cpu = {p: step_fn(0.31, 0.26, ON) for p in ui}
cpu.update({p: step_fn(0.05, 0.01, ON) for p in cat})
mem = {p: noisy(MiB(612), .02) for p in ui}
mem.update({p: noisy(MiB(38), .03) for p in cat})
res_metrics(b, 'ui', {p: cpu[p] for p in ui}, {p: mem[p] for p in ui})
res_metrics(b, 'catalog', {p: cpu[p] for p in cat}, {p: mem[p] for p in cat})
b.rng('up{namespace="catalog", job="catalog"}', 'catalog scrape target up', [({'pod': p}, step_fn(1, 0, ON + 0.5, rel=0)) for p in cat])

b.notes = '''
# flt-retail-catalog-netpol — NetworkPolicy in `catalog` blocks ui → catalog

**Incident.** At 10:21:48Z a NetworkPolicy `catalog-restrict-ingress` (ticket SEC-2291) was applied in namespace `catalog`.
It selects the catalog pods and allows ingress only from pods in namespaces labelled `name: ui`. The `ui` namespace only carries
the automatic `kubernetes.io/metadata.name: ui` label, so the ui pods no longer match and their SYNs to catalog:8080 are dropped
(VPC CNI network policy agent). UI pages that need the catalog (/catalog, /catalog/{id}) fail with 500 after a 5 s connect timeout.
Home/cart/checkout pages don't call catalog and keep working.

**Chain.** ui 500s (metrics `http_server_requests_seconds_count` by status; logs: ui `500 Server Error ... ConnectTimeoutException: connection
timed out after 5000 ms: catalog.catalog.svc/172.20.88.41:80`) → ui client metric outcome UNKNOWN for /catalog/products → catalog pods are
healthy (Running, probes fine, GIN /health 200 from kubelet, no restarts) but traffic to catalog collapses (`gin_request_total`,
network receive bytes in `catalog`; Prometheus scrapes of catalog also fail: `up` 1→0, gin series go absent) → `k8s/networkpolicies.yaml`: `catalog-restrict-ingress` created 10:21:48Z with
`namespaceSelector: {name: ui}`; `k8s/config.yaml` shows ui namespace labels lack `name`.

**Decoys.** carts DynamoDB throttling WARNs and a liveness-probe timeout on a carts pod (present all window); ui readiness timeout
at 10:08 (before onset); checkout rolled out 1 h 20 m before the window (routine); carts already has default-deny policies
(older, correct); orders `open-in-view` warning.

**must_mention:** `catalog`, `policy` (NetworkPolicy / network policy).

**Provenance.** AIOpsLab / ITBench network-policy faults (deny ingress to a service); the EKS Workshop network-policy lab for the
AWS retail-store-sample-app (namespaces per component, `kubernetes.io/metadata.name` selectors). App: aws-containers/retail-store-sample-app
1.1.0 (ui Spring WebFlux, catalog Go/Gin, carts DynamoDB, checkout NestJS, orders postgres). Generated by /tmp/b8/c01.py (seed 101).
'''
b.write()
