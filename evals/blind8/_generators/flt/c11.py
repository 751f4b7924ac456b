from lib import *

b = B('flt-coolstore-inventory-image', 'Coolstore storefront: Error retrieving products', '2026-12-09T11:00', 60, 'staging', 'stg-ocp-fra', 'coolstore',
      "coolstore staging storefront shows 'Error retrieving products' for everyone since about 11:42. catalog service and its database look fine. what is failing?",
      ['inventory', 'image'], seed=1111)
ON = 42
b.nodes(['worker-%d.stg-ocp-fra.acme.internal' % i for i in (0, 1, 2)], zone_prefix='fra-', kubelet='v1.29.10+67d3387', runtime='cri-o://1.29.10-3.rhaos4.16.git3c1a6b1.el9',
        os_image='Red Hat Enterprise Linux CoreOS 416.94.202411201433-0', itype='m5.2xlarge', cpu='8', mem='32386996Ki')
b.namespace('coolstore')
IMGR = 'quay.io/coolstore-demo/%s:%s'
web = b.deploy('web', IMGR % ('web-nodejs', '2.1.0'), 2, 8080, labels={'app': 'coolstore', 'component': 'web'}, env={'COOLSTORE_GW_ENDPOINT': 'http://gateway:8080', 'COOLSTORE_SCENARIO': 'default'}, probe={'httpGet': {'path': '/', 'port': 8080}}, svc_name='web', svc_port=8080)
gw = b.deploy('gateway', IMGR % ('gateway-vertx', '2.1.0'), 2, 8080, labels={'app': 'coolstore', 'component': 'gateway'}, env={'CATALOG_ENDPOINT': 'http://catalog:8080', 'INVENTORY_ENDPOINT': 'http://inventory:8080', 'CART_ENDPOINT': 'http://cart:8080'}, probe={'httpGet': {'path': '/health', 'port': 8080}}, svc_port=8080)
ca = b.deploy('catalog', IMGR % ('catalog-spring-boot', '2.1.0'), 1, 8080, labels={'app': 'coolstore', 'component': 'catalog'}, env={'SPRING_DATASOURCE_URL': 'jdbc:postgresql://catalog-database:5432/catalogdb'}, probe={'httpGet': {'path': '/actuator/health', 'port': 8080}}, svc_port=8080, res={'requests': {'cpu': '200m', 'memory': '512Mi'}, 'limits': {'memory': '768Mi'}})
cart = b.deploy('cart', IMGR % ('cart-quarkus', '2.1.0'), 1, 8080, labels={'app': 'coolstore', 'component': 'cart'}, env={'QUARKUS_INFINISPAN_CLIENT_HOSTS': 'datagrid:11222'}, probe={'httpGet': {'path': '/q/health/ready', 'port': 8080}}, svc_port=8080)
IRS = h(10, b.case, 'inventory', 'rs')
ipod = 'inventory-%s-%s' % (IRS, h(5, b.case, 'inventory', 0))
iv = b.deploy('inventory', IMGR % ('inventory-quarkus', '2.1.1-rc1'), 1, 8080, labels={'app': 'coolstore', 'component': 'inventory'},
              env={'QUARKUS_DATASOURCE_JDBC_URL': 'jdbc:postgresql://inventory-database:5432/inventorydb', 'QUARKUS_DATASOURCE_USERNAME': 'inventory'},
              probe={'httpGet': {'path': '/q/health/ready', 'port': 8080}}, svc_port=8080, strategy={'type': 'Recreate'}, gen=6,
              rs_created=b.T(ON - 1, 31), pod_created=b.T(ON - 1, 33),
              ann={'app.openshift.io/vcs-ref': 'release/2.1.x', 'app.openshift.io/connects-to': '[{"apiVersion":"apps/v1","kind":"Deployment","name":"inventory-database"}]'},
              pods_override={0: dict(phase='Pending', ready=False, state={'waiting': {'reason': 'ImagePullBackOff', 'message': 'Back-off pulling image "quay.io/coolstore-demo/inventory-quarkus:2.1.1-rc1"'}}, started=b.T(ON - 1, 34))},
              status_override={'conditions': [{'type': 'Available', 'status': 'False', 'reason': 'MinimumReplicasUnavailable', 'message': 'Deployment does not have minimum availability.', 'lastUpdateTime': iso(b.T(ON - 1, 31)), 'lastTransitionTime': iso(b.T(ON - 1, 31))},
                                              {'type': 'Progressing', 'status': 'False', 'reason': 'ProgressDeadlineExceeded', 'message': 'ReplicaSet "inventory-%s" has timed out progressing.' % IRS, 'lastUpdateTime': iso(b.T(51, 31)), 'lastTransitionTime': iso(b.T(51, 31))}]})
for p in b.objs['pods']:
    if p['metadata']['name'] == ipod:
        p['status']['containerStatuses'][0]['imageID'] = ''
        p['status']['containerStatuses'][0].pop('containerID', None)
b.add('workloads', {'apiVersion': 'apps/v1', 'kind': 'ReplicaSet', 'metadata': b.meta('inventory-7d9c6b5f48', labels={'app': 'coolstore', 'component': 'inventory', 'pod-template-hash': '7d9c6b5f48'},
                                                                                     ann={'deployment.kubernetes.io/revision': '5'}, created=b.ago(days=9), owner=('apps/v1', 'Deployment', 'inventory'), kind='ReplicaSet'),
                    'spec': {'replicas': 0, 'selector': {'matchLabels': {'app': 'coolstore', 'component': 'inventory', 'pod-template-hash': '7d9c6b5f48'}},
                             'template': {'spec': {'containers': [{'name': 'inventory', 'image': IMGR % ('inventory-quarkus', '2.1.0')}]}}},
                    'status': {'replicas': 0, 'observedGeneration': 5}})
for d in ['catalog-database', 'inventory-database']:
    b.deploy(d, 'registry.redhat.io/rhel9/postgresql-15:1-82', 1, 5432, labels={'app': 'coolstore', 'component': d}, probe={'exec': {'command': ['/usr/libexec/check-container']}}, svc_port=5432)
b.event('Deployment', 'inventory', 'ScalingReplicaSet', 'Scaled down replica set inventory-7d9c6b5f48 to 0 from 1', b.T(ON - 1, 30), component='deployment-controller', api='apps/v1')
b.event('Deployment', 'inventory', 'ScalingReplicaSet', 'Scaled up replica set inventory-%s to 1' % IRS, b.T(ON - 1, 31), component='deployment-controller', api='apps/v1')
b.event('Pod', 'inventory-7d9c6b5f48-x8r2m', 'Killing', 'Stopping container inventory', b.T(ON - 1, 30), field='spec.containers{inventory}')
b.event('Pod', ipod, 'Scheduled', 'Successfully assigned coolstore/%s to %s' % (ipod, b.node_names[1]), b.T(ON - 1, 33), component='default-scheduler')
b.event('Pod', ipod, 'Pulling', 'Pulling image "quay.io/coolstore-demo/inventory-quarkus:2.1.1-rc1"', b.T(ON - 1, 35), last=b.T(57, 10), count=7, field='spec.containers{inventory}')
b.event('Pod', ipod, 'Failed', 'Failed to pull image "quay.io/coolstore-demo/inventory-quarkus:2.1.1-rc1": initializing source docker://quay.io/coolstore-demo/inventory-quarkus:2.1.1-rc1: reading manifest 2.1.1-rc1 in quay.io/coolstore-demo/inventory-quarkus: manifest unknown', b.T(ON - 1, 36), last=b.T(57, 11), count=7, typ='Warning', field='spec.containers{inventory}')
b.event('Pod', ipod, 'Failed', 'Error: ErrImagePull', b.T(ON - 1, 36), last=b.T(57, 11), count=7, typ='Warning', field='spec.containers{inventory}')
b.event('Pod', ipod, 'BackOff', 'Back-off pulling image "quay.io/coolstore-demo/inventory-quarkus:2.1.1-rc1"', b.T(ON - 1, 50), last=b.T(59, 44), count=41, field='spec.containers{inventory}')
b.event('Pod', ipod, 'Failed', 'Error: ImagePullBackOff', b.T(ON - 1, 50), last=b.T(59, 44), count=41, typ='Warning', field='spec.containers{inventory}')
b.event('Pod', cart[0], 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', b.T(12, 2), last=b.T(12, 32), count=3, typ='Warning', field='spec.containers{cart}')


def gw_fn(t, m, rnd, pod):
    ts = t.strftime('%b %d, %Y %I:%M:%S %p')
    if m >= ON and rnd.random() < 0.9:
        return ('SEVERE', '%s com.redhat.coolstore.gateway.GatewayVerticle lambda$getProducts$4\nSEVERE: Inventory call failed for itemId %d: io.netty.channel.AbstractChannel$AnnotatedConnectException: Connection refused: inventory/172.30.41.207:8080' % (ts, rnd.choice([329299, 329199, 165613, 165614, 165954, 444434, 444435, 444436])))
    return None


b.stream('gateway', gw, 7, gw_fn)


def web_fn(t, m, rnd, pod):
    if m >= ON:
        return ('error', '%s - Error retrieving products: Request failed with status code 500 (GET http://gateway:8080/api/products)' % iso(t, ms=True))
    return ('info', '%s - GET /services/products 200 %d ms' % (iso(t, ms=True), rnd.randint(30, 140)))


b.stream('web', web, 5, web_fn)


def ca_fn(t, m, rnd, pod):
    ts = t.strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (t.microsecond // 1000)
    if rnd.random() < 0.06:
        return ('WARN', '%s  WARN 1 --- [nio-8080-exec-%d] com.zaxxer.hikari.pool.PoolBase          : HikariPool-1 - Failed to validate connection org.postgresql.jdbc.PgConnection@%x (This connection has been closed.). Possibly consider using a shorter maxLifetime value.' % (ts, rnd.randint(1, 10), rnd.getrandbits(28)))
    return ('INFO', '%s  INFO 1 --- [nio-8080-exec-%d] c.r.coolstore.service.CatalogEndpoint    : Returning %d products' % (ts, rnd.randint(1, 10), 8))


b.stream('catalog', ca, 5, ca_fn)
b.log(b.T(12, 1), 'cart', cart[0], '%s WARN  [org.inf.HOTROD] (HotRod-client-async-pool-1-1) ISPN004005: Error received from the server: org.infinispan.server.hotrod.MissingFactoryException: Not allowed to unmarshall' % b.T(12, 1).strftime('%Y-%m-%d %H:%M:%S,123'), 'WARN')
b.log(b.T(12, 40), 'cart', cart[0], '%s INFO  [io.quarkus] (main) cart 2.1.0 on JVM (powered by Quarkus 3.8.5) started in 2.114s. Listening on: http://0.0.0.0:8080' % b.T(12, 40).strftime('%Y-%m-%d %H:%M:%S,456'), 'INFO')
for k in range(0, ON - 1):
    tt = b.T(k, 17)
    b.log(tt, 'inventory', 'inventory-7d9c6b5f48-x8r2m', '%s INFO  [com.red.coo.inv.InventoryResource] (executor-thread-%d) getAvailability itemId=%d quantity=%d' % (tt.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3], k % 8 + 1, 329299, 35 + k % 3), 'INFO')
tt = b.T(ON - 1, 30)
b.log(tt, 'inventory', 'inventory-7d9c6b5f48-x8r2m', '%s INFO  [io.quarkus] (Shutdown thread) inventory stopped in 0.041s' % tt.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3], 'INFO')

b.rng('sum by (route, code) (rate(vertx_http_server_requests_total{namespace="coolstore", service="gateway"}[5m]))', 'gateway requests/s by route and code',
      [({'route': '/api/products', 'code': '200'}, step_fn(4.8, 0.3, ON + 0.5)), ({'route': '/api/products', 'code': '500'}, step_fn(0, 4.5, ON + 0.5)),
       ({'route': '/api/cart/:cartId', 'code': '200'}, noisy(1.2))])
b.rng('sum by (code) (rate(http_server_requests_seconds_count{namespace="coolstore", service="catalog"}[5m]))', 'catalog requests/s by code', [({'code': '200'}, noisy(4.8))])
b.rng('kube_deployment_status_replicas_available{namespace="coolstore"}', 'available replicas by deployment',
      [({'deployment': 'inventory'}, step_fn(1, 0, ON - 0.5, rel=0)), ({'deployment': 'catalog'}, const(1)), ({'deployment': 'gateway'}, const(2)), ({'deployment': 'web'}, const(2)), ({'deployment': 'cart'}, const(1))])
b.rng('sum by (pod, reason) (kube_pod_container_status_waiting_reason{namespace="coolstore"})', 'containers waiting by reason',
      [({'pod': ipod, 'reason': 'ImagePullBackOff'}, lambda m, r: (1 if int(m * 2) % 3 else 0) if m >= ON else None), ({'pod': ipod, 'reason': 'ErrImagePull'}, lambda m, r: (0 if int(m * 2) % 3 else 1) if m >= ON else None)])
cpu = {p: noisy(0.03) for p in web + gw + ca + cart}
cpu['inventory-7d9c6b5f48-x8r2m'] = sometimes(noisy(0.02), lambda m: m < ON - 0.5)
mem = {p: noisy(MiB(180), .02) for p in cpu}
res_metrics(b, 'coolstore', cpu, mem)

b.notes = '''
# flt-coolstore-inventory-image — inventory rolled to a non-existent image tag (Recreate strategy) → ImagePullBackOff

**Incident.** At 11:41:30Z the `inventory` Deployment (strategy `Recreate`) was updated to
`quay.io/coolstore-demo/inventory-quarkus:2.1.1-rc1`, a tag that was never pushed. Recreate stopped the old 2.1.0 pod first;
the new pod cannot pull (`manifest unknown` → ErrImagePull/ImagePullBackOff), the `inventory` Service has no endpoints and the
gateway's per-product availability calls get `Connection refused` → gateway `/api/products` 500 → web "Error retrieving products".

**Chain.** web errors and gateway 500 (logs, metrics) → gateway SEVERE `Inventory call failed ... Connection refused: inventory/172.30.41.207:8080`
→ catalog healthy (200s, returns products) → inventory available replicas 0, pod Pending with waiting reason ImagePullBackOff
(`k8s/pods.yaml`, metrics) → events: ScalingReplicaSet (old RS to 0, new RS up), `Failed to pull image ... 2.1.1-rc1 ... manifest unknown`,
BackOff; Deployment Progressing=False ProgressDeadlineExceeded (`k8s/workloads.yaml`); old ReplicaSet with image 2.1.0.

**Decoys.** catalog Hikari "Failed to validate connection" warnings (question also points at catalog); cart Infinispan
unmarshall warning and readiness 503s at 11:12 during its restart.

**must_mention:** `inventory`, `image` (wrong image tag / ImagePullBackOff).

**Provenance.** AIOpsLab / ITBench wrong-image faults (e.g. `wrong_bin_usage`, non-existent image tag), Kubernetes ErrImagePull.
App: Red Hat Coolstore microservices demo (web Node.js, gateway Vert.x, catalog Spring Boot + postgres, inventory Quarkus + postgres, cart Quarkus + Infinispan).
Generated by /tmp/b8/c11.py (seed 1111).
'''
b.write()
