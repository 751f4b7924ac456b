from lib import *
import math

b = Bundle("apx-discourse-redis-maxmemory", "Discourse test: replies fail and logins flaky", "2026-10-06T08:00:00Z", "2026-10-06T09:10:00Z",
           "test", "test-gke-ew4",
           "discourse test forum (ns forum): posting a reply fails with 'An error occurred' and logins are flaky since ~08:37. "
           "topic pages still load most of the time. what's wrong?", 202)
b.ns = ns = "forum"
T = P
onset = T("2026-10-06T08:37:10Z")
nodes = mknodes(b, ["gke-test-ew4-default-7c1e2f90-4xqb", "gke-test-ew4-default-7c1e2f90-9kdm", "gke-test-ew4-default-7c1e2f90-tz2w"],
                zones=["europe-west4-a", "europe-west4-b", "europe-west4-c"], instance="e2-standard-4", kubelet="v1.30.5-gke.1443001",
                os_image="Container-Optimized OS from Google", runtime="containerd://1.7.23", kernel="6.1.100+")
b.namespace(ns, {"environment": "test"})
IMG = "docker.io/bitnami/discourse:3.3.2-debian-12-r3"
denv = {"DISCOURSE_HOST": "forum.test.acme.dev", "DISCOURSE_REDIS_HOST": "discourse-redis-master", "DISCOURSE_REDIS_PORT_NUMBER": "6379",
        "DISCOURSE_DATABASE_HOST": "discourse-postgresql", "DISCOURSE_DATABASE_NAME": "bitnami_discourse", "DISCOURSE_PORT_NUMBER": "3000",
        "DISCOURSE_EXTRA_CONF_CONTENT": "", "UNICORN_WORKERS": "4", "DISCOURSE_REDIS_PASSWORD": {"valueFrom": {"secretKeyRef": {"name": "discourse-redis", "key": "redis-password"}}}}
sk = b.container("sidekiq", IMG, None, denv, {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "1536Mi"}}, command=["/opt/bitnami/scripts/discourse-sidekiq/run.sh"])
dpods = app(b, "discourse", ns, IMG, 2, 3000, nodes, labels={"app.kubernetes.io/name": "discourse", "app.kubernetes.io/instance": "discourse"},
            env=denv, readiness=b.http_probe("/srv/status", "http", 10, 5, 6), liveness=b.http_probe("/srv/status", "http", 10, 5, 6, 500),
            resources={"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}, extra_containers=[sk], revision=4,
            created="2026-04-14T12:00:00Z", pod_created=["2026-10-02T09:12:00Z", "2026-10-02T09:13:10Z"], rs_created="2026-10-02T09:11:58Z")
rl = {"app.kubernetes.io/name": "redis", "app.kubernetes.io/instance": "discourse", "app.kubernetes.io/component": "master"}
rpods = app(b, "discourse-redis-master", ns, "docker.io/bitnami/redis:7.2.5-debian-12-r4", 1, 6379, nodes[2:], kind="StatefulSet", labels=rl,
            container_name="redis", env={"REDIS_REPLICATION_MODE": "master", "ALLOW_EMPTY_PASSWORD": "no"},
            resources={"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}},
            extra_containers=[b.container("metrics", "docker.io/bitnami/redis-exporter:1.62.0-debian-12-r2", 9121, portname="metrics")],
            svc_ports=[("tcp-redis", 6379, "redis")], created="2026-04-14T12:00:00Z", pod_created="2026-09-22T06:40:00Z")
b.service("discourse-redis-metrics", ns, rl, [("http-metrics", 9121, "metrics")])
pg = app(b, "discourse-postgresql", ns, "docker.io/bitnami/postgresql:16.4.0-debian-12-r9", 1, 5432, nodes[:1], kind="StatefulSet",
         labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "discourse"}, container_name="postgresql",
         svc_ports=[("tcp-postgresql", 5432, "tcp-postgresql")], created="2026-04-14T12:00:00Z", pod_created="2026-09-22T06:41:00Z")
b.configmap("discourse-redis-configuration", ns, {
    "redis.conf": "# User-supplied common configuration:\nappendonly yes\nsave \"\"\nmaxmemory 256mb\nmaxmemory-policy noeviction\n# End of common configuration\n",
    "master.conf": "dir /data\nrename-command FLUSHDB \"\"\nrename-command FLUSHALL \"\"\n", "replica.conf": "dir /data\n"},
    labels=rl, annotations={"meta.helm.sh/release-name": "discourse"})
b.configmap("discourse", ns, {"DISCOURSE_HOST": "forum.test.acme.dev", "DISCOURSE_SMTP_HOST": "smtp.test.acme.dev", "DISCOURSE_ENABLE_HTTPS": "yes"})
b.event("Pod", pname(dpods[1]), ns, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 500", "2026-10-06T08:41:13Z", "2026-10-06T08:58:33Z", 5, "Warning", host=nodes[1], fieldPath="spec.containers{discourse}")
b.event("Node", nodes[0], None, "NodeSysctlChange", "{\"unmanaged\": {\"net.netfilter.nf_conntrack_buckets\": \"65536\"}}", "2026-10-06T08:11:40Z", type_="Warning", component="sysctl-monitor", host=nodes[0])
b.event("CronJob", "discourse-db-backup", ns, "SawCompletedJob", "Saw completed job: discourse-db-backup-29327520, condition: Complete", "2026-10-06T08:04:12Z", component="cronjob-controller", api="batch/v1")

rng = b.rng
D = [pname(p) for p in dpods]
PG = pname(pg[0])


def used(t):
    x = (t - b.start).total_seconds()
    o = (onset - b.start).total_seconds()
    return 268435456 * min(1.0, 0.80 + 0.20 * (x / o) ** 1.1) - (rng.randint(0, 300000) if t < onset else rng.randint(0, 9000))


gets = ["/latest", "/t/release-notes-3-3/%d" % 4812, "/c/support/5", "/t/%d.json", "/session/current.json", "/notifications", "/message-bus/%s/poll"]


def web(t):
    p = rng.choice(D)
    ip = "10.64.%d.%d" % (rng.randint(0, 20), rng.randint(2, 250))
    after = t >= onset
    r = rng.random()
    if r < 0.22:  # post reply
        if after and rng.random() < 0.85:
            b.log(t, "discourse", p, "Started POST \"/posts\" for %s at %s +0000\nProcessing by PostsController#create as JSON\nCompleted 500 Internal Server Error in %dms (ActiveRecord: %.1fms | Allocations: %d)\n\nRedis::CommandError (OOM command not allowed when used memory > 'maxmemory'.):\n\nlib/distributed_mutex.rb:118:in `try_to_get_lock'\nlib/distributed_mutex.rb:90:in `get_lock'\napp/models/post_creator.rb:186:in `create'" % (ip, t.strftime("%Y-%m-%d %H:%M:%S"), rng.randint(9, 40), rng.uniform(2, 9), rng.randint(4000, 12000)), "ERROR")
        else:
            b.log(t, "discourse", p, "Started POST \"/posts\" for %s at %s +0000\nProcessing by PostsController#create as JSON\nCompleted 200 OK in %dms (Views: 0.4ms | ActiveRecord: %.1fms | Allocations: %d)" % (ip, t.strftime("%Y-%m-%d %H:%M:%S"), rng.randint(120, 480), rng.uniform(20, 90), rng.randint(40000, 90000)), "INFO")
    elif r < 0.32:  # login
        if after and rng.random() < 0.5:
            b.log(t, "discourse", p, "Started POST \"/session\" for %s at %s +0000\nProcessing by SessionController#create as */*\nCompleted 500 Internal Server Error in %dms (ActiveRecord: %.1fms | Allocations: %d)\n\nRedis::CommandError (OOM command not allowed when used memory > 'maxmemory'.):\n\nlib/rate_limiter.rb:168:in `eval_lua'\nlib/rate_limiter.rb:105:in `performed!'\napp/controllers/session_controller.rb:312:in `create'" % (ip, t.strftime("%Y-%m-%d %H:%M:%S"), rng.randint(5, 20), rng.uniform(1, 5), rng.randint(3000, 9000)), "ERROR")
        else:
            b.log(t, "discourse", p, "Started POST \"/session\" for %s at %s +0000\nProcessing by SessionController#create as */*\nCompleted 200 OK in %dms (Views: 0.2ms | ActiveRecord: %.1fms | Allocations: %d)" % (ip, t.strftime("%Y-%m-%d %H:%M:%S"), rng.randint(150, 400), rng.uniform(10, 40), rng.randint(20000, 50000)), "INFO")
    else:
        path = rng.choice(gets)
        if "%d" in path:
            path = path % rng.randint(1000, 5000)
        if "%s" in path:
            path = path % rid(rng, 32)
        b.log(t, "discourse", p, "Started GET \"%s\" for %s at %s +0000\nProcessing by %s\nCompleted 200 OK in %dms (Views: %.1fms | ActiveRecord: %.1fms | Allocations: %d)" % (
            path, ip, t.strftime("%Y-%m-%d %H:%M:%S"), rng.choice(["ListController#latest as HTML", "TopicsController#show as JSON", "NotificationsController#index as JSON"]),
            rng.randint(30, 260), rng.uniform(5, 60), rng.uniform(3, 50), rng.randint(10000, 80000)), "INFO")


b.every(b.start, b.end, 3.2, web)


def side(t):
    p = rng.choice(D)
    if t < onset:
        job = rng.choice(["Jobs::ProcessPost", "Jobs::ProcessPost", "Jobs::PostAlert", "Jobs::NotifyMailingListSubscribers", "Jobs::RebakeCustomEmojiPosts"])
        b.log(t, "discourse-sidekiq", p, "%s pid=%d tid=%s class=%s jid=%s elapsed=%.3f INFO: done" % (iso(t, True), rng.randint(200, 260), rid(rng, 4, "abcdefghijklmnopqrstuvwxyz"), job, rid(rng, 24), rng.uniform(0.05, 1.4)), "INFO", container="sidekiq")
    else:
        if rng.random() < 0.6:
            b.log(t, "discourse-sidekiq", p, "%s pid=%d tid=%s WARN: Redis::CommandError: OOM command not allowed when used memory > 'maxmemory'.\n%s pid=%d tid=%s WARN: /opt/bitnami/discourse/vendor/bundle/ruby/3.3.0/gems/redis-client-0.22.2/lib/redis_client/connection_mixin.rb:50:in `call_pipelined'" % (iso(t, True), 231, "ohe3", iso(t, True), 231, "ohe3"), "WARN", container="sidekiq")
        else:
            b.log(t, "discourse-sidekiq", p, "%s pid=%d tid=%s class=Jobs::ProcessPost jid=%s elapsed=%.3f INFO: fail" % (iso(t, True), rng.randint(200, 260), rid(rng, 4, "abcdefghijklmnopqrstuvwxyz"), rid(rng, 24), rng.uniform(0.01, 0.1)), "INFO", container="sidekiq")


b.every(b.start, b.end, 6, side)
b.log(T("2026-10-06T07:59:58Z") + dt.timedelta(seconds=5), "discourse-sidekiq", D[0], "2026-10-06T08:00:03.114Z pid=231 tid=ohe3 class=Jobs::RebakePosts jid=6d0f5e0b1c3e7a91a8f0c2d1 INFO: start", "INFO", container="sidekiq")
for k in range(6):
    t = T("2026-10-06T08:02:00Z") + dt.timedelta(minutes=6 * k, seconds=rng.randint(0, 50))
    b.log(t, "discourse", rng.choice(D), "Onebox::Preview: Failed to fetch https://www.youtube.com/watch?v=%s - 429 Too Many Requests" % rid(rng, 11, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP0123456789"), "WARN")
for k in range(5):
    t = T("2026-10-06T08:05:00Z") + dt.timedelta(minutes=13 * k, seconds=rng.randint(0, 50))
    b.log(t, "discourse-postgresql", PG, "%s UTC [%d] LOG:  duration: %d.%03d ms  statement: SELECT \"topics\".* FROM \"topics\" WHERE (topics.deleted_at IS NULL) AND (topics.archetype <> 'private_message') ORDER BY topics.bumped_at DESC LIMIT 30 OFFSET 0" % (t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3], rng.randint(3000, 9000), rng.randint(1100, 2400), rng.randint(0, 999)), "LOG", container="postgresql")
b.log(T("2026-10-06T08:37:40Z"), "discourse", D[0], "Message Bus: Redis::CommandError OOM command not allowed when used memory > 'maxmemory'. in MessageBus::Backends::Redis#publish, backlog not updated", "ERROR")

# metrics
b.rng_series('redis_memory_used_bytes{namespace="forum", service="discourse-redis-metrics"}', "Redis used memory", [({"instance": "discourse-redis-master-0"}, lambda t, i: used(t))], fmt="%.0f")
b.rng_series('redis_memory_max_bytes{namespace="forum", service="discourse-redis-metrics"}', "Redis maxmemory", [({"instance": "discourse-redis-master-0"}, lambda t, i: 268435456)], fmt="%.0f")
b.rng_series('redis_config_maxmemory_policy_info{namespace="forum"} * 0 + 1', "Redis maxmemory-policy (label)", [({"instance": "discourse-redis-master-0", "maxmemory_policy": "noeviction"}, lambda t, i: 1)], fmt="%d")
b.rng_series('rate(redis_evicted_keys_total{namespace="forum"}[5m])', "Redis evicted keys/s", [({"instance": "discourse-redis-master-0"}, lambda t, i: 0)])
b.rng_series('sum by (cmd) (rate(redis_commands_failed_calls_total{namespace="forum"}[5m]))', "Redis failed calls/s by command",
             [({"cmd": c}, (lambda base: lambda t, i: b.noise(base, 0.2) if t >= onset else 0)(base)) for c, base in [("set", 3.1), ("lpush", 2.2), ("evalsha", 1.4), ("zadd", 0.9), ("incr", 0.6)]])
b.rng_series('redis_connected_clients{namespace="forum"}', "Redis clients", [({"instance": "discourse-redis-master-0"}, lambda t, i: b.noise(58, 0.05))], fmt="%.0f")
b.rng_series('sum by (queue) (sidekiq_queue_size{namespace="forum"})', "Sidekiq enqueued jobs",
             [({"queue": "low"}, lambda t, i: 171000 + i * 420 if t < onset else 171000 + 37 * 420), ({"queue": "default"}, lambda t, i: b.noise(40, 0.5) if t < onset else 900 + i * 3), ({"queue": "critical"}, lambda t, i: b.noise(3, 0.8))], fmt="%.0f")


def ingress(code):
    def f(t, i):
        base = 19 + 3 * math.sin(i / 8)
        a = t >= onset
        if code == "200":
            return b.noise(base * (0.83 if a else 0.985))
        if code == "500":
            return b.noise(base * (0.14 if a else 0.001), 0.2)
        if code == "302":
            return b.noise(0.9)
        if code == "404":
            return b.noise(0.3, 0.4)
        if code == "429":
            return b.noise(0.1, 0.5)
    return f


b.rng_series('sum by (status) (rate(nginx_ingress_controller_requests{exported_namespace="forum", ingress="discourse"}[5m]))', "Forum request rate by status",
             [({"status": c}, ingress(c)) for c in ["200", "302", "404", "429", "500"]])
b.rng_series('histogram_quantile(0.95, sum by (le) (rate(nginx_ingress_controller_request_duration_seconds_bucket{exported_namespace="forum", ingress="discourse"}[5m])))', "p95 latency (s)",
             [({}, lambda t, i: b.noise(0.41 if t < onset else 0.36, 0.12))])
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="forum", container!=""})', "Memory by pod",
             [({"pod": p}, (lambda base: lambda t, i: b.noise(base, 0.02))(base)) for p, base in [(D[0], 1.61e9), (D[1], 1.55e9), (pname(rpods[0]), 3.2e8), (PG, 4.4e8)]], fmt="%.0f")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="forum", container!=""}[5m]))', "CPU by pod",
             [({"pod": p}, (lambda base: lambda t, i: b.noise(base, 0.15))(base)) for p, base in [(D[0], 0.9), (D[1], 0.85), (pname(rpods[0]), 0.08), (PG, 0.22)]])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="forum"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in D + [pname(rpods[0]), PG]], fmt="%d")

notes = """
# apx-discourse-redis-maxmemory — Redis hits maxmemory with noeviction; Discourse writes fail

**Incident.** Discourse (bitnami chart, ns `forum`, test). The Redis master runs with `maxmemory 256mb` and
`maxmemory-policy noeviction` (k8s/config.yaml `discourse-redis-configuration`). An admin-started rebake
(`Jobs::RebakePosts` at 08:00) enqueues ~190k low-priority Sidekiq jobs, all stored in Redis, and used memory climbs until it
reaches maxmemory at ~08:37. With noeviction Redis refuses every write command: `OOM command not allowed when used memory > 'maxmemory'`.
Discourse needs Redis writes for distributed mutexes (post creation), rate limiters (login), MessageBus and Sidekiq, so replies
and logins return 500 while cached/read-only page views mostly work.

**Chain / evidence.** 500s on `POST /posts` and `POST /session` (ingress metrics by status; discourse logs with
`Redis::CommandError (OOM command not allowed ...)`) -> sidekiq WARN lines with the same error -> `redis_memory_used_bytes`
reaches `redis_memory_max_bytes` (268435456) at 08:37, `redis_commands_failed_calls_total` rising, evictions 0, policy
`noeviction` -> sidekiq `low` queue size ~186k (metrics) -> redis.conf in the configmap.

**Decoys.** Onebox 429 warnings from YouTube; Postgres slow-query LOG lines (routine, before onset); a GKE sysctl-monitor
warning on a node; nightly db-backup CronJob completed; one readiness 500 on a web pod (consequence). No restarts, CPU/memory of the
pods normal, Redis pod healthy and PING-able.

**must_mention:** `redis`, `memory` (maxmemory / out of memory).

**Provenance.** awesome-prometheus-alerts "Redis out of memory" / "Redis rejected connections" rules; Redis noeviction semantics
(redis.io eviction docs). App: bitnami/discourse chart (discourse + sidekiq containers, bitnami redis subchart with
redis-exporter). Generated by gen/c02_discourse.py (seed 202).
"""
b.write(["redis", "memory"], notes)
