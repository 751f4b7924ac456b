from lib import *
import math

b = Bundle("apx-sonarqube-max-map-count", "CI sonar stage failing: SonarQube unreachable", "2026-02-24T08:10:00Z", "2026-02-24T09:20:00Z",
           "test", "test-eks-euc1",
           "CI in test: the sonar scan stage fails on every pipeline since ~08:40 with 'SonarQube server can not be reached'. "
           "the sonarqube pod (ns sonarqube) shows restarts. what's wrong with it?", 1010)
b.ns = ns = "sonarqube"
T = P
evict = T("2026-02-24T08:35:40Z")
oldn = ["ip-10-44-7-210.eu-central-1.compute.internal", "ip-10-44-25-31.eu-central-1.compute.internal"]
newn = ["ip-10-44-11-158.eu-central-1.compute.internal", "ip-10-44-29-77.eu-central-1.compute.internal"]
for n, z in zip(oldn, "ab"):
    b.node(n, zone="eu-central-1" + z, labels={"eks.amazonaws.com/nodegroup": "tools-v7", "eks.amazonaws.com/nodegroup-image": "ami-07a1c9e3b2f0d5e61"}, unschedulable=True,
           taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-02-24T08:31:02Z"}, {"key": "eks.amazonaws.com/nodegroup-upgrade", "effect": "NoSchedule", "value": "true"}],
           os_image="Amazon Linux 2", kernel="5.10.230-223.885.amzn2.x86_64", runtime="containerd://1.7.23", kubelet="v1.29.10-eks-94953ac", created="2025-12-01T08:00:00Z")
for n, z in zip(newn, "ab"):
    b.node(n, zone="eu-central-1" + z, labels={"eks.amazonaws.com/nodegroup": "tools-v8", "eks.amazonaws.com/nodegroup-image": "ami-0d3f6a81e92b4c7f0", "acme.io/launch-template-version": "8"},
           os_image="Amazon Linux 2023.6.20250203", kernel="6.1.127-135.201.amzn2023.x86_64", runtime="containerd://1.7.25", kubelet="v1.29.10-eks-59bf375", created="2026-02-24T08:24:00Z")
b.namespace(ns, {"environment": "test", "pod-security.kubernetes.io/enforce": "baseline"})
b.namespace("ci", {"environment": "test"})
sl = {"app": "sonarqube", "release": "sonarqube"}
crash = ["2026-02-24T08:36:55Z", "2026-02-24T08:37:40Z", "2026-02-24T08:38:35Z", "2026-02-24T08:40:02Z", "2026-02-24T08:42:50Z", "2026-02-24T08:48:10Z", "2026-02-24T08:53:31Z",
         "2026-02-24T08:58:52Z", "2026-02-24T09:04:12Z", "2026-02-24T09:09:33Z", "2026-02-24T09:14:53Z"]
sc = b.container("sonarqube", "docker.io/sonarqube:10.7.0-community", 9000,
                 {"SONAR_WEB_JAVAOPTS": "-Xmx1g", "SONAR_CE_JAVAOPTS": "-Xmx1g", "SONAR_JDBC_URL": "jdbc:postgresql://sonarqube-postgresql:5432/sonarDB", "SONAR_JDBC_USERNAME": "sonarUser",
                  "SONAR_JDBC_PASSWORD": {"valueFrom": {"secretKeyRef": {"name": "sonarqube-postgresql", "key": "password"}}}},
                 {"requests": {"cpu": "400m", "memory": "2Gi"}, "limits": {"cpu": "800m", "memory": "6Gi"}},
                 liveness=b.http_probe("/api/system/liveness", 9000, 30, 1, 6, 60), readiness={"exec": {"command": ["sh", "-c", "#!/bin/bash\n# A Sonarqube container is considered ready if the status is UP, DB_MIGRATION_NEEDED or DB_MIGRATION_RUNNING\nwget --no-proxy -qO- http://localhost:9000/api/system/status | grep -q -e '\"status\":\"UP\"' -e '\"status\":\"DB_MIGRATION_NEEDED\"' -e '\"status\":\"DB_MIGRATION_RUNNING\"' || exit 1\n"]}, "periodSeconds": 30, "timeoutSeconds": 1, "failureThreshold": 6, "initialDelaySeconds": 60},
                 volumeMounts=[{"name": "sonarqube", "mountPath": "/opt/sonarqube/data", "subPath": "data"}])
init = [b.container("init-fs", "docker.io/sonarqube:10.7.0-community", None, None, {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}}, command=["sh", "-c", "chown -R 1000:0 /opt/sonarqube/data"])]
b.statefulset("sonarqube-sonarqube", ns, sl, [sc], 1, ready=0, created="2025-06-10T10:00:00Z", svc="sonarqube-sonarqube", init=init,
              vct=[{"metadata": {"name": "sonarqube"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "20Gi"}}, "storageClassName": "gp3"}}])
sp = b.pod("sonarqube-sonarqube-0", ns, dict(sl, **{"statefulset.kubernetes.io/pod-name": "sonarqube-sonarqube-0"}), ("StatefulSet", "sonarqube-sonarqube"), [sc], newn[0], "2026-02-24T08:35:52Z",
           cstatus={"sonarqube": crashloop(11, "Error", 78, "2026-02-24T09:14:40Z", "2026-02-24T09:14:53Z")}, init=init,
           init_status=[{"name": "init-fs", "ready": True, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-02-24T08:36:01Z", "finishedAt": "2026-02-24T08:36:02Z"}}, "image": "docker.io/sonarqube:10.7.0-community", "imageID": "", "started": False}],
           volumes=[{"name": "sonarqube", "persistentVolumeClaim": {"claimName": "sonarqube-sonarqube-sonarqube-sonarqube-0"}}])
b.service("sonarqube-sonarqube", ns, sl, [("http", 9000, "http")], endpoints=[(sp["status"]["podIP"], newn[0], "sonarqube-sonarqube-0", False)])
pg = app(b, "sonarqube-postgresql", ns, "docker.io/bitnami/postgresql:15.5.0", 1, 5432, newn[1:], kind="StatefulSet", labels={"app.kubernetes.io/name": "postgresql", "app.kubernetes.io/instance": "sonarqube"},
         container_name="postgresql", created="2025-06-10T10:00:00Z", pod_created="2026-02-24T08:33:20Z")
b.configmap("sonarqube-sonarqube-config", ns, {"sonar.properties": "sonar.forceAuthentication=true\nsonar.core.serverBaseURL=https://sonar.test.acme.dev\n"}, labels=sl)
b.configmap("sonarqube-helm-values", ns, {"values.yaml": "# rendered values (reference copy kept by platform team)\ninitSysctl:\n  enabled: false   # disabled 2025-06: privileged init container not allowed under PSA baseline;\n                   # vm.max_map_count is set on the nodes by the tools nodegroup launch template user-data\ninitFs:\n  enabled: true\nelasticsearch:\n  bootstrapChecks: true\npersistence:\n  enabled: true\n  size: 20Gi\n"})
b.event("Pod", "sonarqube-sonarqube-0", ns, "Killing", "Stopping container sonarqube", "2026-02-24T08:35:40Z", host=oldn[0], fieldPath="spec.containers{sonarqube}")
b.event("Pod", "sonarqube-sonarqube-0", ns, "Evicted", "Evicted pod: node group upgrade (drain)", "2026-02-24T08:35:40Z", type_="Normal", component="eks-nodegroup-upgrade")
b.event("Pod", "sonarqube-sonarqube-0", ns, "Scheduled", "Successfully assigned sonarqube/sonarqube-sonarqube-0 to %s" % newn[0], "2026-02-24T08:35:52Z", component="default-scheduler")
b.event("Pod", "sonarqube-sonarqube-0", ns, "BackOff", "Back-off restarting failed container sonarqube in pod sonarqube-sonarqube-0_sonarqube(%s)" % sp["metadata"]["uid"], "2026-02-24T08:37:41Z", "2026-02-24T09:17:20Z", 168, "Warning", host=newn[0], fieldPath="spec.containers{sonarqube}")
b.event("Pod", "sonarqube-sonarqube-0", ns, "Started", "Started container sonarqube", "2026-02-24T08:36:03Z", "2026-02-24T09:14:40Z", 12, host=newn[0], fieldPath="spec.containers{sonarqube}")
for n in oldn:
    b.event("Node", n, None, "NodeNotSchedulable", "Node %s status is now: NodeNotSchedulable" % n, "2026-02-24T08:31:02Z", host=n)
for n in newn:
    b.event("Node", n, None, "NodeReady", "Node %s status is now: NodeReady" % n, "2026-02-24T08:24:41Z", host=n)
b.event("PersistentVolumeClaim", "sonarqube-sonarqube-sonarqube-sonarqube-0", ns, "ExternalProvisioning", "Waiting for a volume to be created either by the external provisioner 'ebs.csi.aws.com' or manually by the system administrator.", "2025-06-10T10:00:01Z", component="persistentvolume-controller")
b.event("Pod", "sonarqube-sonarqube-0", ns, "SuccessfulAttachVolume", 'AttachVolume.Attach succeeded for volume "pvc-6ad0f3c2-97be-4d5e-a1f8-0cb2f1d4e9a3"', "2026-02-24T08:35:58Z", component="attachdetach-controller")

rng = b.rng
SP = "sonarqube-sonarqube-0"


def sq(t, proc, lvl, src, msg):
    b.log(t, "sonarqube", SP, "%s %-5s %s[][%s] %s" % (t.strftime("%Y.%m.%d %H:%M:%S"), lvl, proc, src, msg), lvl, container="sonarqube")


def bg(t):
    if t < evict:
        r = rng.random()
        if r < 0.6:
            sq(t, "ce", "INFO", "o.s.c.t.CeWorkerImpl", "Executed task | project=%s | type=REPORT | branch=main | branchType=BRANCH | id=%s | submitter=ci-bot | status=SUCCESS | time=%dms" % (rng.choice(["payments-service", "ledger-api", "checkout-web", "risk-engine"]), rid(rng, 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_"), rng.randint(1500, 9000)))
        else:
            sq(t, "web", "INFO", "o.s.s.q.ProjectsInWarningDaemon", "Counting number of projects in warning is enabled.") if rng.random() < 0.2 else sq(t, "ce", "INFO", "o.s.c.t.CeWorkerImpl", "Execute task | project=ledger-api | type=REPORT | branch=PR-2201 | branchType=PULL_REQUEST | id=%s | submitter=ci-bot" % rid(rng, 20, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))


b.every(b.start, evict, 40, bg)
sq(T("2026-02-24T08:35:41Z"), "app", "INFO", "o.s.a.SchedulerImpl", "Stopping SonarQube")
sq(T("2026-02-24T08:35:49Z"), "app", "INFO", "o.s.a.SchedulerImpl", "SonarQube is stopped")
starts = ["2026-02-24T08:36:03Z"] + [x for x in crash[:-1]]
for k, s in enumerate(starts):
    t = T(s) + dt.timedelta(seconds=1)
    sq(t, "app", "INFO", "o.s.a.AppFileSystem", "Cleaning or creating temp directory /opt/sonarqube/temp")
    sq(t + dt.timedelta(seconds=1), "app", "INFO", "o.s.a.es.EsSettings", "Elasticsearch listening on [HTTP: 127.0.0.1:9001, TCP: 127.0.0.1:{}]")
    sq(t + dt.timedelta(seconds=1), "app", "INFO", "o.s.a.ProcessLauncherImpl", "Launch process[ELASTICSEARCH] from [/opt/sonarqube/elasticsearch]: /opt/sonarqube/elasticsearch/bin/elasticsearch")
    sq(t + dt.timedelta(seconds=2), "app", "INFO", "o.s.a.SchedulerImpl", "Waiting for Elasticsearch to be up and running")
    sq(t + dt.timedelta(seconds=9), "es", "INFO", "o.e.n.Node", "version[8.14.3], pid[%d], build[tar/d55f984299e0e88dee72ebd8255f7ff130859ad0/2024-07-07T22:04:49.882652950Z], OS[Linux/6.1.127-135.201.amzn2023.x86_64/amd64], JVM[Eclipse Adoptium/OpenJDK 64-Bit Server VM/17.0.13/17.0.13+11]" % rng.randint(60, 90))
    sq(t + dt.timedelta(seconds=11), "es", "ERROR", "o.e.b.Elasticsearch", "node validation exception\n[1] bootstrap checks failed. You must address the points described in the following [1] lines before starting Elasticsearch. For more information see [https://www.elastic.co/guide/en/elasticsearch/reference/8.14/bootstrap-checks.html]\nbootstrap check failure [1] of [1]: max virtual memory areas vm.max_map_count [65530] is too low, increase to at least [262144]; for more information see [https://www.elastic.co/guide/en/elasticsearch/reference/8.14/_maximum_map_count_check.html]")
    sq(t + dt.timedelta(seconds=11), "es", "WARN", "o.e.n.Node", "unexpected exception while waiting for http server to close\njava.util.concurrent.ExecutionException: java.lang.IllegalStateException: Future got interrupted")
    sq(t + dt.timedelta(seconds=12), "app", "WARN", "o.s.a.p.AbstractManagedProcess", "Process exited with exit value [ElasticSearch]: 78")
    sq(t + dt.timedelta(seconds=12), "app", "INFO", "o.s.a.SchedulerImpl", "Process[ElasticSearch] is stopped")
    sq(t + dt.timedelta(seconds=12), "app", "INFO", "o.s.a.SchedulerImpl", "SonarQube is stopped")
    if k == 0:
        sq(t, "app", "WARN", "o.s.a.c.AppSettingsLoaderImpl", "Configuration of sonar.web.javaOpts is deprecated, use SONAR_WEB_JAVAOPTS environment variable or sonar.web.javaAdditionalOpts instead")
projects = ["payments-service", "ledger-api", "checkout-web", "risk-engine", "catalog-sync", "notification-svc"]


def scan(t):
    pr = rng.choice(projects)
    pod = "runner-%s-project-%d-concurrent-%d-%s" % (rid(rng, 8, "abcdefghijklmnopqrstuvwxyz0123456789"), rng.randint(10, 90), rng.randint(0, 3), rid(rng, 5, "abcdefghijklmnopqrstuvwxyz0123456789"))
    if t < T("2026-02-24T08:35:40Z"):
        b.log(t, "gitlab-runner-job", pod, "INFO: Analysis report uploaded in %dms\nINFO: ANALYSIS SUCCESSFUL, you can find the results at: https://sonar.test.acme.dev/dashboard?id=%s\nINFO: EXECUTION SUCCESS" % (rng.randint(80, 400), pr), "INFO", container="build", ns="ci")
    else:
        b.log(t, "gitlab-runner-job", pod, "INFO: Scanner configuration file: /opt/sonar-scanner/conf/sonar-scanner.properties\nINFO: Project root configuration file: NONE\nINFO: SonarScanner 6.2.1.4610\nERROR: SonarQube server [http://sonarqube-sonarqube.sonarqube:9000] can not be reached\nINFO: EXECUTION FAILURE\nERROR: Error during SonarScanner execution\norg.sonarsource.scanner.lib.internal.http.HttpException: Failed to connect to sonarqube-sonarqube.sonarqube/172.20.%d.%d:9000: Connection refused" % (111, 58), "ERROR", container="build", ns="ci")


b.every(b.start, b.end, 70, scan)
for t in ["2026-02-24T08:20:14Z", "2026-02-24T08:56:14Z"]:
    b.log(T(t), "gitlab-runner-job", "runner-x1p9s0qk-project-41-concurrent-1-" + rid(rng, 5, "abcdefghijklmnopqrstuvwxyz"), "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.5:test (default-test) on project ledger-core: There are test failures.", "ERROR", container="build", ns="ci")
b.log(T("2026-02-24T08:33:31Z"), "sonarqube-postgresql", pname(pg[0]), "2026-02-24 08:33:31.022 GMT [1] LOG:  database system was interrupted; last known up at 2026-02-24 08:31:55 GMT\n2026-02-24 08:33:31.310 GMT [1] LOG:  database system was not properly shut down; automatic recovery in progress", "LOG", container="postgresql")
b.log(T("2026-02-24T08:33:32Z"), "sonarqube-postgresql", pname(pg[0]), "2026-02-24 08:33:32.118 GMT [1] LOG:  database system is ready to accept connections", "LOG", container="postgresql")

b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace="sonarqube"})', "Restarts", [({"pod": SP}, lambda t, i: restarts_series(crash, t) if t > evict else 0), ({"pod": pname(pg[0])}, lambda t, i: 0)], fmt="%d")
b.rng_series('kube_pod_container_status_waiting_reason{namespace="sonarqube", reason="CrashLoopBackOff"}', "CrashLoopBackOff", [({"pod": SP, "container": "sonarqube"}, lambda t, i: 1 if t > T("2026-02-24T08:37:41Z") and not any(T(c) - dt.timedelta(seconds=13) < t <= T(c) for c in crash) else 0)], fmt="%d")
b.rng_series('node_sysctl_vm_max_map_count', "vm.max_map_count by node (node-exporter textfile)",
             [({"instance": n}, (lambda n: lambda t, i: 262144 if n in oldn else (65530 if t > T("2026-02-24T08:25:00Z") else None))(n)) for n in oldn + newn], fmt="%d")
b.rng_series('sum by (node) (kube_node_spec_unschedulable)', "Unschedulable nodes", [({"node": n}, (lambda n: lambda t, i: 1 if n in oldn and t > T("2026-02-24T08:31:02Z") else 0)(n)) for n in oldn + newn], fmt="%d")
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="sonarqube", container="sonarqube"})', "SonarQube memory", [({"pod": SP}, lambda t, i: b.noise(3.3e9, 0.03) if t < evict else b.noise(3.1e8, 0.4))], fmt="%.0f")
b.rng_series('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="sonarqube", container="sonarqube"}[5m]))', "SonarQube CPU", [({"pod": SP}, lambda t, i: b.noise(0.35, 0.3) if t < evict else b.noise(0.06, 0.5))])
b.rng_series('sum by (status) (rate(gitlab_ci_job_stage_total{stage="sonar"}[10m]) * 600)', "Sonar stage outcomes per 10 min", [({"status": "success"}, lambda t, i: b.noise(8, 0.3) if t < evict else 0), ({"status": "failed"}, lambda t, i: 0 if t < evict else b.noise(8, 0.3))])

notes = """
# apx-sonarqube-max-map-count — SonarQube's embedded Elasticsearch fails its vm.max_map_count bootstrap check on new nodes

**Incident.** SonarQube 10.7 (Helm, ns `sonarqube`, test). The `tools` node group is upgraded to a new AL2023 launch template
(tools-v8) at 08:24-08:35; the old nodes are cordoned and drained. `sonarqube-sonarqube-0` is evicted at 08:35:40 and starts on
ip-10-44-11-158. The chart's privileged `initSysctl` container is disabled (PSA baseline), relying on node user-data to set
`vm.max_map_count=262144` -- the new launch template dropped that user-data, so the node has the kernel default 65530. The embedded
Elasticsearch refuses to start: `bootstrap check failure [1] of [1]: max virtual memory areas vm.max_map_count [65530] is too low,
increase to at least [262144]`, exits 78, the SonarQube app process stops, CrashLoopBackOff (11 restarts). CI scanners get connection refused.

**Chain / evidence.** Scanner job logs `SonarQube server ... can not be reached` (ns ci) -> sonarqube-0 CrashLoopBackOff, exit 78
(k8s/pods.yaml, BackOff events, restarts metric) -> sonarqube logs: ES `node validation exception ... vm.max_map_count [65530] is too low`
and `Process exited with exit value [ElasticSearch]: 78` -> pod moved to a tools-v8 node (events, k8s/nodes.yaml: new AMI/launch template,
old nodes cordoned) -> `node_sysctl_vm_max_map_count` 262144 on old nodes vs 65530 on new -> values note `initSysctl.enabled: false`
(configmap `sonarqube-helm-values`).

**Decoys.** The node-group upgrade itself (routine; it is the trigger, not the mechanism); Postgres crash recovery after its own
move (recovered at 08:33); a deprecation WARN about sonar.web.javaOpts; genuine unit-test failures in another pipeline; memory/CPU of the pod are low.

**must_mention:** `max_map_count`.

**Provenance.** OS-limit/sysctl failure family; the Elasticsearch bootstrap check and exit code 78 are upstream behaviour and the
SonarQube Helm chart documents `initSysctl` for exactly this (SonarSource/helm-chart-sonarqube). Node-group AMI rollouts losing
user-data are a common k8s.af-style story. Generated by gen/c10_sonarqube.py (seed 1010).
"""
b.write(["max_map_count"], notes)
