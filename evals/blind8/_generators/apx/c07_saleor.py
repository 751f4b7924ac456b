from lib import *
import math

b = Bundle("apx-saleor-missing-migration", "Saleor staging: storefront checkout broken", "2026-06-09T10:40:00Z", "2026-06-09T11:50:00Z",
           "staging", "stg-eks-euw1",
           "saleor staging (ns saleor): since ~11:03 the storefront shows 'Something went wrong' when adding to cart or opening checkout. "
           "product listing pages still work. what broke?", 707)
b.ns = ns = "saleor"
T = P
roll = T("2026-06-09T11:02:30Z")
nodes = mknodes(b, ["ip-10-20-33-14.eu-west-1.compute.internal", "ip-10-20-58-201.eu-west-1.compute.internal", "ip-10-20-77-96.eu-west-1.compute.internal"])
b.namespace(ns, {"environment": "staging"})
env = {"DATABASE_URL": {"valueFrom": {"secretKeyRef": {"name": "saleor-db", "key": "url"}}}, "CELERY_BROKER_URL": "redis://saleor-redis-master:6379/1", "ALLOWED_HOSTS": "api.saleor.stg.acme.shop",
       "DEFAULT_FROM_EMAIL": "noreply@acme.shop", "SECRET_KEY": {"valueFrom": {"secretKeyRef": {"name": "saleor", "key": "secret-key"}}}, "DB_CONN_MAX_AGE": "60"}
res = {"requests": {"cpu": "500m", "memory": "768Mi"}, "limits": {"memory": "1536Mi"}}
old = b.container("saleor-api", "ghcr.io/saleor/saleor:3.20.34", 8000, env, res)
api = app(b, "saleor-api", ns, "ghcr.io/saleor/saleor:3.21.0", 3, 8000, nodes, labels={"app.kubernetes.io/name": "saleor", "app.kubernetes.io/component": "api"}, env=env, resources=res,
          container_name="saleor-api", command=["uvicorn", "saleor.asgi:application", "--host=0.0.0.0", "--port=8000", "--workers=2", "--lifespan=off", "--ws=none", "--no-server-header", "--no-access-log", "--timeout-keep-alive=35"],
          readiness=b.http_probe("/health/", 8000), liveness=b.http_probe("/health/", 8000, 15, 3), revision=14, created="2025-08-01T10:00:00Z",
          pod_created=["2026-06-09T11:02:31Z", "2026-06-09T11:03:02Z", "2026-06-09T11:03:33Z"], rs_created="2026-06-09T11:02:30Z", old_rs=("5f7d9c6b8d", 13, [old], "2026-05-20T09:14:00Z"))
wk = app(b, "saleor-worker", ns, "ghcr.io/saleor/saleor:3.21.0", 1, None, nodes[1:], labels={"app.kubernetes.io/name": "saleor", "app.kubernetes.io/component": "worker"}, env=env,
         container_name="saleor-worker", command=["celery", "--app", "saleor.celeryconf:app", "worker", "-E", "--loglevel=info"], revision=9, created="2025-08-01T10:00:00Z", pod_created="2026-06-09T11:02:35Z")
sf = app(b, "storefront", ns, "registry.acme.io/shop/storefront:2026.06.03-1", 2, 3000, nodes, labels={"app.kubernetes.io/name": "storefront"},
         env={"NEXT_PUBLIC_SALEOR_API_URL": "http://saleor-api.saleor.svc:8000/graphql/", "NODE_ENV": "production"}, created="2025-08-01T10:00:00Z", pod_created="2026-06-03T08:00:00Z")
db = app(b, "dashboard", ns, "ghcr.io/saleor/saleor-dashboard:3.21.0", 1, 80, nodes[2:], labels={"app.kubernetes.io/name": "saleor-dashboard"}, created="2025-08-01T10:00:00Z",
         pod_created="2026-06-09T10:50:12Z", revision=11, rs_created="2026-06-09T10:50:10Z")
pgp = app(b, "saleor-postgresql", ns, "docker.io/bitnami/postgresql:15.7.0", 1, 5432, nodes[:1], kind="StatefulSet", labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "saleor"},
          container_name="postgresql", created="2025-08-01T10:00:00Z", pod_created="2026-05-02T03:00:00Z")
jl = {"app.kubernetes.io/name": "saleor", "app.kubernetes.io/component": "migrate", "job-name": "saleor-migrate-3-21-0"}
jc = b.container("migrate", "ghcr.io/saleor/saleor:3.21.0", None, dict(env, DB_LOCK_TIMEOUT="10s"), res, command=["python3", "manage.py", "migrate", "--no-input"])
b.raw("workloads.yaml", {"apiVersion": "batch/v1", "kind": "Job", "metadata": b.meta("Job", "saleor-migrate-3-21-0", ns, jl, {"meta.helm.sh/release-name": "saleor", "argocd.argoproj.io/sync-wave": "0"}, "2026-06-09T11:02:28Z"),
                         "spec": {"backoffLimit": 1, "activeDeadlineSeconds": 600, "template": {"metadata": {"labels": jl}, "spec": {"restartPolicy": "Never", "containers": [jc]}}},
                         "status": {"startTime": "2026-06-09T11:02:28Z", "failed": 2, "conditions": [
                             {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastProbeTime": "2026-06-09T11:04:51Z", "lastTransitionTime": "2026-06-09T11:04:51Z"},
                             {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit", "lastProbeTime": "2026-06-09T11:04:51Z", "lastTransitionTime": "2026-06-09T11:04:51Z"}]}})
jps = []
for k, (s, e) in enumerate([("2026-06-09T11:02:29Z", "2026-06-09T11:03:22Z"), ("2026-06-09T11:03:40Z", "2026-06-09T11:04:50Z")]):
    jps.append(b.pod("saleor-migrate-3-21-0-" + b.hsh(5, "m", k), ns, jl, ("Job", "saleor-migrate-3-21-0"), [jc], nodes[k], s, phase="Failed",
                     cstatus={"migrate": {"ready": False, "started": False, "state": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": s, "finishedAt": e}}}}))
b.event("Job", "saleor-migrate-3-21-0", ns, "BackoffLimitExceeded", "Job has reached the specified backoff limit", "2026-06-09T11:04:51Z", type_="Warning", component="job-controller", api="batch/v1")
b.event("Deployment", "saleor-api", ns, "ScalingReplicaSet", "Scaled up replica set saleor-api-%s to 1" % api[0]["metadata"]["labels"]["pod-template-hash"], "2026-06-09T11:02:30Z", component="deployment-controller", api="apps/v1")
b.event("Deployment", "saleor-api", ns, "ScalingReplicaSet", "Scaled down replica set saleor-api-5f7d9c6b8d to 0 from 1", "2026-06-09T11:04:05Z", component="deployment-controller", api="apps/v1")
b.event("Deployment", "dashboard", ns, "ScalingReplicaSet", "Scaled up replica set dashboard-%s to 1" % db[0]["metadata"]["labels"]["pod-template-hash"], "2026-06-09T10:50:10Z", component="deployment-controller", api="apps/v1")
b.configmap("saleor-api-env", ns, {"ENABLE_ACCOUNT_CONFIRMATION_BY_EMAIL": "false", "PLAYGROUND_ENABLED": "true", "JAEGER_AGENT_HOST": "otel-collector.observability"})

rng = b.rng
A = [pname(p) for p in api]
OLD = ["saleor-api-5f7d9c6b8d-" + b.hsh(5, "o", k) for k in range(3)]
S = [pname(p) for p in sf]


def api_log(t, p, lvl, logger, msg, **kw):
    d = {"timestamp": iso(t, True).replace("Z", "+00:00"), "level": lvl, "logger": logger, "message": msg}
    d.update(kw)
    b.log(t, "saleor-api", p, json.dumps(d), lvl, container="saleor-api")


def traffic(t):
    new = t >= roll + dt.timedelta(seconds=40)
    p = rng.choice(A if new else OLD)
    op = rng.choices(["products", "product", "checkoutCreate", "checkoutLinesAdd", "checkout", "me"], [30, 20, 8, 10, 12, 5])[0]
    sfp = rng.choice(S)
    if new and op in ("checkoutCreate", "checkoutLinesAdd", "checkout"):
        api_log(t, p, "ERROR", "saleor.graphql.errors.unhandled", "A query failed unexpectedly",
                exc_info="Traceback (most recent call last):\n  File \"/app/saleor/graphql/core/mutations.py\", line 418, in mutate\n    response = cls.perform_mutation(root, info, **data)\n  File \"/usr/local/lib/python3.12/site-packages/django/db/backends/utils.py\", line 105, in _execute\n    return self.cursor.execute(sql, params)\npsycopg.errors.UndefinedColumn: column checkout_checkout.tax_error does not exist\nLINE 1: ...\"checkout_checkout\".\"price_expiration\", \"checkout_checkout\".\"tax_error\", ...\n                                                             ^\n\nThe above exception was the direct cause of the following exception:\n\ndjango.db.utils.ProgrammingError: column checkout_checkout.tax_error does not exist",
                graphql_operation_name=op[0].upper() + op[1:], query_cost=rng.randint(1, 40))
        b.log(t + dt.timedelta(milliseconds=rng.randint(20, 80)), "storefront", sfp, " \u2a2f Error: [GraphQL] Internal Server Error (operation: %s)\n    at executeQuery (/app/.next/server/chunks/4821.js:1:20331) {\n  digest: '%d'\n}" % (op, rng.randint(10 ** 9, 4 * 10 ** 9)), "error", container="storefront")
    else:
        if rng.random() < 0.08:
            api_log(t, p, "INFO", "saleor.graphql.views", "GraphQL request", graphql_operation_name=op, duration_ms=rng.randint(20, 300), status=200)


b.every(b.start, b.end, 1.8, traffic)


def wlog(t):
    wp = pname(wk[0]) if t > roll else "saleor-worker-6c8d7f5b9a-" + b.hsh(5, "w")
    if rng.random() < 0.6:
        b.log(t, "saleor-worker", wp, "[%s: INFO/ForkPoolWorker-%d] Task saleor.plugins.webhook.tasks.send_webhook_request_async[%s] succeeded in %.3fs: None" % (t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], rng.randint(1, 4), b.uid("tk", t.isoformat()), rng.uniform(0.05, 0.9)), "INFO", container="saleor-worker")
    else:
        b.log(t, "saleor-worker", wp, "[%s: WARNING/ForkPoolWorker-%d] [Webhook ID: 12] Failed request to https://erp-sync.stg.acme.shop/webhooks/saleor: HTTPSConnectionPool(host='erp-sync.stg.acme.shop', port=443): Read timed out. (read timeout=10) for event: product_variant_stock_updated. Delivery attempt id: %s" % (t.strftime("%Y-%m-%d %H:%M:%S,%f")[:-3], rng.randint(1, 4), b.uid("da", t.isoformat())[:8]), "WARNING", container="saleor-worker")


b.every(b.start, b.end, 35, wlog)
mig = [("2026-06-09T11:02:33Z", "Operations to perform:\n  Apply all migrations: account, app, attribute, channel, checkout, core, csv, discount, giftcard, invoice, order, payment, product, shipping, tax, warehouse, webhook"),
       ("2026-06-09T11:02:34Z", "Running migrations:\n  Applying attribute.0045_alter_attributevalue_slug... OK"),
       ("2026-06-09T11:03:21Z", "  Applying checkout.0067_checkout_tax_error...Traceback (most recent call last):\n  File \"/usr/local/lib/python3.12/site-packages/django/db/backends/utils.py\", line 103, in _execute\n    return self.cursor.execute(sql)\npsycopg.errors.LockNotAvailable: canceling statement due to lock timeout\n\nThe above exception was the direct cause of the following exception:\n...\ndjango.db.utils.OperationalError: canceling statement due to lock timeout")]
for t, m in mig:
    b.log(T(t), "saleor-migrate", pname(jps[0]), m, "ERROR" if "Traceback" in m else "INFO", container="migrate")
for t, m in [("2026-06-09T11:03:43Z", "Running migrations:\n  Applying checkout.0067_checkout_tax_error..."), ("2026-06-09T11:04:49Z", "Traceback (most recent call last):\n...\ndjango.db.utils.OperationalError: canceling statement due to lock timeout")]:
    b.log(T(t), "saleor-migrate", pname(jps[1]), m, "ERROR" if "Traceback" in m else "INFO", container="migrate")
PG = pname(pgp[0])
for t in ["2026-06-09T11:03:21Z", "2026-06-09T11:04:49Z"]:
    b.log(T(t), "saleor-postgresql", PG, "%s UTC [%d] ERROR:  canceling statement due to lock timeout\n%s UTC [%d] STATEMENT:  ALTER TABLE \"checkout_checkout\" ADD COLUMN \"tax_error\" varchar(255) NULL" % (t.replace("T", " ")[:19], rng.randint(4000, 6000), t.replace("T", " ")[:19], rng.randint(4000, 6000)), "ERROR", container="postgresql")
b.log(T("2026-06-09T11:01:02Z"), "saleor-postgresql", PG, "2026-06-09 11:01:02.331 UTC [3914] LOG:  process 3914 still waiting for AccessExclusiveLock on relation 16811 of database 16384 after 1000.112 ms\n2026-06-09 11:01:02.331 UTC [3914] DETAIL:  Process holding the lock: 3120. Wait queue: 3914.", "LOG", container="postgresql")
for k in range(6):
    t = b.start + dt.timedelta(minutes=10 * k + rng.randint(0, 9), seconds=rng.randint(0, 59))
    b.log(t, "saleor-postgresql", PG, "%s UTC [%d] LOG:  automatic vacuum of table \"saleor.public.checkout_checkoutline\": index scans: 1\n\tpages: 0 removed, 4121 remain, 812 scanned (19.70%% of total)" % (t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3], rng.randint(3000, 5000)), "LOG", container="postgresql")
b.log(T("2026-06-09T10:50:14Z"), "dashboard", pname(db[0]), '/docker-entrypoint.sh: Configuration complete; ready for start up', None, container="dashboard")

on2 = roll + dt.timedelta(seconds=40)


def st(c):
    def f(t, i):
        base = 24 + 4 * math.sin(i / 6)
        if c == "200":
            return b.noise(base * (0.99 if t < on2 else 0.69))
        if c == "500":
            return b.noise(base * (0.002 if t < on2 else 0.30), 0.1)
        if c == "400":
            return b.noise(0.2, 0.4)
    return f


b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="saleor", ingress="saleor-api"}[5m]))', "Saleor API requests by status", [({"status": c}, st(c)) for c in ["200", "400", "500"]])
b.rng_series('sum by (operation, status) (rate(saleor_graphql_requests_total{namespace="saleor"}[5m]))', "GraphQL operations by outcome",
             [({"operation": op, "status": s}, (lambda op, s, w: lambda t, i: (b.noise(w) if ((s == "ok") == (t < on2 or op in ("products", "product", "me"))) else 0.0))(op, s, w)) for op, w in
              [("products", 7), ("product", 5), ("checkoutCreate", 2), ("checkoutLinesAdd", 2.5), ("checkout", 3), ("me", 1.2)] for s in ("ok", "error")])
b.rng_series('histogram_quantile(0.95, sum by (le) (rate(nginx_ingress_controller_request_duration_seconds_bucket{exported_namespace="saleor", ingress="saleor-api"}[5m])))', "p95 latency (s)", [({}, lambda t, i: b.noise(0.21, 0.15))])
b.rng_series('kube_job_status_failed{namespace="saleor"}', "Failed jobs", [({"job_name": "saleor-migrate-3-21-0"}, lambda t, i: None if t < roll else (2 if t > T("2026-06-09T11:04:50Z") else (1 if t > T("2026-06-09T11:03:22Z") else 0)))], fmt="%d")
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="saleor"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in A + S + [pname(wk[0])]], fmt="%d")
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="saleor", container!=""})', "Memory by pod", [({"pod": p}, lambda t, i: b.noise(5.6e8, 0.04) if t > roll else None) for p in A], fmt="%.0f")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="saleor", container!=""}[5m]))', "CPU by pod", [({"pod": p}, lambda t, i: b.noise(0.3, 0.2) if t > roll else None) for p in A])

notes = """
# apx-saleor-missing-migration — Saleor 3.21 rolled out although its DB migration failed

**Incident.** Saleor (ns `saleor`, staging). At 11:02:28 the release 3.20.34 -> 3.21.0 starts: Job `saleor-migrate-3-21-0`
(`manage.py migrate`) and the `saleor-api` Deployment roll at the same time (the Job is not a pre-upgrade hook / sync wave gate).
The migration `checkout.0067_checkout_tax_error` needs an ACCESS EXCLUSIVE lock on `checkout_checkout`; a long transaction holds the
lock and with DB_LOCK_TIMEOUT=10s the ALTER is cancelled (`canceling statement due to lock timeout`), twice -> BackoffLimitExceeded.
The new API pods run 3.21.0 code whose ORM selects `checkout_checkout.tax_error`, which does not exist: every checkout query/mutation
raises `ProgrammingError: column checkout_checkout.tax_error does not exist` -> 500; product queries don't touch that table and work.

**Chain / evidence.** Storefront errors `[GraphQL] Internal Server Error (operation: checkoutLinesAdd ...)` (storefront logs) ->
saleor-api 500s from ~11:03 (ingress metrics; `saleor_graphql_requests_total` errors only for checkout operations) -> saleor-api logs
`UndefinedColumn ... checkout_checkout.tax_error does not exist` -> Job `saleor-migrate-3-21-0` Failed/BackoffLimitExceeded
(k8s/workloads.yaml, events, `kube_job_status_failed`), migrate logs and Postgres `canceling statement due to lock timeout` on
`ALTER TABLE "checkout_checkout" ADD COLUMN "tax_error"` -> Deployment revision 14 image 3.21.0 rolled regardless.

**Decoys.** saleor-dashboard upgrade at 10:50 (routine, static SPA); webhook read timeouts to erp-sync in the celery worker (before
and after); autovacuum LOG lines; the lock wait LOG at 11:01. No restarts, resources normal, pods Ready (health endpoint doesn't check schema).

**must_mention:** `migration`.

**Provenance.** Bad-rollout / schema drift failure family (k8s.af and many public postmortems: code deployed before its migration);
Django migration output and psycopg error texts are upstream formats. App objects follow saleor/saleor (uvicorn saleor.asgi, celery
worker saleor.celeryconf, saleor-dashboard image). Generated by gen/c07_saleor.py (seed 707).
"""
b.write(["migration"], notes)
