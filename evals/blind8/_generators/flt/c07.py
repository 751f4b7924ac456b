from lib import *

b = B('flt-guestbook-redis-leader-oom', 'guestbook: new entries fail to save', '2026-12-04T10:00', 60, 'test', 'test-gke-euw1', 'guestbook',
      "guestbook frontend (test): posting a new message fails with a 500 since roughly 10:19, existing messages still show (but new ones from before seem missing sometimes). we only did the monthly resource right-sizing this morning. what's going on?",
      ['redis-leader', 'memory'], seed=707)
ON = 19
b.nodes(['gke-test-euw1-default-pool-3f2a9c1d-%s' % x for x in ('1h7q', '6wzc', 'r0pn')], zone_prefix='europe-west1-', kubelet='v1.30.5-gke.1699000',
        runtime='containerd://1.7.23', os_image='Container-Optimized OS from Google', itype='e2-standard-4')
b.namespace('guestbook')
fe = b.deploy('frontend', 'us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5', 3, 80, labels={'app': 'guestbook', 'tier': 'frontend'},
              env={'GET_HOSTS_FROM': 'dns'}, probe={'httpGet': {'path': '/', 'port': 80}}, svc_name='frontend', cname='php-redis')
RL_HASH = h(10, 'rl2')
OOM = [19.2, 20.6, 22.5, 25.3, 29.9, 37.1, 47.6]  # minutes of OOM kills
last_start = b.T(47, 58)
rl = b.deploy('redis-leader', 'docker.io/redis:6.0.5', 1, 6379, labels={'app': 'redis', 'role': 'leader', 'tier': 'backend'},
              res={'requests': {'cpu': '100m', 'memory': '48Mi'}, 'limits': {'memory': '64Mi'}}, probe=False, svc_port=6379,
              gen=2, rs_hash=RL_HASH, rs_created=b.T(9, 4), pod_created=b.T(9, 4),
              ann={'rightsizing.acme.io/applied-from': 'vpa-recommendation 2026-12-01', 'kubectl.kubernetes.io/restartedAt': iso(b.T(9, 3))},
              pods_override={0: dict(ready=False, restarts=7, state={'waiting': {'reason': 'CrashLoopBackOff', 'message': 'back-off 5m0s restarting failed container=leader pod=redis-leader-%s-%s_guestbook(%s)' % (RL_HASH, h(5, b.case, 'redis-leader', 0), uid('x'))}},
                                     last_state={'terminated': {'exitCode': 137, 'reason': 'OOMKilled', 'startedAt': iso(last_start), 'finishedAt': iso(b.T(51, 12)), 'containerID': 'containerd://' + rid(b.rnd, 64)}})},
              cname='leader', status_override={'unavailableReplicas': 1})
b.deploy('redis-follower', 'us-docker.pkg.dev/google-samples/containers/gke/gb-redis-follower:v2', 2, 6379, labels={'app': 'redis', 'role': 'follower', 'tier': 'backend'},
         res={'requests': {'cpu': '100m', 'memory': '100Mi'}, 'limits': {'memory': '256Mi'}}, probe=False, svc_port=6379, cname='follower')
fo = [p['metadata']['name'] for p in b.objs['pods'] if p['metadata']['name'].startswith('redis-follower')]
b.add('workloads', {'apiVersion': 'apps/v1', 'kind': 'ReplicaSet', 'metadata': b.meta('redis-leader-6f8b8d5c9d', labels={'app': 'redis', 'role': 'leader', 'tier': 'backend', 'pod-template-hash': '6f8b8d5c9d'},
                                                                                        ann={'deployment.kubernetes.io/revision': '1'}, created=b.ago(days=41), owner=('apps/v1', 'Deployment', 'redis-leader'), kind='ReplicaSet'),
                    'spec': {'replicas': 0, 'selector': {'matchLabels': {'app': 'redis', 'pod-template-hash': '6f8b8d5c9d'}},
                             'template': {'spec': {'containers': [{'name': 'leader', 'image': 'docker.io/redis:6.0.5', 'resources': {'requests': {'cpu': '100m', 'memory': '100Mi'}}}]}}},
                    'status': {'replicas': 0, 'observedGeneration': 2}})
for p in ['frontend']:
    pass
b.event('Deployment', 'redis-leader', 'ScalingReplicaSet', 'Scaled up replica set redis-leader-%s to 1' % RL_HASH, b.T(9, 4), component='deployment-controller', api='apps/v1')
b.event('Deployment', 'redis-leader', 'ScalingReplicaSet', 'Scaled down replica set redis-leader-6f8b8d5c9d to 0 from 1', b.T(9, 11), component='deployment-controller', api='apps/v1')
b.event('Deployment', 'redis-follower', 'ScalingReplicaSet', 'Scaled up replica set redis-follower-%s to 2' % h(10, b.case, 'redis-follower', 'rs'), b.ago(days=41), component='deployment-controller', api='apps/v1')
rlp = rl[0]
b.event('Pod', rlp, 'Pulled', 'Container image "docker.io/redis:6.0.5" already present on machine', b.T(9, 5), last=last_start, count=8, field='spec.containers{leader}')
b.event('Pod', rlp, 'Started', 'Started container leader', b.T(9, 6), last=last_start, count=8, field='spec.containers{leader}')
b.event('Pod', rlp, 'BackOff', 'Back-off restarting failed container leader in pod %s_guestbook(%s)' % (rlp, uid(b.case, 'Pod', rlp)), b.T(20, 37), last=b.T(59, 40), count=29, typ='Warning', field='spec.containers{leader}')
node = [p for p in b.objs['pods'] if p['metadata']['name'] == rlp][0]['spec']['nodeName']
b.event('Node', node, 'OOMKilling', 'Memory cgroup out of memory: Killed process 1 (redis-server) total-vm:%dkB, anon-rss:65412kB, file-rss:4096kB, shmem-rss:0kB, UID:999 pgtables:232kB oom_score_adj:984' % 118244, b.T(19, 12), last=b.T(51, 12), count=8, typ='Warning',
        component='kernel-monitor', host=node, ns='default')
b.event('Pod', fe[1], 'Unhealthy', 'Readiness probe failed: Get "http://10.8.1.22:80/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)', b.T(2, 40), typ='Warning', field='spec.containers{php-redis}')
# logs
up = [(9.1, 19.2)] + [(OOM[i] + 0.4 + (0.2 if i > 2 else 0) * i, OOM[i + 1]) for i in range(len(OOM) - 1)]
up = [(9.1, 19.2), (19.6, 20.6), (21.2, 22.5), (23.6, 25.3), (27.9, 29.9), (33.3, 37.1), (42.6, 47.6), (47.97, 51.2)]
OOM = [19.2, 20.6, 22.5, 25.3, 29.9, 37.1, 47.6, 51.2]


def leader_up(m):
    return any(a <= m < z for a, z in up)


def rts(t):
    return t.strftime('%d %b %Y %H:%M:%S.') + '%03d' % (t.microsecond // 1000)


for a, z in up:
    t = b.T(0, a * 60)
    for k, msg in enumerate(['1:C %s # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo',
                             '1:C %s # Redis version=6.0.5, bits=64, commit=00000000, modified=0, pid=1, just started',
                             '1:M %s # WARNING: The TCP backlog setting of 511 cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of 128.',
                             '1:M %s # Server initialized',
                             '1:M %s # WARNING overcommit_memory is set to 0! Background save may fail under low memory condition.',
                             '1:M %s * Loading RDB produced by version 6.0.5',
                             '1:M %s * RDB age 31 seconds',
                             '1:M %s * RDB memory usage when created 52.71 Mb',
                             '1:M %s * DB loaded from disk: 0.412 seconds',
                             '1:M %s * Ready to accept connections']):
        tt = t + dt.timedelta(milliseconds=40 * k + (400 if k >= 8 else 0))
        b.log(tt, 'redis-leader', rlp, msg % rts(tt), 'NOTICE', container='leader')
    # replica sync -> fork BGSAVE -> oom
    for k, msg in enumerate(['1:M %s * Replica %s:6379 asks for synchronization',
                             '1:M %s * Full resync requested by replica %s:6379',
                             '1:M %s * Starting BGSAVE for SYNC with target: disk',
                             '1:M %s * Background saving started by pid %d']):
        tt = t + dt.timedelta(seconds=3 + k * 0.01)
        if k == 3:
            b.log(tt, 'redis-leader', rlp, msg % (rts(tt), 30 + k), 'NOTICE', container='leader')
        else:
            b.log(tt, 'redis-leader', rlp, msg % (rts(tt), '10.8.%d.%d' % (2, 17)) if k < 2 else msg % rts(tt), 'NOTICE', container='leader')
    if a < 10:
        for mm in range(11, 19, 2):
            tt = b.T(mm, 44)
            b.log(tt, 'redis-leader', rlp, '1:M %s * 100 changes in 300 seconds. Saving...' % rts(tt), 'NOTICE', container='leader')
            b.log(tt, 'redis-leader', rlp, '1:M %s * Background saving started by pid %d' % (rts(tt), 90 + mm), 'NOTICE', container='leader')
            b.log(tt + dt.timedelta(seconds=1), 'redis-leader', rlp, '%d:C %s * DB saved on disk' % (90 + mm, rts(tt + dt.timedelta(seconds=1))), 'NOTICE', container='leader')
            b.log(tt + dt.timedelta(seconds=1), 'redis-leader', rlp, '%d:C %s * RDB: 4 MB of memory used by copy-on-write' % (90 + mm, rts(tt + dt.timedelta(seconds=1))), 'NOTICE', container='leader')


def fe_fn(t, m, rnd, pod):
    acc = t.strftime('%d/%b/%Y:%H:%M:%S +0000')
    c = ip(rnd, 8)
    ref = '"http://guestbook.test.acme.internal/" "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"'
    if rnd.random() < 0.72:
        return (None, '%s - - [%s] "GET /guestbook.php?cmd=get&key=messages HTTP/1.1" 200 %d %s' % (c, acc, rnd.randint(2100, 2600), ref))
    v = rnd.choice(['hello', 'test+from+qa', 'lunch%3F', 'ping', 'release+notes+v5'])
    if m >= ON and not leader_up(m) or (m >= ON and rnd.random() < 0.25):
        return [('error', '[%s] [php7:error] [pid %d] [client %s:%d] PHP Fatal error:  Uncaught Predis\\Connection\\ConnectionException: Connection refused [tcp://redis-leader:6379] in /usr/local/lib/php/Predis/Connection/AbstractConnection.php:155\nStack trace:\n#0 /usr/local/lib/php/Predis/Connection/StreamConnection.php(128): Predis\\Connection\\AbstractConnection->onConnectionError(\'Connection refu...\', 111)\n#1 /var/www/html/guestbook.php(28): Predis\\Client->set(\'messages\', \'%s\')\n#2 {main}\n  thrown in /usr/local/lib/php/Predis/Connection/AbstractConnection.php on line 155' % (t.strftime('%a %b %d %H:%M:%S.%f %Y'), rnd.randint(20, 60), c, rnd.randint(30000, 60000), v)),
                (None, '%s - - [%s] "GET /guestbook.php?cmd=set&key=messages&value=%s HTTP/1.1" 500 - %s' % (c, acc, v, ref))]
    return (None, '%s - - [%s] "GET /guestbook.php?cmd=set&key=messages&value=%s HTTP/1.1" 200 %d %s' % (c, acc, v, rnd.randint(40, 60), ref))


b.stream('frontend', fe, 13, fe_fn, container='php-redis')
b.stream('frontend', fe, 0.4, lambda t, m, rnd, pod: ('notice', '[%s] [php7:notice] [pid %d] [client %s:%d] PHP Notice:  Undefined index: value in /var/www/html/guestbook.php on line 21' % (t.strftime('%a %b %d %H:%M:%S.%f %Y'), rnd.randint(20, 60), ip(rnd, 8), rnd.randint(30000, 60000))), container='php-redis')


def fo_fn(t, m, rnd, pod):
    if m < ON or leader_up(m):
        return None
    return [('NOTICE', '1:S %s * Connecting to MASTER redis-leader:6379' % rts(t)), ('NOTICE', '1:S %s * MASTER <-> REPLICA sync started' % rts(t)),
            ('WARNING', '1:S %s # Error condition on socket for SYNC: Connection refused' % rts(t))]


b.stream('redis-follower', fo, 1.5, fo_fn, container='follower')
for a in OOM:
    for p in fo:
        tt = b.T(0, a * 60 + 0.3)
        b.log(tt, 'redis-follower', p, '1:S %s # Connection with master lost.' % rts(tt), 'WARNING', container='follower')
        b.log(tt, 'redis-follower', p, '1:S %s * Caching the disconnected master state.' % rts(tt), 'NOTICE', container='follower')

b.rng('sum by (code) (rate(apache_accesses_by_code_total{namespace="guestbook", service="frontend"}[5m]))', 'frontend (apache) requests/s by status',
      [({'code': '200'}, step_fn(39.4, 31.9, ON + 1)), ({'code': '500'}, step_fn(0, 7.5, ON + 1, rel=.25))])
b.rng('sum by (pod) (container_memory_working_set_bytes{namespace="guestbook", container="leader"})', 'redis-leader memory working set (bytes)',
      [({'pod': rlp}, (lambda m, r: (MiB(57) + r.uniform(-1, 1) * MiB(1)) if m < 9 else (None if not leader_up(m) else min(MiB(64) - 40000, MiB(56) + MiB(8) * ((m % 1.7) / 1.7)))))])
b.rng('kube_pod_container_resource_limits{namespace="guestbook", container="leader", resource="memory"}', 'redis-leader memory limit (bytes)',
      [({'pod': rlp}, sometimes(const(MiB(64)), lambda m: m >= 9.1))])
b.rng('sum by (pod) (kube_pod_container_status_last_terminated_reason{namespace="guestbook", reason="OOMKilled"})', 'last terminated reason OOMKilled',
      [({'pod': rlp}, step_fn(0, 1, 19.3, rel=0))])
b.rng('redis_connected_slaves{namespace="guestbook", service="redis-leader"}', 'redis-leader connected replicas',
      [({'pod': rlp}, lambda m, r: 2 if (m < ON or leader_up(m)) else None)])
b.rng('sum by (pod) (redis_master_link_up{namespace="guestbook"})', 'redis-follower link to master up',
      [({'pod': p}, (lambda m, r: 1 if (m < ON) else 0)) for p in fo])
cpu = {p: noisy(0.015) for p in fe}
cpu[rlp] = lambda m, r: (0.008 if m < ON else 0.03 * r.random())
mem = {p: noisy(MiB(38), .03) for p in fe}
mem.update({p: noisy(MiB(61), .02) for p in fo})
mem[rlp] = lambda m, r: MiB(57) if m < ON else (MiB(60) if leader_up(m) else None)
rs = {rlp: lambda m, r: sum(1 for a, z in up[1:] if a <= m)}
res_metrics(b, 'guestbook', cpu, mem, rs)

b.notes = '''
# flt-guestbook-redis-leader-oom — redis-leader memory limit cut to 64Mi, OOMKilled on every replica full-sync

**Incident.** The monthly right-sizing (annotation `rightsizing.acme.io/applied-from`) rolled `redis-leader` at 10:09 with
`limits.memory: 64Mi` (before: request 100Mi, no limit; old ReplicaSet in `k8s/workloads.yaml`). Redis loads a ~53 MB RDB; when the
two followers ask for a full resync, the BGSAVE fork's copy-on-write pushes the cgroup over 64Mi and the kernel OOM-kills
redis-server (10:19:12). It restarts, followers resync, it is killed again → CrashLoopBackOff (7 restarts). While the leader is
down the PHP frontend's `cmd=set` fails with `Predis ... Connection refused [tcp://redis-leader:6379]` → 500; reads go to the
followers (stale data, some recent entries missing after restarts).

**Chain.** frontend 500 on set (apache status metrics; access log + PHP Fatal errors) → redis-leader pod CrashLoopBackOff,
lastState OOMKilled exit 137, restarts 7 (`k8s/pods.yaml`), node `OOMKilling` events and BackOff events (`k8s/events.yaml`) →
memory working set at the 64Mi limit, `last_terminated_reason{reason="OOMKilled"}` (metrics) → leader logs: every restart loads the RDB
and starts "BGSAVE for SYNC" just before dying; followers "Connection with master lost".

**Decoys.** PHP "Undefined index" notices all window; overcommit_memory/somaxconn warnings on each Redis start (the overcommit one
sounds like the cause but the fork does happen); a frontend readiness timeout at 10:02; the question calls the right-sizing routine.

**must_mention:** `redis-leader`, `memory` (memory limit / out of memory / OOMKilled).

**Provenance.** AIOpsLab / ITBench resource-limit faults (memory limit misconfiguration → OOMKilled), Litmus `pod-memory-hog` family.
App: Kubernetes guestbook (gb-frontend:v5 PHP/Apache + Predis, redis-leader redis:6.0.5, gb-redis-follower:v2). Generated by /tmp/b8/c07.py (seed 707).
'''
b.write()
