from lib import *

b = B('flt-acmeair-booking-db-authz', 'AcmeAir: booking flights fails', '2026-12-10T16:00', 60, 'test', 'test-iks-fra02', 'acmeair',
      "acmeair test: people can log in and search flights, but 'Book' fails with an error page since ~16:21 (POST /booking/bookflights 500). there are always some 401s on auth, is that it? please find the root cause.",
      ['booking', 'auth'], seed=1212)
ON = 21
b.nodes(['10.194.%d.%d' % (x, y) for x, y in [(12, 71), (12, 90), (33, 5)]], zone_prefix='fra02-', kubelet='v1.30.6+IKS', runtime='containerd://1.7.23',
        os_image='Ubuntu 24.04.1 LTS', itype='b3c.4x16.encrypted')
b.namespace('acmeair')
LIB = {'requests': {'cpu': '200m', 'memory': '384Mi'}, 'limits': {'memory': '640Mi'}}
mk = lambda s: b.deploy('acmeair-%s' % s, 'acmeair/acmeair-%s-java:5.2.0' % s, 1, 9080, labels={'app': 'acmeair-%s' % s, 'name': 'acmeair-%s-deployment' % s},
                        res=LIB, probe={'httpGet': {'path': '/health', 'port': 9080}}, svc_port=9080,
                        env=dict({'LICENSE': 'accept', 'JVM_ARGS': '-Dcom.acmeair.client.CustomerClient/mp-rest/url=http://acmeair-customer-service:9080/customer -Dcom.acmeair.client.FlightClient/mp-rest/url=http://acmeair-flight-service:9080/flight',
                                  'SECURE_SERVICE_CALLS': 'true'}, **({'MONGO_HOST': 'acmeair-%s-db' % s.replace('service', ''), 'MONGO_PORT': '27017', 'MONGO_DBNAME': 'acmeair',
                                                                       'MONGO_USER': 'acmeair_%s' % s.replace('service', ''), 'MONGO_PASSWORD': {'valueFrom': {'secretKeyRef': {'name': 'acmeair-%s-db' % s.replace('service', ''), 'key': 'password'}}}} if s in ('bookingservice', 'customerservice', 'flightservice') else {})),
                        svc_name='acmeair-%s' % s.replace('service', '-service'))
ms = mk('mainservice')
au = mk('authservice')
bk = mk('bookingservice')
cu = mk('customerservice')
fl = mk('flightservice')
dbs = {}
for d in ['booking', 'customer', 'flight']:
    dbs[d] = b.deploy('acmeair-%s-db' % d, 'mongo:5.0.29', 1, 27017, labels={'app': 'acmeair-%s-db' % d}, kind='StatefulSet', probe={'exec': {'command': ['mongosh', '--quiet', '--eval', 'db.adminCommand("ping")']}}, svc_port=27017,
                      env={'MONGO_INITDB_ROOT_USERNAME': 'root', 'MONGO_INITDB_ROOT_PASSWORD': {'valueFrom': {'secretKeyRef': {'name': 'acmeair-%s-db' % d, 'key': 'root-password'}}}})
b.event('Pod', fl[0], 'Unhealthy', 'Readiness probe failed: Get "http://172.30.12.14:9080/health": context deadline exceeded', b.T(3, 0), typ='Warning', field='spec.containers{acmeair-flightservice}')
b.event('Pod', dbs['booking'][0], 'Pulled', 'Container image "mongo:5.0.29" already present on machine', b.ago(days=2), field='spec.containers{acmeair-booking-db}')


def lts(t):
    return t.strftime('[%m/%d/%y, %H:%M:%S:') + '%03d UTC]' % (t.microsecond // 1000)


def bk_fn(t, m, rnd, pod):
    fid = 'AA%d' % rnd.randint(0, 99)
    cust = 'uid%d@email.com' % rnd.randint(0, 999)
    if m >= ON:
        return ('E', '%s %08x com.acmeair.mongo.services.BookingServiceImpl                  E Error booking flight %s for %s\ncom.mongodb.MongoCommandException: Command failed with error 13 (Unauthorized): \'not authorized on acmeair to execute command { insert: "booking", ordered: true, $db: "acmeair", lsid: { id: UUID("%s") } }\' on server acmeair-booking-db:27017. The full response is {"ok": 0.0, "errmsg": "not authorized on acmeair to execute command { insert: \\"booking\\", ... }", "code": 13, "codeName": "Unauthorized"}\n\tat com.mongodb.internal.connection.ProtocolHelper.getCommandFailureException(ProtocolHelper.java:198)\n\tat com.mongodb.internal.operation.MixedBulkWriteOperation.execute(MixedBulkWriteOperation.java:185)\n\tat com.mongodb.client.internal.MongoCollectionImpl.insertOne(MongoCollectionImpl.java:466)\n\tat com.acmeair.mongo.services.BookingServiceImpl.bookFlight(BookingServiceImpl.java:72)' % (lts(t), rnd.randint(40, 90), fid, cust, uid(rnd.random())))
    return ('I', '%s %08x com.acmeair.web.BookingServiceRest                             I Booked flight %s for %s, bookingId=%s' % (lts(t), rnd.randint(40, 90), fid, cust, uid(rnd.random())[:8]))


b.stream('acmeair-bookingservice', bk, 4, bk_fn)


def au_fn(t, m, rnd, pod):
    if rnd.random() < 0.15:
        return ('E', '%s %08x com.ibm.ws.security.mp.jwt.tai.MicroProfileJwtTAI                E CWWKS5523E: The MicroProfile JWT feature cannot authenticate the request because the token that is included in the request cannot be validated. CWWKS5524E: The MicroProfile JWT feature encountered an error while creating a JWT by using the [defaultMpJwt] configuration and the token included in the request. CWWKS6025E: The JSON Web Token (JWT) is not valid because its expiration time [exp] has passed.' % (lts(t), rnd.randint(40, 90)))
    return ('I', '%s %08x com.acmeair.web.AuthServiceRest                                I login: uid%d@email.com' % (lts(t), rnd.randint(40, 90), rnd.randint(0, 999)))


b.stream('acmeair-authservice', au, 2.5, au_fn)
b.stream('acmeair-flightservice', fl, 5, lambda t, m, rnd, pod: ('I', '%s %08x com.acmeair.web.FlightServiceRest                              I queryflights from=%s to=%s found=%d' % (lts(t), rnd.randint(40, 90), rnd.choice(['CDG', 'FRA', 'JFK', 'LHR']), rnd.choice(['HKG', 'NRT', 'SFO', 'BOM']), rnd.randint(1, 4))))
b.stream('acmeair-customerservice', cu, 1.5, lambda t, m, rnd, pod: ('W', '%s %08x com.ibm.ws.webcontainer.servlet.FileServlet                      W SRVE0190E: File not found: /favicon.ico' % (lts(t), rnd.randint(40, 90))) if rnd.random() < 0.2 else ('I', '%s %08x com.acmeair.web.CustomerServiceRest                            I getCustomer uid%d@email.com' % (lts(t), rnd.randint(40, 90), rnd.randint(0, 999))))


def mj(t, s, c, i, ctx, msg, attr):
    return json.dumps({"t": {"$date": iso(t, ms=True).replace('Z', '+00:00')}, "s": s, "c": c, "id": i, "ctx": ctx, "msg": msg, "attr": attr}, separators=(',', ':'))


def bdb_fn(t, m, rnd, pod):
    conn = 'conn%d' % rnd.randint(100, 140)
    out = []
    if rnd.random() < 0.15:
        out.append(('I', mj(t, 'I', 'ACCESS', 20250, conn, 'Authentication succeeded', {'mechanism': 'SCRAM-SHA-256', 'speculative': True, 'principalName': 'acmeair_booking', 'authenticationDatabase': 'acmeair', 'remote': '172.30.12.%d:%d' % (55, rnd.randint(40000, 60000)), 'extraInfo': {}})))
    if m >= ON:
        out.append(('I', mj(t, 'I', 'ACCESS', 20436, conn, 'Checking authorization failed', {'error': {'code': 13, 'codeName': 'Unauthorized', 'errmsg': 'not authorized on acmeair to execute command { insert: "booking", ordered: true, $db: "acmeair" }'}})))
    return out or None


b.stream('acmeair-booking-db', dbs['booking'], 4, bdb_fn)
tt = b.T(ON - 1, 14)
b.log(tt, 'acmeair-booking-db', dbs['booking'][0], mj(tt, 'I', 'NETWORK', 22943, 'listener', 'Connection accepted', {'remote': '127.0.0.1:51522', 'uuid': uid('c'), 'connectionId': 212, 'connectionCount': 9}), 'I')
b.log(tt + dt.timedelta(milliseconds=40), 'acmeair-booking-db', dbs['booking'][0], mj(tt + dt.timedelta(milliseconds=40), 'I', 'NETWORK', 51800, 'conn212', 'client metadata', {'remote': '127.0.0.1:51522', 'client': 'conn212', 'doc': {'application': {'name': 'mongosh 2.3.2'}, 'driver': {'name': 'nodejs|mongosh', 'version': '6.10.0|2.3.2'}}}), 'I')
b.log(tt + dt.timedelta(milliseconds=90), 'acmeair-booking-db', dbs['booking'][0], mj(tt + dt.timedelta(milliseconds=90), 'I', 'ACCESS', 20250, 'conn212', 'Authentication succeeded', {'mechanism': 'SCRAM-SHA-256', 'speculative': True, 'principalName': 'root', 'authenticationDatabase': 'admin', 'remote': '127.0.0.1:51522', 'extraInfo': {}}), 'I')
tt2 = b.T(ON - 1, 51)
b.log(tt2, 'acmeair-booking-db', dbs['booking'][0], mj(tt2, 'I', 'NETWORK', 22944, 'conn212', 'Connection ended', {'remote': '127.0.0.1:51522', 'uuid': uid('c'), 'connectionId': 212, 'connectionCount': 8}), 'I')
for d in ('customer', 'flight'):
    b.stream('acmeair-%s-db' % d, dbs[d], 0.3, lambda t, m, rnd, pod: ('I', mj(t, 'I', 'STORAGE', 22430, 'Checkpointer', 'WiredTiger message', {'message': '[%d:%d][1:0x7f2c][WT_SESSION.checkpoint] saving checkpoint snapshot min: %d, snapshot max: %d snapshot count: 0, oldest timestamp: (0, 0) , meta checkpoint timestamp: (0, 0) base write gen: 1' % (int(t.timestamp()), rnd.randint(0, 999999), rnd.randint(1000, 9000), rnd.randint(1000, 9000))})))

b.rng('sum by (service, code) (rate(nginx_ingress_controller_requests{namespace="acmeair"}[5m]))', 'ingress requests/s by backend service and code',
      [({'service': 'acmeair-booking-service', 'code': '200'}, step_fn(4.0, 0.9, ON + 1)), ({'service': 'acmeair-booking-service', 'code': '500'}, step_fn(0, 3.1, ON + 1)),
       ({'service': 'acmeair-flight-service', 'code': '200'}, noisy(5.0)), ({'service': 'acmeair-auth-service', 'code': '200'}, noisy(2.1)),
       ({'service': 'acmeair-auth-service', 'code': '401'}, noisy(0.38, .3)), ({'service': 'acmeair-customer-service', 'code': '200'}, noisy(1.5))])
b.rng('sum by (service) (rate(mongodb_ssm_metrics_commands_insert_failed_total{namespace="acmeair"}[5m]))', 'mongodb failed insert commands/s by db service',
      [({'service': 'acmeair-booking-db'}, step_fn(0, 3.1, ON + 1)), ({'service': 'acmeair-customer-db'}, const(0)), ({'service': 'acmeair-flight-db'}, const(0))])
b.rng('sum by (service) (rate(mongodb_ssm_metrics_commands_insert_total{namespace="acmeair"}[5m]))', 'mongodb insert commands/s by db service',
      [({'service': 'acmeair-booking-db'}, noisy(4.0)), ({'service': 'acmeair-customer-db'}, noisy(0.1, .5)), ({'service': 'acmeair-flight-db'}, const(0))])
b.rng('mongodb_up{namespace="acmeair"}', 'mongodb up', [({'service': 'acmeair-%s-db' % d}, const(1)) for d in dbs])
b.rng('histogram_quantile(0.95, sum by (le) (rate(base_REST_request_seconds_bucket{namespace="acmeair", app="acmeair-bookingservice"}[5m])))', 'bookingservice p95 REST latency (s)', [({}, step_fn(0.045, 0.012, ON + 1, rel=.15))])
cpu = {p: noisy(0.05) for p in ms + au + bk + cu + fl}
mem = {p: noisy(MiB(330), .02) for p in cpu}
res_metrics(b, 'acmeair', cpu, mem)

b.notes = '''
# flt-acmeair-booking-db-authz — readWrite role revoked from the booking service's MongoDB user

**Incident.** At 16:20:14Z someone connected to `acmeair-booking-db` from inside the pod (mongosh via 127.0.0.1, authenticated as
`root`, connection ended 16:20:51Z) and revoked the `readWrite` role on `acmeair` from user `acmeair_booking`. The booking service
still *authenticates* fine, but every insert into `booking` fails with `Command failed with error 13 (Unauthorized): not authorized
on acmeair to execute command { insert: "booking" ... }` → POST /booking/bookflights 500.

**Chain.** ingress 500 for acmeair-booking-service (metrics) → bookingservice `MongoCommandException ... error 13 (Unauthorized)` (logs)
→ booking-db: `Authentication succeeded` for acmeair_booking but `Checking authorization failed` code 13 from 16:21, failed inserts
metric (logs, metrics) → the root mongosh session on 127.0.0.1 just before onset (booking-db logs). Pods, DB up, no deploys.

**Decoys.** authservice CWWKS5523E/CWWKS6025E expired-JWT errors and steady 401s all window (the question points at them);
customerservice favicon SRVE0190E; flightservice readiness timeout at 16:03; WiredTiger checkpoint messages.

**must_mention:** `booking`, `auth` (authorization / Unauthorized / revoked auth).

**Provenance.** AIOpsLab `revoke_auth` MongoDB faults (e.g. `revoke_auth_mongodb-geo`/`-rate`: `revokeRolesFromUser` readWrite) and
`user_unregistered`. App: blueperf AcmeAir microservices (acmeair-mainservice/authservice/bookingservice/customerservice/flightservice on
Open Liberty :9080 with MP JWT, MongoDB per service). Generated by /tmp/b8/c12.py (seed 1212).
'''
b.write()
