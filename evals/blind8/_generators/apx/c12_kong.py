from lib import *
import math

b = Bundle("apx-kong-kic-rbac-endpoints", "orders-api 502 via Kong after deploy", "2026-01-27T09:30:00Z", "2026-01-27T10:40:00Z",
           "test", "test-eks-euw1",
           "test: everything under api.test.acme.io/orders returns 502 from kong since the 10:02 orders-api deploy. the new orders-api pods "
           "are Ready and a port-forward to the orders-api service works fine. what's going on?", 1212)
b.ns = "kong"
T = P
rb = T("2026-01-27T09:41:20Z")
dep = T("2026-01-27T10:02:10Z")
nodes = mknodes(b, ["ip-10-20-12-41.eu-west-1.compute.internal", "ip-10-20-47-150.eu-west-1.compute.internal", "ip-10-20-70-8.eu-west-1.compute.internal"])
b.namespace("kong", {"environment": "test"})
b.namespace("orders", {"environment": "test"})
kl = {"app.kubernetes.io/name": "kong", "app.kubernetes.io/instance": "kong", "app.kubernetes.io/component": "app"}
ing = b.container("ingress-controller", "kong/kubernetes-ingress-controller:3.3.1", [("cmetrics", 10255), ("cstatus", 10254)],
                  {"CONTROLLER_KONG_ADMIN_URL": "https://localhost:8444", "CONTROLLER_PUBLISH_SERVICE": "kong/kong-kong-proxy", "CONTROLLER_INGRESS_CLASS": "kong", "CONTROLLER_ELECTION_ID": "kong-ingress-controller-leader-kong"},
                  {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}, liveness=b.http_probe("/healthz", 10254), readiness=b.http_probe("/readyz", 10254))
kp = app(b, "kong-kong", "kong", "kong:3.7.1", 2, [("proxy", 8000), ("proxy-tls", 8443), ("status", 8100)], nodes, labels=kl, container_name="proxy",
         env={"KONG_DATABASE": "off", "KONG_PROXY_ACCESS_LOG": "/dev/stdout", "KONG_PROXY_ERROR_LOG": "/dev/stderr", "KONG_ADMIN_LISTEN": "127.0.0.1:8444 http2 ssl", "KONG_ROUTER_FLAVOR": "traditional_compatible"},
         extra_containers=[ing], readiness=b.http_probe("/status/ready", "status"), liveness=b.http_probe("/status", "status"), sa="kong-kong",
         created="2025-05-01T10:00:00Z", pod_created=["2026-01-20T08:00:00Z", "2026-01-20T08:01:10Z"], no_service=True)
K = [pname(p) for p in kp]
b.service("kong-kong-proxy", "kong", kl, [("kong-proxy", 80, 8000), ("kong-proxy-tls", 443, 8443)], type_="LoadBalancer", endpoints=b.eps_for(kp))
ol = {"app": "orders-api"}
oc = b.container("orders-api", "registry.acme.io/orders/orders-api:2.41.0", 8080, {"SPRING_PROFILES_ACTIVE": "test"}, {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
                 readiness=b.http_probe("/actuator/health/readiness", 8080), liveness=b.http_probe("/actuator/health/liveness", 8080, 10, 2))
op = app(b, "orders-api", "orders", "registry.acme.io/orders/orders-api:2.41.0", 3, 8080, nodes, labels=ol, env={"SPRING_PROFILES_ACTIVE": "test"},
         readiness=b.http_probe("/actuator/health/readiness", 8080), revision=44, created="2025-05-01T10:00:00Z",
         pod_created=["2026-01-27T10:02:11Z", "2026-01-27T10:02:52Z", "2026-01-27T10:03:31Z"], rs_created=iso(dep),
         old_rs=("8c6b5f9d47", 43, [dict(oc, image="registry.acme.io/orders/orders-api:2.40.3")], "2026-01-21T14:00:00Z"))
O = [pname(p) for p in op]
old_ips = ["10.20.13.201", "10.20.45.77", "10.20.71.19"]
b.raw("ingress.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                       "metadata": b.meta("Ingress", "orders-api", "orders", ol, {"konghq.com/strip-path": "false", "konghq.com/plugins": "orders-rate-limit"}, "2025-05-01T10:00:00Z"),
                       "spec": {"ingressClassName": "kong", "rules": [{"host": "api.test.acme.io", "http": {"paths": [{"path": "/orders", "pathType": "Prefix", "backend": {"service": {"name": "orders-api", "port": {"number": 8080}}}}]}}]},
                       "status": {"loadBalancer": {"ingress": [{"hostname": "k8s-kong-kongkong-3f1e2a9c1b-4411223344.elb.eu-west-1.amazonaws.com"}]}}})
b.raw("ingress.yaml", {"apiVersion": "configuration.konghq.com/v1", "kind": "KongPlugin", "metadata": b.meta("KongPlugin", "orders-rate-limit", "orders", None, None, "2025-05-01T10:00:00Z"),
                       "plugin": "rate-limiting", "config": {"minute": 600, "policy": "local"}})
rules_full = [{"apiGroups": [""], "resources": ["endpoints", "nodes", "pods", "secrets", "services", "namespaces"], "verbs": ["list", "watch"]},
              {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
              {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "ingressclasses"], "verbs": ["get", "list", "watch"]},
              {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["get", "patch", "update"]},
              {"apiGroups": ["configuration.konghq.com"], "resources": ["kongplugins", "kongclusterplugins", "kongconsumers", "kongingresses", "kongupstreampolicies", "tcpingresses", "udpingresses"], "verbs": ["get", "list", "watch"]},
              {"apiGroups": ["gateway.networking.k8s.io"], "resources": ["gateways", "httproutes", "gatewayclasses"], "verbs": ["get", "list", "watch"]}]
b.add("rbac.yaml", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": b.meta("ClusterRole", "kong-kong", None, dict(kl, **{"app.kubernetes.io/managed-by": "kustomize", "acme.io/rbac-baseline": "v2"}),
                                       {"acme.io/last-applied-by": "flux/rbac-hardening", "acme.io/last-applied-at": "2026-01-27T09:41:19Z", "acme.io/source": "platform-policies@f31c9e0 'trim controller ClusterRoles to audited verbs'"}, "2025-05-01T10:00:00Z"),
                    "rules": rules_full})
b.add("rbac.yaml", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": b.meta("ClusterRoleBinding", "kong-kong", None, kl, None, "2025-05-01T10:00:00Z"),
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kong-kong"},
                    "subjects": [{"kind": "ServiceAccount", "name": "kong-kong", "namespace": "kong"}]})
b.add("rbac.yaml", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": b.meta("ServiceAccount", "kong-kong", "kong", kl, None, "2025-05-01T10:00:00Z")})
b.event("Deployment", "orders-api", "orders", "ScalingReplicaSet", "Scaled up replica set orders-api-%s to 1" % op[0]["metadata"]["labels"]["pod-template-hash"], iso(dep), component="deployment-controller", api="apps/v1")
b.event("Deployment", "orders-api", "orders", "ScalingReplicaSet", "Scaled down replica set orders-api-8c6b5f9d47 to 0 from 1", "2026-01-27T10:04:02Z", component="deployment-controller", api="apps/v1")
for k, p in enumerate(op):
    b.event("Pod", O[k], "orders", "Unhealthy", "Readiness probe failed: Get \"http://%s:8080/actuator/health/readiness\": dial tcp %s:8080: connect: connection refused" % (p["status"]["podIP"], p["status"]["podIP"]),
            p["metadata"]["creationTimestamp"], count=2, type_="Warning", host=p["spec"]["nodeName"], fieldPath="spec.containers{orders-api}")
b.event("Ingress", "orders-api", "orders", "KongConfigurationApplyFailed", "failed to apply Kong configuration for plugin orders-rate-limit: field 'minute' warn: deprecated redis fields used", "2026-01-27T09:35:02Z", type_="Warning", component="kong-client", api="networking.k8s.io/v1")

rng = b.rng


def klog_ic(t, p, lvl, msg):
    b.log(t, "kong-ingress-controller", p, msg, lvl, container="ingress-controller", ns="kong")


def reflector(t):
    p = rng.choice(K)
    klog_ic(t, p, "warning", 'W%s       1 reflector.go:547] k8s.io/client-go@v0.30.3/tools/cache/reflector.go:232: failed to list *v1.EndpointSlice: endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:kong:kong-kong" cannot list resource "endpointslices" in API group "discovery.k8s.io" at the cluster scope' % t.strftime("%m%d %H:%M:%S.%f"))
    klog_ic(t + dt.timedelta(milliseconds=1), p, "error", 'E%s       1 reflector.go:150] k8s.io/client-go@v0.30.3/tools/cache/reflector.go:232: Failed to watch *v1.EndpointSlice: failed to list *v1.EndpointSlice: endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:kong:kong-kong" cannot list resource "endpointslices" in API group "discovery.k8s.io" at the cluster scope' % t.strftime("%m%d %H:%M:%S.%f"))


b.every(rb + dt.timedelta(seconds=2), b.end, 50, reflector)


def sync(t):
    klog_ic(t, rng.choice(K), "info", json.dumps({"level": "info", "time": iso(t), "logger": "setup.dataplane-synchronizer", "msg": "successfully synced configuration to Kong", "update_strategy": "InMemory", "v": 0}))


b.every(b.start, b.end, 30, sync)
klog_ic(T("2026-01-27T09:35:02Z"), K[0], "error", json.dumps({"level": "error", "time": "2026-01-27T09:35:02Z", "logger": "kong-client", "msg": "plugin orders-rate-limit: deprecated field used", "v": 0}))


def proxy(t):
    p = rng.choice(K)
    route = rng.choice(["/orders/v1/orders?status=open", "/orders/v1/orders/%d" % rng.randint(10000, 99999), "/orders/v1/carts/%s" % b.uid("c", t.isoformat())[:8]])
    other = rng.random() < 0.4
    ts = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
    ip = "10.20.%d.%d" % (rng.randint(0, 80), rng.randint(2, 250))
    if other:
        b.log(t, "kong-proxy", p, '%s - - [%s] "GET %s HTTP/1.1" 200 %d "-" "okhttp/4.12.0" kong_request_id: "%s"' % (ip, ts, rng.choice(["/catalog/v2/items?page=1", "/users/v1/me", "/catalog/v2/items/%d" % rng.randint(1, 5000)]), rng.randint(200, 9000), rid(rng, 32)), None, container="proxy", ns="kong")
        return
    if t < dep + dt.timedelta(seconds=40):
        b.log(t, "kong-proxy", p, '%s - - [%s] "GET %s HTTP/1.1" 200 %d "-" "okhttp/4.12.0" kong_request_id: "%s"' % (ip, ts, route, rng.randint(200, 4000), rid(rng, 32)), None, container="proxy", ns="kong")
    else:
        up = rng.choice(old_ips)
        if rng.random() < 0.5:
            b.log(t, "kong-proxy", p, '%s [error] 1287#0: *%d connect() failed (113: Host is unreachable) while connecting to upstream, client: %s, server: kong, request: "GET %s HTTP/1.1", upstream: "http://%s:8080%s", host: "api.test.acme.io", request_id: "%s"' % (t.strftime("%Y/%m/%d %H:%M:%S"), rng.randint(40000, 90000), ip, route, up, route, rid(rng, 32)), "error", container="proxy", ns="kong")
        b.log(t + dt.timedelta(milliseconds=3), "kong-proxy", p, '%s - - [%s] "GET %s HTTP/1.1" 502 %d "-" "okhttp/4.12.0" kong_request_id: "%s"' % (ip, ts, route, 126, rid(rng, 32)), None, container="proxy", ns="kong")


b.every(b.start, b.end, 2.5, proxy)


def orders(t):
    if t < dep:
        p = "orders-api-8c6b5f9d47-" + b.hsh(5, "o", rng.randint(0, 2))
    else:
        p = rng.choice(O)
    if t > dep + dt.timedelta(seconds=60) and rng.random() < 0.85:
        return
    b.log(t, "orders-api", p, "%s  INFO 1 --- [orders-api] [nio-8080-exec-%d] c.a.orders.web.OrderController : GET /orders/v1/orders status=200 duration=%dms" % (iso(t, True), rng.randint(1, 10), rng.randint(8, 90)), "INFO", container="orders-api", ns="orders")


b.every(b.start, b.end, 4, orders)
for k in range(3):
    t = T(op[k]["metadata"]["creationTimestamp"]) + dt.timedelta(seconds=24)
    b.log(t, "orders-api", O[k], "%s  INFO 1 --- [orders-api] [           main] c.a.orders.OrdersApplication : Started OrdersApplication in 21.417 seconds (process running for 23.102)" % iso(t, True), "INFO", container="orders-api", ns="orders")


def cds(code):
    def f(t, i):
        base = 32 + 4 * math.sin(i / 7)
        bad = t >= dep + dt.timedelta(seconds=50)
        if code == "200":
            return b.noise(base * (0.02 if bad else 0.995))
        if code == "502":
            return b.noise(base * 0.98, 0.05) if bad else 0.0
        if code == "429":
            return b.noise(0.1, 0.6)
    return f


b.rng_series('sum by (code) (rate(kong_http_requests_total{namespace="kong", service="orders.orders-api.8080"}[5m]))', "Kong requests for orders-api by code", [({"code": c}, cds(c)) for c in ["200", "429", "502"]])
b.rng_series('sum by (code) (rate(kong_http_requests_total{namespace="kong", service="catalog.catalog-api.8080"}[5m]))', "Kong requests for catalog-api by code", [({"code": "200"}, lambda t, i: b.noise(21))])
b.rng_series('sum by (code) (rate(http_server_requests_seconds_count{namespace="orders", service="orders-api"}[5m]))', "orders-api server-side requests", [({"code": "200"}, lambda t, i: b.noise(32) if t < dep + dt.timedelta(seconds=50) else b.noise(0.5, 0.5))])
b.rng_series('sum by (success) (rate(ingress_controller_configuration_push_count{namespace="kong"}[5m]))', "KIC config pushes", [({"success": "true"}, lambda t, i: b.noise(0.033, 0.05)), ({"success": "false"}, lambda t, i: 0)])
b.rng_series('sum by (resource, code) (rate(apiserver_request_total{verb=~"LIST|WATCH", resource="endpointslices", username="system:serviceaccount:kong:kong-kong"}[5m]))', "API requests by the Kong SA for endpointslices",
             [({"resource": "endpointslices", "code": "200"}, lambda t, i: b.noise(0.02, 0.3) if t < rb else 0), ({"resource": "endpointslices", "code": "403"}, lambda t, i: None if t < rb else b.noise(0.04, 0.2))])
b.rng_series('kube_deployment_status_replicas_available{namespace="orders", deployment="orders-api"}', "orders-api available", [({"deployment": "orders-api"}, lambda t, i: 3)], fmt="%d")
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"kong|orders"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in K + O], fmt="%d")

notes = """
# apx-kong-kic-rbac-endpoints — Kong Ingress Controller lost permission to watch EndpointSlices; upstream targets went stale

**Incident.** Kong (DB-less, KIC 3.3, ns `kong`, test). At 09:41:19 Flux applies a "RBAC hardening" kustomization that trims the
`kong-kong` ClusterRole to an audited list; the list predates KIC's switch to EndpointSlices and omits `discovery.k8s.io/endpointslices`.
KIC's informer now fails (`endpointslices.discovery.k8s.io is forbidden: User "system:serviceaccount:kong:kong-kong" cannot list ...`) but it
keeps syncing its last known configuration successfully, so nothing looks broken. At 10:02 the routine orders-api deploy replaces all pods:
Kong's upstream targets still point at the old pod IPs (10.20.13.201, 10.20.45.77, 10.20.71.19) -> `connect() failed (113: Host is
unreachable)` -> 502 for every /orders request. Port-forward/Service work because kube-proxy has the new endpoints.

**Chain / evidence.** 502s only for orders-api (kong_http_requests_total by service, kong-proxy access/error logs with upstream = old IPs;
orders-api server-side traffic drops to ~0) -> orders-api pods Ready with new IPs (k8s/pods.yaml, EndpointSlice in services.yaml) ->
KIC reflector errors `failed to list *v1.EndpointSlice ... forbidden` since 09:41 (ingress-controller container logs), apiserver 403s for the
Kong SA (metrics) while config pushes still report success -> ClusterRole `kong-kong` (k8s/rbac.yaml) without endpointslices, annotations
showing the Flux rbac-hardening apply at 09:41:19.

**Decoys.** The orders-api deploy (trigger; the question points at it); a KongPlugin deprecation warning/event at 09:35; readiness
connection-refused events during pod start; catalog-api traffic through Kong is fine (its pods did not change).

**must_mention:** `endpoint` (EndpointSlice/endpoints watch denied, stale targets).

**Provenance.** RBAC failure family (k8s.af stories of controllers losing RBAC after policy changes); KIC requires list/watch on
`endpointslices` since 3.0 (Kong/charts ClusterRole); klog reflector "failed to list ... is forbidden" is the upstream client-go message;
awesome-prometheus-alerts Kong rules (high 5xx per service). Generated by gen/c12_kong.py (seed 1212).
"""
b.write(["endpoint"], notes)
