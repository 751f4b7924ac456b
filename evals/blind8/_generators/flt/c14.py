from lib import *

b = B('flt-temporal-postgres-io-stress', 'money-transfer: starting transfers times out', '2026-12-12T13:00', 60, 'staging', 'stg-gke-usc1', 'temporal',
      "money-transfer demo on staging temporal: POST /transfer is timing out (504) or taking 10s+ since ~13:36; temporal frontend logs show 'context deadline exceeded'. nobody touched temporal today. what's the actual cause?",
      ['postgres', 'stress'], seed=1414)
ON = 36
b.nodes(['gke-stg-usc1-default-7d2a1f0b-%s' % x for x in ('9k3m', 'fq1z', 'w7lp')], zone_prefix='us-central1-', kubelet='v1.30.5-gke.1443001',
        runtime='containerd://1.7.23', os_image='Container-Optimized OS from Google', itype='e2-standard-8', cpu='8', mem='32880824Ki')
b.namespace('temporal')
b.namespace('money-transfer')
T = 'temporalio/server:1.25.2'
tenv = {'DB': 'postgres12', 'POSTGRES_SEEDS': 'temporal-postgresql', 'DB_PORT': '5432', 'POSTGRES_USER': 'temporal', 'NUM_HISTORY_SHARDS': '512'}
fe = b.deploy('temporal-frontend', T, 2, 7233, labels={'app.kubernetes.io/name': 'temporal', 'app.kubernetes.io/component': 'frontend'}, env=dict(tenv, SERVICES='frontend'), probe={'tcpSocket': {'port': 7233}}, svc_port=7233)
hi = b.deploy('temporal-history', T, 2, 7234, labels={'app.kubernetes.io/name': 'temporal', 'app.kubernetes.io/component': 'history'}, env=dict(tenv, SERVICES='history'), probe={'tcpSocket': {'port': 7234}}, svc_port=7234,
              res={'requests': {'cpu': '500m', 'memory': '1Gi'}, 'limits': {'memory': '2Gi'}})
ma = b.deploy('temporal-matching', T, 1, 7235, labels={'app.kubernetes.io/name': 'temporal', 'app.kubernetes.io/component': 'matching'}, env=dict(tenv, SERVICES='matching'), probe={'tcpSocket': {'port': 7235}}, svc_port=7235)
wo = b.deploy('temporal-worker', T, 1, 7239, labels={'app.kubernetes.io/name': 'temporal', 'app.kubernetes.io/component': 'worker'}, env=dict(tenv, SERVICES='worker'), probe=False, svc_port=7239)
pg = b.deploy('temporal-postgresql', 'docker.io/bitnami/postgresql:16.4.0-debian-12-r14', 1, 5432, labels={'app.kubernetes.io/name': 'postgresql', 'app.kubernetes.io/instance': 'temporal'}, kind='StatefulSet',
              probe={'exec': {'command': ['/bin/sh', '-c', 'exec pg_isready -U "temporal" -h 127.0.0.1 -p 5432']}}, svc_port=5432,
              res={'requests': {'cpu': '500m', 'memory': '1Gi'}, 'limits': {'memory': '2Gi'}}, mounts=[{'name': 'data', 'mountPath': '/bitnami/postgresql'}])
mw = b.deploy('moneytransfer-web', 'ghcr.io/acme-demo/money-transfer-web:0.4.1', 2, 8080, labels={'app': 'moneytransfer-web'}, ns='money-transfer', env={'TEMPORAL_ADDRESS': 'temporal-frontend.temporal:7233', 'TEMPORAL_NAMESPACE': 'default', 'TASK_QUEUE': 'money-transfer'}, probe={'httpGet': {'path': '/healthz', 'port': 8080}})
mk = b.deploy('moneytransfer-worker', 'ghcr.io/acme-demo/money-transfer-worker:0.4.1', 2, None, labels={'app': 'moneytransfer-worker'}, ns='money-transfer', env={'TEMPORAL_ADDRESS': 'temporal-frontend.temporal:7233', 'TASK_QUEUE': 'money-transfer'}, svc=False)
pgnode = [p for p in b.objs['pods'] if p['metadata']['name'] == pg[0]][0]['spec']['nodeName']
job = 'pod-io-stress-' + h(6, 'job')
hp = 'pod-io-stress-helper-' + h(5, 'hp')
b.pod('temporal-pg-io-runner', 'temporal', {'app': 'temporal-pg-io', 'app.kubernetes.io/part-of': 'litmus'}, {'containers': [{'name': 'chaos-runner', 'image': 'litmuschaos/chaos-runner:3.11.0'}], 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
      b.node_names[0], owner=('litmuschaos.io/v1alpha1', 'ChaosEngine', 'temporal-pg-io'), created=b.T(ON - 1, 2))
b.pod(hp, 'temporal', {'app': 'pod-io-stress-helper', 'app.kubernetes.io/part-of': 'litmus'}, {'containers': [{'name': 'helper', 'image': 'litmuschaos.docker.scarf.sh/litmuschaos/go-runner:3.11.0', 'command': ['/bin/bash', '-c', './helpers -name stress-chaos']}], 'hostPID': True, 'serviceAccountName': 'litmus-admin', 'restartPolicy': 'Never'},
      pgnode, owner=('batch/v1', 'Job', job), created=b.T(ON - 1, 31))
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosEngine', 'temporal-pg-io', ns='temporal', created=b.T(ON - 1, 0),
      labels={'workflow_name': 'temporal-dependency-resilience', 'infra_id': 'stg-usc1-chaos-infra'},
      spec={'engineState': 'active', 'annotationCheck': 'false', 'chaosServiceAccount': 'litmus-admin', 'jobCleanUpPolicy': 'retain',
            'appinfo': {'appns': 'temporal', 'applabel': 'app.kubernetes.io/name=postgresql', 'appkind': 'statefulset'},
            'experiments': [{'name': 'pod-io-stress', 'spec': {'components': {'env': [
                {'name': 'TARGET_CONTAINER', 'value': 'temporal-postgresql'}, {'name': 'FILESYSTEM_UTILIZATION_PERCENTAGE', 'value': '50'},
                {'name': 'NUMBER_OF_WORKERS', 'value': '8'}, {'name': 'VOLUME_MOUNT_PATH', 'value': '/bitnami/postgresql'},
                {'name': 'TOTAL_CHAOS_DURATION', 'value': '1800'}, {'name': 'CONTAINER_RUNTIME', 'value': 'containerd'},
                {'name': 'SOCKET_PATH', 'value': '/run/containerd/containerd.sock'}]}}}]},
      status={'engineStatus': 'initialized', 'experiments': [{'name': 'pod-io-stress', 'runner': 'temporal-pg-io-runner', 'experimentPod': job, 'status': 'Running', 'verdict': 'Awaited', 'lastUpdateTime': iso(b.T(ON, 0))}]})
b.obj('chaos', 'litmuschaos.io/v1alpha1', 'ChaosResult', 'temporal-pg-io-pod-io-stress', ns='temporal', created=b.T(ON - 1, 20),
      spec={'engine': 'temporal-pg-io', 'experiment': 'pod-io-stress'},
      status={'experimentStatus': {'phase': 'Running', 'verdict': 'Awaited', 'probeSuccessPercentage': 'Awaited'}, 'history': {'passedRuns': 1, 'failedRuns': 0, 'stoppedRuns': 0, 'targets': [{'name': 'temporal-postgresql', 'kind': 'statefulset', 'chaosStatus': 'targeted'}]}})
b.event('ChaosEngine', 'temporal-pg-io', 'ChaosEngineInitialized', 'Identifying app under test & launching temporal-pg-io-runner', b.T(ON - 1, 1), component='chaos-operator', api='litmuschaos.io/v1alpha1')
b.event('ChaosEngine', 'temporal-pg-io', 'ExperimentJobCreate', 'Experiment Job %s for Chaos Experiment: pod-io-stress' % job, b.T(ON - 1, 11), component='chaos-runner', api='litmuschaos.io/v1alpha1')
b.event('Pod', pg[0], 'ChaosInject', 'Injecting pod-io-stress chaos on application pod', b.T(ON - 1, 40), component=job)
b.event('Pod', pg[0], 'Unhealthy', 'Readiness probe failed: command timed out: "/bin/sh -c exec pg_isready -U \\"temporal\\" -h 127.0.0.1 -p 5432" timed out after 5s', b.T(ON + 3, 10), last=b.T(58, 40), count=9, typ='Warning', field='spec.containers{temporal-postgresql}')
b.event('Pod', wo[0], 'BackOff', 'Back-off restarting failed container temporal-worker in pod %s' % wo[0], b.ago(hours=3), typ='Warning', field='spec.containers{temporal-worker}')
b.log(b.T(ON - 1, 42), 'pod-io-stress-helper', hp, 'time="%s" level=info msg="[Info]: Details of Stressor:" CPU Core=0 Timeout=1800 Volume Mount Path=/bitnami/postgresql' % iso(b.T(ON - 1, 42)), 'info')
b.log(b.T(ON - 1, 43), 'pod-io-stress-helper', hp, 'time="%s" level=info msg="[Info]: The stressor command is stress-ng --timeout 1800s --io 8 --hdd 8 --hdd-bytes 50%% --temp-path /bitnami/postgresql"' % iso(b.T(ON - 1, 43)), 'info')


def tj(t, lvl, msg, svc, **kw):
    d = {'level': lvl, 'ts': iso(t, ms=True), 'msg': msg, 'service': svc}
    d.update(kw)
    return json.dumps(d, separators=(',', ':'))


def hi_fn(t, m, rnd, pod):
    if m < ON:
        return ('warn', tj(t, 'warn', 'Workflow task not found', 'history', **{'wf-namespace': 'default', 'wf-id': 'transfer-%s' % rid(rnd, 8), 'logging-call-at': 'handler.go:1204'})) if rnd.random() < 0.1 else None
    r = rnd.random()
    if r < 0.6:
        return ('error', tj(t, 'error', 'Persistent store operation failure', 'history', **{'shard-id': rnd.randint(1, 512), 'address': '10.40.%d.%d:7234' % (2, 19), 'store-operation': rnd.choice(['update-wf-execution', 'create-wf-execution', 'get-wf-execution', 'update-shard']), 'error': 'context deadline exceeded', 'logging-call-at': 'transaction_impl.go:490'}))
    return ('warn', tj(t, 'warn', 'Critical attempts processing workflow task', 'history', **{'shard-id': rnd.randint(1, 512), 'wf-namespace': 'default', 'attempt': rnd.randint(3, 9), 'logging-call-at': 'workflow_task_handler_callbacks.go:612'}))


b.stream('temporal-history', hi, 6, hi_fn)


def fe_fn(t, m, rnd, pod):
    if m < ON:
        return None
    return ('error', tj(t, 'error', 'service failures', 'frontend', operation='StartWorkflowExecution', **{'wf-namespace': 'default', 'error': 'context deadline exceeded', 'logging-call-at': 'telemetry.go:389'}))


b.stream('temporal-frontend', fe, 4, fe_fn)
b.stream('temporal-matching', ma, 0.5, lambda t, m, rnd, pod: ('info', tj(t, 'info', 'Task queue manager state changed', 'matching', **{'wf-task-queue-name': '/_sys/money-transfer/%d' % rnd.randint(1, 3), 'lifecycle': 'Started', 'logging-call-at': 'task_queue_partition_manager.go:183'})))


def pg_fn(t, m, rnd, pod):
    if m < ON:
        if rnd.random() < 0.05:
            return ('LOG', '%s UTC [%d] LOG:  checkpoint complete: wrote %d buffers (0.6%%); 0 WAL file(s) added, 0 removed, 1 recycled; write=26.914 s, sync=0.011 s, total=26.951 s; sync files=41, longest=0.003 s, average=0.001 s' % (t.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3], 71, rnd.randint(200, 900)))
        return None
    d = rnd.uniform(1100, 9800)
    stmt = rnd.choice(['UPDATE executions SET db_record_version = $1, next_event_id = $2, data = $3, data_encoding = $4, state = $5, state_encoding = $6 WHERE shard_id = $7 AND namespace_id = $8 AND workflow_id = $9 AND run_id = $10',
                       'INSERT INTO history_node (shard_id, tree_id, branch_id, node_id, prev_txn_id, txn_id, data, data_encoding) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
                       'UPDATE shards SET range_id = $1, data = $2, data_encoding = $3 WHERE shard_id = $4', 'COMMIT'])
    return ('LOG', '%s UTC [%d] LOG:  duration: %.3f ms  execute <unnamed>: %s' % (t.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3], rnd.randint(200, 400), d, stmt))


b.stream('temporal-postgresql', pg, 5, pg_fn)
b.log(b.T(ON + 12, 3), 'temporal-postgresql', pg[0], '%s UTC [71] LOG:  checkpoint complete: wrote 1204 buffers (0.9%%); 0 WAL file(s) added, 0 removed, 2 recycled; write=29.870 s, sync=41.388 s, total=71.305 s; sync files=57, longest=19.204 s, average=0.726 s' % b.T(ON + 12, 3).strftime('%Y-%m-%d %H:%M:%S.%f')[:-3], 'LOG')


def mw_fn(t, m, rnd, pod):
    if m >= ON and rnd.random() < 0.55:
        return ('ERROR', json.dumps({'time': iso(t, ms=True), 'level': 'ERROR', 'msg': 'failed to start transfer workflow', 'error': 'context deadline exceeded', 'from': 'acct-%04d' % rnd.randint(1, 999), 'to': 'acct-%04d' % rnd.randint(1, 999), 'status': 504}, separators=(',', ':')))
    return ('INFO', json.dumps({'time': iso(t, ms=True), 'level': 'INFO', 'msg': 'transfer started', 'workflow_id': 'transfer-%s' % rid(rnd, 8), 'duration_ms': rnd.randint(20, 90) if m < ON else rnd.randint(2500, 9900)}, separators=(',', ':')))


b.stream('moneytransfer-web', mw, 7, mw_fn, ns='money-transfer')
b.stream('moneytransfer-worker', mk, 0.4, lambda t, m, rnd, pod: ('WARN', json.dumps({'time': iso(t, ms=True), 'level': 'WARN', 'msg': 'Failed to poll for task.', 'Namespace': 'default', 'TaskQueue': 'money-transfer', 'Error': 'context deadline exceeded'}, separators=(',', ':'))) if rnd.random() < 0.3 else None, ns='money-transfer')

b.rng('sum by (code) (rate(http_requests_total{namespace="money-transfer", handler="/transfer"}[5m]))', 'moneytransfer-web /transfer requests/s by code',
      [({'code': '200'}, step_fn(7.0, 3.1, ON + 1)), ({'code': '504'}, step_fn(0, 3.9, ON + 1))])
b.rng('histogram_quantile(0.99, sum by (le, operation) (rate(service_latency_bucket{namespace="temporal", service_name="frontend", operation="StartWorkflowExecution"}[5m])))', 'temporal frontend StartWorkflowExecution p99 (s)',
      [({'operation': 'StartWorkflowExecution'}, step_fn(0.061, 9.8, ON + 1, rel=.05))])
b.rng('histogram_quantile(0.99, sum by (le, operation) (rate(persistence_latency_bucket{namespace="temporal", service_name="history"}[5m])))', 'temporal history persistence p99 (s) by operation',
      [({'operation': 'UpdateWorkflowExecution'}, step_fn(0.012, 7.9, ON + 1, rel=.1)), ({'operation': 'CreateWorkflowExecution'}, step_fn(0.015, 8.4, ON + 1, rel=.1)), ({'operation': 'GetWorkflowExecution'}, step_fn(0.004, 2.2, ON + 1, rel=.1))])
b.rng('sum by (service_name) (rate(persistence_errors{namespace="temporal"}[5m]))', 'temporal persistence errors/s', [({'service_name': 'history'}, step_fn(0, 3.4, ON + 1, rel=.15)), ({'service_name': 'matching'}, step_fn(0, 0.3, ON + 1, rel=.3))])
b.rng('rate(node_disk_io_time_seconds_total{instance="%s", device="nvme0n2"}[5m])' % pgnode, 'disk busy fraction of the postgres PV device on its node', [({'device': 'nvme0n2'}, step_fn(0.07, 0.99, ON, rel=.01))])
b.rng('sum by (pod) (rate(container_fs_writes_bytes_total{namespace="temporal", pod="%s"}[5m]))' % pg[0], 'postgres pod filesystem write bytes/s', [({'pod': pg[0]}, step_fn(2.1e6, 178e6, ON, rel=.1))])
b.rng('pg_stat_activity_count{namespace="temporal", state="active"}', 'postgres active backends', [({}, step_fn(3, 47, ON + 1, rel=.1))])
cpu = {p: noisy(0.15) for p in fe + hi + ma}
cpu[pg[0]] = step_fn(0.2, 1.6, ON, rel=.1)
mem = {p: noisy(MiB(410), .02) for p in fe + hi + ma}
mem[pg[0]] = step_fn(MiB(620), MiB(1380), ON, rel=.03)
res_metrics(b, 'temporal', cpu, mem, {wo[0]: const(4)})

b.notes = '''
# flt-temporal-postgres-io-stress — Litmus pod-io-stress saturates the temporal-postgresql volume

**Incident.** Litmus ChaosEngine `temporal-pg-io` (experiment `pod-io-stress`, target statefulset `temporal-postgresql`,
8 workers, 50 % of the filesystem, VOLUME_MOUNT_PATH `/bitnami/postgresql`, 1800 s) was injected at 13:35:40Z
(`stress-ng --io 8 --hdd 8 --temp-path /bitnami/postgresql`). The PV device goes to ~100 % busy; Postgres commits and
WAL fsyncs take seconds; Temporal history persistence operations exceed their deadlines → StartWorkflowExecution times out
→ money-transfer web returns 504 / 10 s responses.

**Chain.** moneytransfer-web 504s and "failed to start transfer workflow: context deadline exceeded" (metrics, logs) → temporal
frontend "service failures ... StartWorkflowExecution" (logs, p99 ~10 s) → history "Persistent store operation failure ... context
deadline exceeded", persistence p99 seconds (logs, metrics) → postgres slow statements (duration 1–10 s), checkpoint sync=41 s,
pg_isready timeouts (logs, events) → disk busy 0.99 and container fs writes 178 MB/s on the postgres pod (metrics) →
`k8s/chaos.yaml` ChaosEngine/ChaosResult, helper pod on the postgres node and its stressor command (logs), ChaosInject event.

**Decoys.** "Workflow task not found" history warnings before onset; temporal-worker restarts 3 h earlier; matching task-queue churn;
money-transfer workers' poll timeouts (consequence).

**must_mention:** `postgres`, `stress` (pod-io-stress / I/O stress).

**Provenance.** LitmusChaos `pod-io-stress` (FILESYSTEM_UTILIZATION_PERCENTAGE, NUMBER_OF_WORKERS, VOLUME_MOUNT_PATH; stress-ng);
Chaos Mesh StressChaos/IOChaos latency family. App: Temporal server 1.25 (frontend/history/matching/worker, postgres12 persistence,
JSON zap logs, `persistence_latency`, `service_latency`) with the money-transfer sample (web starter + worker). Generated by /tmp/b8/c14.py (seed 1414).
'''
b.write()
