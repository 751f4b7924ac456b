from lib import *

b = B('flt-ftgo-kitchen-scaled-zero', 'FTGO orders stuck APPROVAL_PENDING, order details 500', '2026-12-03T14:00', 60, 'staging', 'stg-eks-euc1', 'ftgo',
      "FTGO staging: since ~14:28 new orders never leave APPROVAL_PENDING and GET /orders/{id} on the api gateway returns 500 for them. accounting-service was upgraded this afternoon. what's wrong?",
      ['kitchen-service', 'scale'], seed=1010)
ON = 28
b.nodes(['ip-10-73-%d-%d.eu-central-1.compute.internal' % (x, y) for x, y in [(9, 144), (22, 31), (40, 87)]], zone_prefix='eu-central-1', cpu='8', mem='32386996Ki', itype='m6i.2xlarge')
b.namespace('ftgo')
J = {'requests': {'cpu': '200m', 'memory': '512Mi'}, 'limits': {'memory': '768Mi'}}
EV = {'SPRING_DATASOURCE_URL': 'jdbc:mysql://mysql/ftgo', 'SPRING_DATASOURCE_USERNAME': 'mysqluser', 'SPRING_DATASOURCE_PASSWORD': {'valueFrom': {'secretKeyRef': {'name': 'ftgo-db-secret', 'key': 'password'}}},
      'EVENTUATELOCAL_KAFKA_BOOTSTRAP_SERVERS': 'ftgo-kafka:9092', 'EVENTUATELOCAL_ZOOKEEPER_CONNECTION_STRING': 'ftgo-zookeeper:2181', 'JAVA_OPTS': '-Xmx384m'}
IMG = 'msapatterns/ftgo-%s:0.2.0.RELEASE'
pods = {}
gw = b.deploy('ftgo-api-gateway', IMG % 'api-gateway', 2, 8080, labels={'application': 'ftgo', 'svc': 'ftgo-api-gateway'}, res=J, probe={'httpGet': {'path': '/actuator/health', 'port': 8080}},
              env={'ORDER_DESTINATIONS_ORDERSERVICEURL': 'http://ftgo-order-service:8080', 'ORDER_DESTINATIONS_ORDERHISTORYSERVICEURL': 'http://ftgo-order-history-service:8080',
                   'CONSUMER_DESTINATIONS_CONSUMERSERVICEURL': 'http://ftgo-consumer-service:8080', 'KITCHEN_DESTINATIONS_KITCHENSERVICEURL': 'http://ftgo-kitchen-service:8080',
                   'ACCOUNTING_DESTINATIONS_ACCOUNTINGSERVICEURL': 'http://ftgo-accounting-service:8080', 'DELIVERY_DESTINATIONS_DELIVERYSERVICEURL': 'http://ftgo-delivery-service:8080'})
for s in ['consumer-service', 'order-service', 'restaurant-service', 'order-history-service', 'delivery-service']:
    pods[s] = b.deploy('ftgo-' + s, IMG % s, 1, 8080, labels={'application': 'ftgo', 'svc': 'ftgo-' + s}, res=J, env=EV, probe={'httpGet': {'path': '/actuator/health', 'port': 8080}}, svc_port=8080)
pods['accounting-service'] = b.deploy('ftgo-accounting-service', 'msapatterns/ftgo-accounting-service:0.2.1.RELEASE', 1, 8080, labels={'application': 'ftgo', 'svc': 'ftgo-accounting-service'}, res=J, env=EV,
                                      probe={'httpGet': {'path': '/actuator/health', 'port': 8080}}, svc_port=8080, gen=5, rs_created=b.T(5, 12), pod_created=b.T(5, 13))
KRS = h(10, b.case, 'ftgo-kitchen-service', 'rs')
b.deploy('ftgo-kitchen-service', IMG % 'kitchen-service', 0, 8080, labels={'application': 'ftgo', 'svc': 'ftgo-kitchen-service'}, res=J, env=EV,
         probe={'httpGet': {'path': '/actuator/health', 'port': 8080}}, svc_port=8080, gen=3)
for o in b.objs['workloads']:
    if o['metadata']['name'] == 'ftgo-kitchen-service':
        o['metadata']['managedFields'] = [{'manager': 'kubectl', 'operation': 'Update', 'apiVersion': 'apps/v1', 'subresource': 'scale', 'time': iso(b.T(ON - 1, 52)), 'fieldsType': 'FieldsV1', 'fieldsV1': {'f:spec': {'f:replicas': {}}}}]
b.obj('services', 'v1', 'Endpoints', 'ftgo-kitchen-service', labels={'app': 'ftgo-kitchen-service'}, created=b.ago(days=30), extra={'subsets': []})
kf = b.deploy('ftgo-kafka', 'confluentinc/cp-kafka:7.6.1', 1, 9092, labels={'application': 'ftgo', 'svc': 'ftgo-kafka'}, kind='StatefulSet', probe=False, svc_port=9092)
my = b.deploy('mysql', 'msapatterns/mysql:0.2.0.RELEASE', 1, 3306, labels={'application': 'ftgo', 'svc': 'mysql'}, kind='StatefulSet', probe=False, svc_port=3306)
cdc = b.deploy('ftgo-cdc-service', 'eventuateio/eventuate-cdc-service:0.16.0.RELEASE', 1, 8080, labels={'application': 'ftgo', 'svc': 'ftgo-cdc-service'}, probe={'httpGet': {'path': '/actuator/health', 'port': 8080}})
b.event('Deployment', 'ftgo-accounting-service', 'ScalingReplicaSet', 'Scaled up replica set ftgo-accounting-service-%s to 1' % h(10, b.case, 'ftgo-accounting-service', 'rs'), b.T(5, 12), component='deployment-controller', api='apps/v1')
b.event('Deployment', 'ftgo-accounting-service', 'ScalingReplicaSet', 'Scaled down replica set ftgo-accounting-service-5c6b8d7f9 to 0 from 1', b.T(6, 1), component='deployment-controller', api='apps/v1')
b.event('Deployment', 'ftgo-kitchen-service', 'ScalingReplicaSet', 'Scaled down replica set ftgo-kitchen-service-%s to 0 from 1' % KRS, b.T(ON - 1, 52), component='deployment-controller', api='apps/v1')
kpod = 'ftgo-kitchen-service-%s-%s' % (KRS, h(5, 'kp'))
b.event('Pod', kpod, 'Killing', 'Stopping container ftgo-kitchen-service', b.T(ON - 1, 52), field='spec.containers{ftgo-kitchen-service}', host=b.node_names[1])
b.event('Pod', pods['accounting-service'][0], 'Unhealthy', 'Readiness probe failed: Get "http://10.73.22.118:8080/actuator/health": dial tcp 10.73.22.118:8080: connect: connection refused', b.T(5, 20), last=b.T(5, 50), count=4, typ='Warning', field='spec.containers{ftgo-accounting-service}')


def sb(t, lvl, th, logger, msg):
    return '%s %5s 1 --- [%15s] %-40s : %s' % (t.strftime('%Y-%m-%d %H:%M:%S.') + '%03d' % (t.microsecond // 1000), lvl, th[-15:], logger[-40:], msg)


oid = {'n': 4310}


def gw_fn(t, m, rnd, pod):
    oid['n'] += 1
    o = rnd.randint(4000, oid['n'])
    th = 'ctor-http-nio-%d' % rnd.randint(1, 4)
    if m >= ON and rnd.random() < 0.8:
        return ('ERROR', sb(t, 'ERROR', th, 'a.w.r.e.AbstractErrorWebExceptionHandler', '[%s-%d]  500 Server Error for HTTP GET "/orders/%d"\n\norg.springframework.web.reactive.function.client.WebClientRequestException: Connection refused: ftgo-kitchen-service/172.20.118.9:8080; nested exception is io.netty.channel.AbstractChannel$AnnotatedConnectException: Connection refused: ftgo-kitchen-service/172.20.118.9:8080\n\tSuppressed: reactor.core.publisher.FluxOnAssembly$OnAssemblyException: \nError has been observed at the following site(s):\n\t*__checkpoint ⇢ Request to GET http://ftgo-kitchen-service:8080/tickets/%d [DefaultWebClient]\n\tat net.chrisrichardson.ftgo.apiagateway.proxies.KitchenService.findTicketById(KitchenService.java:31)' % (rid(rnd, 8), rnd.randint(1, 900), o, o)))
    return None


b.stream('ftgo-api-gateway', gw, 4, gw_fn)


def os_fn(t, m, rnd, pod):
    oid['n'] += 1
    th = 'http-nio-8080-exec-%d' % rnd.randint(1, 10)
    out = [('INFO', sb(t, 'INFO', th, 'n.c.f.orderservice.domain.OrderService', 'Created order %d for consumer %d restaurant %d' % (oid['n'], rnd.randint(1, 40), rnd.randint(1, 6)))),
           ('INFO', sb(t, 'INFO', th, 'i.e.tram.sagas.orchestration.SagaManagerImpl', 'Saga CreateOrderSaga id=%s: sending command CreateTicket to channel kitchenService' % rid(rnd, 16)))]
    if m < ON:
        out.append(('INFO', sb(t + dt.timedelta(seconds=1), 'INFO', 'pool-3-thread-1', 'i.e.tram.sagas.orchestration.SagaManagerImpl', 'Saga CreateOrderSaga: received reply CreateTicketReply, order %d -> APPROVED' % oid['n'])))
    return out


b.stream('ftgo-order-service', pods['order-service'], 3, os_fn)
b.stream('ftgo-order-history-service', pods['order-history-service'], 0.6, lambda t, m, rnd, pod: ('WARN', sb(t, 'WARN', 'pool-2-thread-1', 'n.c.f.c.OrderHistoryDaoDynamoDb', 'Conditional check failed for orderId=%d (duplicate event), ignoring' % rnd.randint(4000, 4400))))
b.stream('ftgo-cdc-service', cdc, 1, lambda t, m, rnd, pod: ('INFO', sb(t, 'INFO', 'polling-thread-1', 'i.e.l.m.b.BinlogEntryReader', 'Processing binlog event, offset mysql-bin.000041:%d' % rnd.randint(1000000, 9000000))))
b.stream('ftgo-accounting-service', pods['accounting-service'], lambda m: 1 if m > 6 else 0, lambda t, m, rnd, pod: ('INFO', sb(t, 'INFO', 'pool-1-thread-1', 'n.c.f.a.domain.AccountingService', 'Authorized payment for order %d' % rnd.randint(4000, 4400))) if m < ON else None)
b.log(b.T(5, 44), 'ftgo-accounting-service', pods['accounting-service'][0], sb(b.T(5, 44), 'WARN', 'main', 'o.s.b.a.o.j.JpaBaseConfiguration$JpaWebConfiguration', 'spring.jpa.open-in-view is enabled by default. Therefore, database queries may be performed during view rendering.'), 'WARN')
for k in range(30):
    tt = b.T(0, k * 55 + 11)
    if tt < b.T(ON - 1, 52):
        b.log(tt, 'ftgo-kitchen-service', kpod, sb(tt, 'INFO', 'pool-1-thread-1', 'n.c.f.kitchenservice.domain.KitchenService', 'Created ticket %d for restaurant %d' % (4200 + k, k % 6 + 1)), 'INFO')
b.log(b.T(ON - 1, 52), 'ftgo-kitchen-service', kpod, sb(b.T(ON - 1, 52), 'INFO', 'SpringApplicationShutdownHook', 'i.e.m.k.c.MessageConsumerKafkaImpl', 'Closing consumer kitchenService-consumer'), 'INFO')

b.rng('sum by (uri, status) (rate(http_server_requests_seconds_count{namespace="ftgo", service="ftgo-api-gateway"}[5m]))', 'api-gateway requests/s by uri and status',
      [({'uri': '/orders/{orderId}', 'status': '200'}, step_fn(3.9, 0.7, ON + 1)), ({'uri': '/orders/{orderId}', 'status': '500'}, step_fn(0.01, 3.2, ON + 1)),
       ({'uri': '/orders', 'status': '200'}, noisy(3.0)), ({'uri': '/consumers/{consumerId}', 'status': '200'}, noisy(0.8))])
b.rng('sum by (state) (ftgo_orders{namespace="ftgo"})', 'orders by state (order-service gauge)',
      [({'state': 'APPROVAL_PENDING'}, lambda m, r: 2 + (0 if m < ON else 3.0 * (m - ON))), ({'state': 'APPROVED'}, lambda m, r: 4100 + 3.0 * min(m, ON))])
b.rng('sum by (consumergroup, topic) (kafka_consumergroup_lag{namespace="ftgo"})', 'kafka consumer group lag',
      [({'consumergroup': 'kitchenService', 'topic': 'kitchenService'}, lambda m, r: 0 if m < ON else 3.0 * 60 * (m - ON)),
       ({'consumergroup': 'orderService', 'topic': 'orderService-reply'}, noisy(1, .9)), ({'consumergroup': 'accountingService', 'topic': 'accountingService'}, noisy(0.5, 1))])
b.rng('kube_deployment_status_replicas_available{namespace="ftgo"}', 'available replicas by deployment',
      [({'deployment': d}, const(1 if d != 'ftgo-api-gateway' else 2)) for d in ['ftgo-api-gateway', 'ftgo-consumer-service', 'ftgo-order-service', 'ftgo-restaurant-service', 'ftgo-order-history-service', 'ftgo-delivery-service', 'ftgo-accounting-service', 'ftgo-cdc-service']]
      + [({'deployment': 'ftgo-kitchen-service'}, step_fn(1, 0, ON - 0.1, rel=0))])
cpu = {p: noisy(0.08) for v in pods.values() for p in v}
cpu.update({p: noisy(0.1) for p in gw})
cpu[kpod] = sometimes(noisy(0.07), lambda m: m < ON)
mem = {p: noisy(MiB(420), .02) for p in cpu}
mem[kpod] = sometimes(noisy(MiB(430), .02), lambda m: m < ON)
res_metrics(b, 'ftgo', cpu, mem)

b.notes = '''
# flt-ftgo-kitchen-scaled-zero — ftgo-kitchen-service scaled to 0 replicas

**Incident.** At 14:27:52Z someone ran `kubectl scale --replicas=0` on `ftgo-kitchen-service` (managedFields manager kubectl,
subresource scale; deployment-controller event "Scaled down ... to 0 from 1"). No kitchen pod → (1) CreateOrderSaga's
`CreateTicket` commands accumulate in the `kitchenService` Kafka topic (consumer lag grows), orders stay APPROVAL_PENDING;
(2) the API gateway's order-details composition calls `ftgo-kitchen-service:8080/tickets/{id}` and gets `Connection refused`
(Service without endpoints) → 500.

**Chain.** gateway 500 on `/orders/{orderId}` (metrics; logs WebClientRequestException Connection refused: ftgo-kitchen-service) →
order-service keeps sending CreateTicket but stops receiving replies (logs), APPROVAL_PENDING rising, kitchenService consumer lag
rising (metrics) → ftgo-kitchen-service available replicas 1→0, Deployment spec.replicas 0, empty Endpoints, scale-down event,
kitchen pod's last log "Closing consumer" (`k8s/workloads.yaml`, `k8s/services.yaml`, `k8s/events.yaml`, logs).

**Decoys.** accounting-service upgraded to 0.2.1 at 14:05 (named in the question; readiness refusals during its start-up only);
order-history DynamoDB duplicate-event warnings; CDC binlog chatter; JPA open-in-view warning.

**must_mention:** `kitchen-service`, `scale` (scaled to zero / scale-down).

**Provenance.** AIOpsLab `scale_pod_zero` fault (`ScalePodSocialNet` style: deployment replicas → 0); ITBench availability faults.
App: microservices-patterns/ftgo-application (Chris Richardson; api-gateway Spring Cloud Gateway with *_DESTINATIONS_* URLs, Eventuate Tram
sagas over Kafka, CreateOrderSaga → kitchenService, mysql + CDC). Generated by /tmp/b8/c10.py (seed 1010).
'''
b.write()
