from lib import *
import math

b = Bundle("apx-plausible-cert-expired", "Plausible test: pageviews dropped to near zero", "2026-11-03T08:30:00Z", "2026-11-03T09:40:00Z",
           "test", "test-aks-weu",
           "plausible in test (ns analytics) shows almost no pageviews since ~09:00 today. the plausible pod is running, its logs have no errors "
           "and our synthetic traffic generator is still hitting the tracked sites. what happened?", 404)
b.ns = ns = "analytics"
T = P
onset = T("2026-11-03T09:00:00Z")
nodes = mknodes(b, ["aks-system-31415926-vmss000000", "aks-apps-27182818-vmss000003", "aks-apps-27182818-vmss000004"],
                zones=["westeurope-1", "westeurope-2", "westeurope-3"], instance="Standard_D4s_v5", kubelet="v1.30.4", runtime="containerd://1.7.20-1",
                os_image="Ubuntu 22.04.5 LTS", kernel="5.15.0-1073-azure")
for n in ["analytics", "ingress-nginx", "cert-manager"]:
    b.namespace(n, {"environment": "test"})
pl = app(b, "plausible", ns, "ghcr.io/plausible/community-edition:v2.1.4", 1, 8000, nodes[1:], labels={"app.kubernetes.io/name": "plausible"},
         env={"BASE_URL": "https://plausible.test.acme.dev", "DATABASE_URL": {"valueFrom": {"secretKeyRef": {"name": "plausible", "key": "DATABASE_URL"}}},
              "CLICKHOUSE_DATABASE_URL": "http://plausible-clickhouse:8123/plausible_events_db", "DISABLE_REGISTRATION": "invite_only"},
         readiness=b.http_probe("/api/health", 8000), liveness=b.http_probe("/api/health", 8000, 20, 3), created="2026-03-11T10:00:00Z", pod_created="2026-10-29T13:02:00Z")
chp = app(b, "plausible-clickhouse", ns, "clickhouse/clickhouse-server:24.3.3.102-alpine", 1, 8123, nodes[2:], kind="StatefulSet", labels={"app.kubernetes.io/name": "plausible-clickhouse"},
          created="2026-03-11T10:00:00Z", pod_created="2026-10-29T13:00:00Z")
pgp = app(b, "plausible-postgresql", ns, "postgres:16-alpine", 1, 5432, nodes[1:2], kind="StatefulSet", labels={"app.kubernetes.io/name": "plausible-postgresql"},
          created="2026-03-11T10:00:00Z", pod_created="2026-10-29T13:00:00Z", container_name="postgres")
ing_l = {"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/instance": "ingress-nginx", "app.kubernetes.io/component": "controller"}
ingp = app(b, "ingress-nginx-controller", "ingress-nginx", "registry.k8s.io/ingress-nginx/controller:v1.11.3", 2, [("http", 80), ("https", 443)], nodes, labels=ing_l,
           container_name="controller", args=["/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller", "--election-id=ingress-nginx-leader",
                                              "--controller-class=k8s.io/ingress-nginx", "--ingress-class=nginx", "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller"],
           created="2026-09-21T14:05:00Z", pod_created="2026-09-21T14:05:30Z", svc_ports=[("http", 80, "http"), ("https", 443, "https")])
cm_l = {"app.kubernetes.io/name": "cert-manager", "app.kubernetes.io/instance": "cert-manager", "app.kubernetes.io/component": "controller"}
cmp_ = app(b, "cert-manager", "cert-manager", "quay.io/jetstack/cert-manager-controller:v1.15.3", 1, 9402, nodes[:1], labels=cm_l, container_name="cert-manager-controller",
           args=["--v=2", "--cluster-resource-namespace=$(POD_NAMESPACE)", "--leader-election-namespace=kube-system", "--max-concurrent-challenges=60"],
           created="2026-03-01T10:00:00Z", pod_created="2026-10-14T07:12:00Z", svc_ports=[("tcp-prometheus-servicemonitor", 9402, "http")])
b.raw("ingress.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": b.meta("IngressClass", "nginx", None, ing_l, {"meta.helm.sh/release-name": "ingress-nginx"}, "2026-09-21T14:05:00Z"),
                       "spec": {"controller": "k8s.io/ingress-nginx"}})
b.raw("ingress.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                       "metadata": b.meta("Ingress", "plausible", ns, {"app.kubernetes.io/name": "plausible"}, {"cert-manager.io/cluster-issuer": "letsencrypt", "nginx.ingress.kubernetes.io/proxy-body-size": "8m"}, "2026-03-11T10:00:00Z"),
                       "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["plausible.test.acme.dev"], "secretName": "plausible-tls"}],
                                "rules": [{"host": "plausible.test.acme.dev", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "plausible", "port": {"number": 8000}}}}]}}]},
                       "status": {"loadBalancer": {"ingress": [{"ip": "20.103.77.41"}]}}})
CH = "plausible-tls-1-2954331043-1408547718"
b.raw("ingress.yaml", {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                       "metadata": b.meta("Ingress", "cm-acme-http-solver-9xk2p", ns, {"acme.cert-manager.io/http-domain": "1730981652", "acme.cert-manager.io/http-token": "1104588813", "acme.cert-manager.io/http01-solver": "true"},
                                          {"nginx.ingress.kubernetes.io/whitelist-source-range": "0.0.0.0/0,::/0"}, "2026-10-04T09:00:12Z", ("Challenge", CH)),
                       "spec": {"ingressClassName": "nginx-public", "rules": [{"host": "plausible.test.acme.dev", "http": {"paths": [{"path": "/.well-known/acme-challenge/Xq3pV0yzN1d8o7Hk2c9mWfTRuJ5bE4aLsG6iK0QvP2Y", "pathType": "ImplementationSpecific",
                                                                                                                                            "backend": {"service": {"name": "cm-acme-http-solver-tw8fh", "port": {"number": 8089}}}}]}}]},
                       "status": {"loadBalancer": {}}})
b.raw("certmanager.yaml", {"apiVersion": "cert-manager.io/v1", "kind": "ClusterIssuer", "metadata": b.meta("ClusterIssuer", "letsencrypt", None, None, None, "2026-03-01T10:20:00Z"),
                           "spec": {"acme": {"server": "https://acme-v02.api.letsencrypt.org/directory", "email": "platform@acme.dev", "privateKeySecretRef": {"name": "letsencrypt-account-key"},
                                             "solvers": [{"http01": {"ingress": {"ingressClassName": "nginx-public"}}}]}},
                           "status": {"acme": {"uri": "https://acme-v02.api.letsencrypt.org/acme/acct/1822093311", "lastRegisteredEmail": "platform@acme.dev"},
                                      "conditions": [{"type": "Ready", "status": "True", "reason": "ACMEAccountRegistered", "message": "The ACME account was registered with the ACME server", "lastTransitionTime": "2026-03-01T10:20:04Z", "observedGeneration": 1}]}})
b.raw("certmanager.yaml", {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": b.meta("Certificate", "plausible-tls", ns, None, None, "2026-03-11T10:00:02Z", ("Ingress", "plausible"), extra={"generation": 1}),
                           "spec": {"dnsNames": ["plausible.test.acme.dev"], "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "letsencrypt"}, "secretName": "plausible-tls", "usages": ["digital signature", "key encipherment"]},
                           "status": {"conditions": [
                               {"type": "Ready", "status": "False", "reason": "Expired", "message": "Certificate expired on Tue, 03 Nov 2026 09:00:00 UTC", "lastTransitionTime": "2026-11-03T09:00:00Z", "observedGeneration": 1},
                               {"type": "Issuing", "status": "True", "reason": "Renewing", "message": "Renewing certificate as renewal was scheduled at 2026-10-04 09:00:00 +0000 UTC", "lastTransitionTime": "2026-10-04T09:00:00Z", "observedGeneration": 1}],
                               "notBefore": "2026-08-05T09:00:01Z", "notAfter": "2026-11-03T09:00:00Z", "renewalTime": "2026-10-04T09:00:00Z", "revision": 3, "nextPrivateKeySecretName": "plausible-tls-vz6bq"}})
b.raw("certmanager.yaml", {"apiVersion": "acme.cert-manager.io/v1", "kind": "Order", "metadata": b.meta("Order", "plausible-tls-1-2954331043", ns, None, None, "2026-10-04T09:00:05Z", ("CertificateRequest", "plausible-tls-1")),
                           "spec": {"dnsNames": ["plausible.test.acme.dev"], "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "letsencrypt"}},
                           "status": {"state": "pending", "url": "https://acme-v02.api.letsencrypt.org/acme/order/1822093311/3130455871", "authorizations": [{"identifier": "plausible.test.acme.dev", "initialState": "pending", "wildcard": False,
                                                                                                                                                              "challenges": [{"type": "http-01", "token": "Xq3pV0yzN1d8o7Hk2c9mWfTRuJ5bE4aLsG6iK0QvP2Y"}]}]}})
b.raw("certmanager.yaml", {"apiVersion": "acme.cert-manager.io/v1", "kind": "Challenge", "metadata": b.meta("Challenge", CH, ns, None, None, "2026-10-04T09:00:08Z", ("Order", "plausible-tls-1-2954331043")),
                           "spec": {"dnsName": "plausible.test.acme.dev", "type": "HTTP-01", "token": "Xq3pV0yzN1d8o7Hk2c9mWfTRuJ5bE4aLsG6iK0QvP2Y", "solver": {"http01": {"ingress": {"ingressClassName": "nginx-public"}}},
                                    "issuerRef": {"group": "cert-manager.io", "kind": "ClusterIssuer", "name": "letsencrypt"}},
                           "status": {"presented": True, "processing": True, "state": "pending",
                                      "reason": "Waiting for HTTP-01 challenge propagation: wrong status code '404', expected '200'"}})
b.raw("certmanager.yaml", {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": b.meta("Certificate", "grafana-tls", "monitoring", None, None, "2026-08-20T10:00:00Z"),
                           "spec": {"dnsNames": ["grafana.test.acme.dev"], "issuerRef": {"kind": "ClusterIssuer", "name": "letsencrypt-dns"}, "secretName": "grafana-tls"},
                           "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "Certificate is up to date and has not expired", "lastTransitionTime": "2026-10-20T10:01:00Z"}],
                                      "notAfter": "2027-01-18T10:00:55Z", "renewalTime": "2026-12-19T10:00:55Z"}})
b.configmap("ingress-nginx-controller", "ingress-nginx", {"allow-snippet-annotations": "false", "use-forwarded-headers": "true", "log-format-escape-json": "false"}, labels=ing_l, created="2026-09-21T14:05:00Z")
b.event("Challenge", CH, ns, "Presented", 'Presented challenge using HTTP-01 challenge mechanism', "2026-10-04T09:00:12Z", component="cert-manager-challenges", api="acme.cert-manager.io/v1")
b.event("Certificate", "plausible-tls", ns, "Expired", "Certificate expired on Tue, 03 Nov 2026 09:00:00 UTC", "2026-11-03T09:00:00Z", type_="Warning", component="cert-manager-certificates-readiness", api="cert-manager.io/v1")
b.event("Pod", pname(chp[0]), ns, "Unhealthy", "Readiness probe failed: Get \"http://10.244.3.18:8123/ping\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", "2026-11-03T08:47:31Z", type_="Warning", host=nodes[2], fieldPath="spec.containers{plausible-clickhouse}")

rng = b.rng
I = [pname(p) for p in ingp]
PLN = pname(pl[0])
sites = ["shop.test.acme.dev", "docs.test.acme.dev", "blog.test.acme.dev"]


def rate(t):
    return 11 + 2 * math.sin((t - b.start).total_seconds() / 600)


def nginx(t):
    p = rng.choice(I)
    after = t >= onset
    if after and rng.random() < 0.96:
        return
    ua = rng.choice(["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Safari/605.1.15"])
    if after:
        ua = "synthetic-check/2.3 (curl/8.5.0; insecure)"
    path, st, size = ("/api/event", 202, 2) if rng.random() < 0.8 else ("/js/script.js", 200, 1412)
    b.log(t, "ingress-nginx", p, '%s - - [%s] "POST %s HTTP/2.0" %d %d "https://%s/" "%s" %d %.3f [analytics-plausible-8000] [] %s:8000 %d %.3f %d %s' % (
        "20.%d.%d.%d" % (rng.randint(0, 250), rng.randint(0, 250), rng.randint(1, 250)), t.strftime("%d/%b/%Y:%H:%M:%S +0000"), path, st, size, rng.choice(sites), ua,
        rng.randint(300, 700), rng.uniform(0.002, 0.02), pl[0]["status"]["podIP"], size, rng.uniform(0.002, 0.02), st, rid(rng, 32)), None, container="controller", ns="ingress-nginx")


b.every(b.start, b.end, 1.6, nginx)


def acme(t):
    b.log(t, "ingress-nginx", rng.choice(I), '%s - - [%s] "GET /.well-known/acme-challenge/Xq3pV0yzN1d8o7Hk2c9mWfTRuJ5bE4aLsG6iK0QvP2Y HTTP/1.1" 404 548 "-" "Mozilla/5.0 (compatible; Let\'s Encrypt validation server; +https://www.letsencrypt.org)" 287 0.000 [upstream-default-backend] [] 127.0.0.1:8181 548 0.000 404 %s' % (
        rng.choice(["23.178.112.104", "3.120.1.22", "18.246.31.50"]), t.strftime("%d/%b/%Y:%H:%M:%S +0000"), rid(rng, 32)), None, container="controller", ns="ingress-nginx")


b.every(b.start, b.end, 300, acme)
CM = pname(cmp_[0])


def cm(t):
    b.log(t, "cert-manager", CM, 'E%s       1 sync.go:190] "propagation check failed" err="wrong status code \'404\', expected \'200\'" logger="cert-manager.controller" resource_name="%s" resource_namespace="analytics" resource_kind="Challenge" resource_version="v1" dnsName="plausible.test.acme.dev" type="HTTP-01"' % (t.strftime("%m%d %H:%M:%S.%f"), CH), "error", container="cert-manager-controller", ns="cert-manager")


b.every(b.start, b.end, 60, cm)


def cm_ok(t):
    b.log(t, "cert-manager", CM, 'I%s       1 conditions.go:192] "Found status change for Certificate condition; setting lastTransitionTime" logger="cert-manager.controller" condition="Ready" oldStatus="True" status="False" lastTransitionTime="2026-11-03 09:00:00 +0000 UTC"' % t.strftime("%m%d %H:%M:%S.%f"), "info", container="cert-manager-controller", ns="cert-manager")


cm_ok(T("2026-11-03T09:00:00Z") + dt.timedelta(milliseconds=412))


def pll(t):
    after = t >= onset
    if after and rng.random() < 0.93:
        return
    b.log(t, "plausible", PLN, "%s request_id=%s [info] POST /api/event" % (t.strftime("%H:%M:%S.%f")[:-3], rid(rng, 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")), "info", container="plausible")
    b.log(t + dt.timedelta(milliseconds=3), "plausible", PLN, "%s request_id=%s [info] Sent 202 in %dms" % (t.strftime("%H:%M:%S.%f")[:-3], rid(rng, 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"), rng.randint(1, 9)), "info", container="plausible")


b.every(b.start, b.end, 6, pll)
for t in ["2026-11-03T08:35:02Z", "2026-11-03T09:35:02Z"]:
    b.log(T(t), "plausible", PLN, "%s [warning] Failed to update geolocation database: MAXMIND_LICENSE_KEY not set, using bundled dbip-country-lite (may be outdated)" % t[11:19], "warning", container="plausible")
b.log(T("2026-11-03T08:47:28Z"), "plausible-clickhouse", pname(chp[0]), "2026.11.03 08:47:28.551203 [ 312 ] {} <Warning> plausible_events_db.events_v2 (MergerMutator): Merge of 7 parts took 41.2 sec, which is longer than expected", "warning", container="plausible-clickhouse")

# metrics
b.rng_series('certmanager_certificate_expiration_timestamp_seconds{namespace="analytics"}', "Certificate expiry (unix ts)",
             [({"name": "plausible-tls", "issuer_name": "letsencrypt", "issuer_kind": "ClusterIssuer"}, lambda t, i: 1793696400)], fmt="%d")
b.rng_series('certmanager_certificate_ready_status{namespace="analytics", condition="True"}', "Certificate Ready=True",
             [({"name": "plausible-tls", "condition": "True"}, lambda t, i: 1 if t < onset else 0)], fmt="%d")
b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="analytics", ingress="plausible"}[5m]))', "Plausible ingress requests by status",
             [({"status": "202"}, lambda t, i: b.noise(rate(t) * 0.8) if t < onset else b.noise(rate(t) * 0.8 * max(0.04, 1 - (t - onset).total_seconds() / 300))),
              ({"status": "200"}, lambda t, i: b.noise(rate(t) * 0.2) if t < onset else b.noise(rate(t) * 0.2 * max(0.04, 1 - (t - onset).total_seconds() / 300))),
              ({"status": "404"}, lambda t, i: 0.0033)])
b.rng_series('nginx_ingress_controller_ssl_expire_time_seconds{host="plausible.test.acme.dev"}', "Served TLS cert expiry (unix ts)",
             [({"host": "plausible.test.acme.dev", "secret_name": "plausible-tls"}, lambda t, i: 1793696400)], fmt="%d")
b.rng_series('sum(rate(plausible_ingest_events_buffered_total{namespace="analytics"}[5m]))', "Events ingested/s",
             [({}, lambda t, i: b.noise(rate(t) * 0.8) if t < onset else b.noise(rate(t) * 0.8 * max(0.04, 1 - (t - onset).total_seconds() / 300)))])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"analytics|ingress-nginx|cert-manager"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in [PLN, pname(chp[0]), CM] + I], fmt="%d")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="analytics", container!=""}[5m]))', "CPU by pod", [({"pod": PLN}, lambda t, i: b.noise(0.12 if t < onset else 0.03, 0.2)), ({"pod": pname(chp[0])}, lambda t, i: b.noise(0.2, 0.3))])
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="analytics", container!=""})', "Memory by pod", [({"pod": PLN}, lambda t, i: b.noise(4.1e8, 0.02)), ({"pod": pname(chp[0])}, lambda t, i: b.noise(1.1e9, 0.02))], fmt="%.0f")

notes = """
# apx-plausible-cert-expired — TLS certificate for the Plausible host expired; renewal stuck on an HTTP-01 challenge

**Incident.** Plausible CE (ns `analytics`, AKS test). The Let's Encrypt certificate `plausible-tls` (cert-manager) expires at
2026-11-03T09:00:00Z. Renewal has been failing since 2026-10-04: ingress-nginx was reinstalled on 2026-09-21 with IngressClass
`nginx`, but the ClusterIssuer `letsencrypt` solver still creates the HTTP-01 solver Ingress with `ingressClassName: nginx-public`,
which no controller serves, so Let's Encrypt's validation request for `/.well-known/acme-challenge/...` hits the default backend (404);
the Challenge stays `pending` ("wrong status code '404', expected '200'"). From 09:00 browsers refuse the expired certificate when
loading script.js and posting /api/event, so events stop arriving; plausible itself is healthy and logs nothing wrong. The
synthetic generator uses curl with `--insecure` and keeps a trickle going.

**Chain / evidence.** Pageviews near zero (ingress metrics by status, `plausible_ingest_events_buffered_total`, far fewer
plausible `POST /api/event` log lines after 09:00; the remaining ones carry the `insecure` synthetic UA) -> Certificate
`plausible-tls` Ready=False reason Expired, notAfter 09:00 (k8s/certmanager.yaml, event `Expired`,
`certmanager_certificate_ready_status`, `*_expiration_timestamp_seconds` = 1793696400) -> Order/Challenge pending since 10-04 ->
cert-manager logs `propagation check failed ... 404` every minute; ingress-nginx access logs: LE validation server gets 404 from
`upstream-default-backend` -> solver Ingress and ClusterIssuer use class `nginx-public`, the only IngressClass is `nginx` (k8s/ingress.yaml).

**Decoys.** GeoIP update warning in plausible; a ClickHouse slow-merge warning and one ClickHouse readiness timeout at 08:47;
the other certificate (grafana-tls) is fine. No restarts, no 5xx.

**must_mention:** `certificate` (expired TLS certificate / failed renewal).

**Provenance.** awesome-prometheus-alerts cert-manager rules (CertManagerCertExpirySoon / CertManagerCertNotReady), k8s.af-style
expired-certificate postmortems; cert-manager HTTP-01 "wrong status code '404', expected '200'" is the documented ACME troubleshooting
message. App objects follow plausible/community-edition (v2.1.4, /api/health, ClickHouse + Postgres). Generated by gen/c04_plausible.py (seed 404).
"""
b.write(["certificate"], notes)
