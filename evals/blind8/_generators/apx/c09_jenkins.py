from lib import *
import math

b = Bundle("apx-jenkins-agent-quota", "Jenkins staging: builds stuck in queue", "2026-03-17T09:00:00Z", "2026-03-17T10:10:00Z",
           "staging", "stg-eks-apse2",
           "jenkins staging (ns ci): builds on the 'maven' label have been sitting in the queue for 30+ minutes with "
           "'Waiting for next available executor'. a few builds do run. nothing looks down. why are we not getting agents?", 909)
b.ns = ns = "ci"
T = P
chg = T("2026-03-17T09:22:40Z")
nodes = mknodes(b, ["ip-10-80-3-17.ap-southeast-2.compute.internal", "ip-10-80-19-122.ap-southeast-2.compute.internal", "ip-10-80-34-201.ap-southeast-2.compute.internal",
                    "ip-10-80-36-88.ap-southeast-2.compute.internal"], zones=["ap-southeast-2a", "ap-southeast-2b", "ap-southeast-2c", "ap-southeast-2c"], instance="m6i.4xlarge",
                cpu="16", alloc_cpu="15890m", mem="65023680Ki", alloc_mem="63999680Ki")
b.namespace(ns, {"environment": "staging"})
b.namespace("ci-agents", {"environment": "staging"})
jl = {"app.kubernetes.io/name": "jenkins", "app.kubernetes.io/instance": "jenkins", "app.kubernetes.io/component": "jenkins-controller"}
jc = app(b, "jenkins", ns, "docker.io/jenkins/jenkins:2.479.3-jdk17", 1, [("http", 8080), ("agent-listener", 50000)], nodes[:1], kind="StatefulSet", labels=jl,
         container_name="jenkins", env={"JAVA_OPTS": "-Dcasc.reload.token=$(POD_NAME) -XX:MaxRAMPercentage=70", "CASC_JENKINS_CONFIG": "/var/jenkins_home/casc_configs", "JENKINS_SLAVE_AGENT_PORT": "50000"},
         extra_containers=[b.container("config-reload", "docker.io/kiwigrid/k8s-sidecar:1.28.0", None, {"LABEL": "jenkins-jenkins-config", "FOLDER": "/var/jenkins_home/casc_configs", "REQ_URL": "http://localhost:8080/reload-configuration-as-code/?casc-reload-token=$(POD_NAME)"})],
         resources={"requests": {"cpu": "1", "memory": "4Gi"}, "limits": {"memory": "6Gi"}}, created="2025-06-01T10:00:00Z", pod_created="2026-03-10T02:00:00Z",
         svc_ports=[("http", 8080, "http")])
b.service("jenkins-agent", ns, jl, [("agent-listener", 50000, 50000)])
JC = pname(jc[0])
casc = """jenkins:
  clouds:
  - kubernetes:
      name: "kubernetes"
      namespace: "ci-agents"
      jenkinsUrl: "http://jenkins.ci.svc.cluster.local:8080"
      jenkinsTunnel: "jenkins-agent.ci.svc.cluster.local:50000"
      containerCapStr: "20"
      podRetention: "never"
      templates:
      - name: "maven"
        label: "maven"
        namespace: "ci-agents"
        nodeUsageMode: EXCLUSIVE
        containers:
        - name: "jnlp"
          image: "jenkins/inbound-agent:3283.v92c105e0f819-1"
          resourceRequestCpu: "250m"
          resourceRequestMemory: "512Mi"
          resourceLimitMemory: "512Mi"
        - name: "maven"
          image: "maven:3.9.9-eclipse-temurin-21"
          command: "sleep"
          args: "infinity"
          resourceRequestCpu: "1"
          resourceRequestMemory: "2Gi"
          resourceLimitMemory: "6Gi"
      - name: "node"
        label: "node"
        namespace: "ci-agents"
        containers:
        - name: "node"
          image: "node:20-bookworm"
          resourceRequestMemory: "1Gi"
          resourceLimitMemory: "2Gi"
"""
b.configmap("jenkins-jenkins-config-kubernetes", ns, {"jcasc-default-config.yaml": casc}, labels={"jenkins-jenkins-config": "true"},
            annotations={"acme.io/changed-by": "PR #418 'maven agents: raise memory limit to 6Gi for integration tests'", "acme.io/changed-at": "2026-03-17T09:22:31Z"})
b.add("policy.yaml", {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": b.meta("ResourceQuota", "agents-quota", "ci-agents", None, None, "2025-06-01T10:00:00Z"),
                      "spec": {"hard": {"limits.memory": "28Gi", "requests.cpu": "24", "requests.memory": "48Gi", "pods": "30"}},
                      "status": {"hard": {"limits.memory": "28Gi", "requests.cpu": "24", "requests.memory": "48Gi", "pods": "30"},
                                 "used": {"limits.memory": "26Gi", "requests.cpu": "5", "requests.memory": "10Gi", "pods": "4"}}})
b.add("policy.yaml", {"apiVersion": "v1", "kind": "LimitRange", "metadata": b.meta("LimitRange", "agents-defaults", "ci-agents", None, None, "2025-06-01T10:00:00Z"),
                      "spec": {"limits": [{"type": "Container", "default": {"memory": "1Gi"}, "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}]}})
al = {"jenkins": "agent", "jenkins/label": "maven", "kubernetes.jenkins.io/controller": "http___jenkins_ci_svc_cluster_local_8080x"}
agents = []
for k, (nm, created, mem) in enumerate([("maven-0k4tz", "2026-03-17T09:24:10Z", "6Gi"), ("maven-5w1hq", "2026-03-17T09:25:02Z", "6Gi"), ("maven-q8m3d", "2026-03-17T09:27:40Z", "6Gi"),
                                         ("maven-zr72c", "2026-03-17T09:29:15Z", "6Gi")]):
    cs = [b.container("jnlp", "jenkins/inbound-agent:3283.v92c105e0f819-1", None, {"JENKINS_URL": "http://jenkins.ci.svc.cluster.local:8080", "JENKINS_AGENT_NAME": nm},
                      {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}})]
    if nm.startswith("maven"):
        cs.append(b.container("maven", "maven:3.9.9-eclipse-temurin-21", None, None, {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": mem}}, command=["sleep"], args=["infinity"]))
    else:
        cs.append(b.container("node", "node:20-bookworm", None, None, {"requests": {"cpu": "100m", "memory": "1Gi"}, "limits": {"memory": mem}}))
    agents.append(b.pod(nm, "ci-agents", dict(al, **{"jenkins/label": nm.split("-")[0]}), None, cs, nodes[1 + k % 3], created, annotations={"buildUrl": "http://jenkins.ci.svc.cluster.local:8080/job/%s/" % rng_job if False else None} and None))
for a in agents:
    b.event("Pod", pname(a), "ci-agents", "Scheduled", "Successfully assigned ci-agents/%s to %s" % (pname(a), a["spec"]["nodeName"]), a["metadata"]["creationTimestamp"], component="default-scheduler")
b.event("Node", nodes[3], None, "RegisteredNode", "Node %s event: Registered Node %s in Controller" % (nodes[3], nodes[3]), "2026-03-17T09:12:20Z", component="node-controller")
b.event("Pod", JC, ns, "Unhealthy", "Startup probe failed: HTTP probe failed with statuscode: 503", "2026-03-10T02:01:10Z", type_="Warning", host=nodes[0], fieldPath="spec.containers{jenkins}")

rng = b.rng


def jlog(t, lvl, src, msg):
    b.log(t, "jenkins", JC, "%s+0000 [id=%d]\t%s\t%s: %s" % (t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3], rng.randint(100, 9000), lvl, src, msg), lvl, container="jenkins")


jobs = ["payments-service/main", "ledger-api/PR-2231", "ledger-api/main", "catalog-sync/main", "checkout-web/PR-918", "notification-svc/main", "risk-engine/release-4.2"]
bn = {j: rng.randint(100, 900) for j in jobs}


def builds(t):
    j = rng.choice(jobs)
    bn[j] += 1
    if t < chg:
        jlog(t, "INFO", "o.c.j.p.k.KubernetesLauncher#launch", "Created Pod: kubernetes ci-agents/maven-%s" % rid(rng, 5, "0123456789abcdefghijklmnopqrstuvwxyz"))
        jlog(t + dt.timedelta(seconds=rng.randint(200, 600)), "INFO", "o.j.p.workflow.job.WorkflowRun#finish", "%s #%d completed: %s" % (j, bn[j], "SUCCESS" if rng.random() < 0.85 else "FAILURE"))
    else:
        jlog(t, "INFO", "hudson.model.Queue#maintain", "%s #%d is waiting: Waiting for next available executor on \u2018maven\u2019" % (j, bn[j]))


b.every(b.start, b.end, 55, builds)


def prov(t):
    nm = "maven-" + rid(rng, 5, "0123456789abcdefghijklmnopqrstuvwxyz")
    jlog(t, "WARNING", "o.c.j.p.k.KubernetesLauncher#launch",
         "Error in provisioning; agent=KubernetesSlave name: %s, template=PodTemplate{id='b2f4c1e0a7d94f1c8a3e', name='maven', namespace='ci-agents', label='maven', containers=[ContainerTemplate{name='jnlp', image='jenkins/inbound-agent:3283.v92c105e0f819-1', resourceRequestCpu='250m', resourceRequestMemory='512Mi', resourceLimitMemory='512Mi'}, ContainerTemplate{name='maven', image='maven:3.9.9-eclipse-temurin-21', command='sleep', args='infinity', resourceRequestCpu='1', resourceRequestMemory='2Gi', resourceLimitMemory='6Gi'}]}\n"
         "io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: https://172.20.0.1:443/api/v1/namespaces/ci-agents/pods. Message: pods \"%s\" is forbidden: exceeded quota: agents-quota, requested: limits.memory=6656Mi, used: limits.memory=26Gi, limited: limits.memory=28Gi. Received status: Status(apiVersion=v1, code=403, details=StatusDetails(causes=[], group=null, kind=pods, name=%s, retryAfterSeconds=null, uid=null, additionalProperties={}), kind=Status, message=pods \"%s\" is forbidden: exceeded quota: agents-quota, requested: limits.memory=6656Mi, used: limits.memory=26Gi, limited: limits.memory=28Gi, metadata=ListMeta(_continue=null, remainingItemCount=null, resourceVersion=null, selfLink=null, additionalProperties={}), reason=Forbidden, status=Failure, additionalProperties={}).\n"
         "\tat io.fabric8.kubernetes.client.dsl.internal.OperationSupport.requestFailure(OperationSupport.java:660)\n\tat org.csanchez.jenkins.plugins.kubernetes.KubernetesLauncher.launch(KubernetesLauncher.java:131)" % (nm, nm, nm, nm))
    jlog(t + dt.timedelta(milliseconds=40), "INFO", "o.c.j.p.k.KubernetesSlave#_terminate", "Terminating Kubernetes instance for agent %s" % nm)


b.every(T("2026-03-17T09:30:30Z"), b.end, 20, prov)
jlog(T("2026-03-17T09:22:41Z"), "INFO", "i.j.p.casc.ConfigurationAsCode#configure", "Configuration as Code reloaded from /var/jenkins_home/casc_configs/jcasc-default-config.yaml")
b.log(T("2026-03-17T09:22:41Z") - dt.timedelta(milliseconds=600), "jenkins-config-reload", JC, "{\"time\": \"2026-03-17T09:22:40.402Z\", \"level\": \"INFO\", \"msg\": \"Writing /var/jenkins_home/casc_configs/jcasc-default-config.yaml (ascii)\"}", "INFO", container="config-reload")
for a in agents[:4]:
    t = P(a["metadata"]["creationTimestamp"])
    jlog(t, "INFO", "o.c.j.p.k.KubernetesLauncher#launch", "Created Pod: kubernetes ci-agents/%s" % pname(a))
    jlog(t + dt.timedelta(seconds=14), "INFO", "o.c.j.p.k.KubernetesLauncher#launch", "Pod is running: kubernetes ci-agents/%s" % pname(a))
    jlog(t + dt.timedelta(seconds=19), "INFO", "h.TcpSlaveAgentListener$ConnectionHandler#run", "Accepted JNLP4-connect connection #%d from /%s:%d" % (rng.randint(1000, 2000), a["status"]["podIP"], rng.randint(40000, 60000)))
for t in ["2026-03-17T09:05:12Z", "2026-03-17T09:48:03Z"]:
    jlog(T(t), "WARNING", "hudson.model.UpdateCenter$UpdateCenterConfiguration#download", "Failed to download update-center.json from https://updates.jenkins.io/update-center.json?id=default&version=2.479.3: java.net.SocketTimeoutException: Connect timed out")
jlog(T("2026-03-17T09:56:30Z"), "INFO", "o.j.p.workflow.job.WorkflowRun#finish", "ledger-api/PR-2231 #%d completed: FAILURE" % (bn["ledger-api/PR-2231"] - 3))
b.log(T("2026-03-17T09:56:29Z"), "jenkins-agent", "maven-5w1hq", "[ERROR] Tests run: 412, Failures: 2, Errors: 0, Skipped: 3\n[ERROR] LedgerReconciliationIT.shouldBalanceMultiCurrency:88 expected:<0.00> but was:<0.01>\n[ERROR] BUILD FAILURE", "ERROR", container="maven", ns="ci-agents")

b.rng_series('sum by (resource, type) (kube_resourcequota{namespace="ci-agents", resourcequota="agents-quota", resource="limits.memory"})', "Agents quota: limits.memory used vs hard",
             [({"resource": "limits.memory", "type": "hard"}, lambda t, i: 30064771072),
              ({"resource": "limits.memory", "type": "used"}, lambda t, i: (rng.choice([2, 3, 4, 5]) * 2684354560) if t < chg else 6979321856 * sum(1 for a in agents[:4] if P(a["metadata"]["creationTimestamp"]) <= t) + (2684354560 if t < T("2026-03-17T09:29:15Z") else 0))], fmt="%.0f")
b.rng_series('jenkins_queue_size_value{namespace="ci"}', "Jenkins build queue length", [({}, lambda t, i: rng.randint(0, 2) if t < T("2026-03-17T09:30:00Z") else 2 + int((t - T("2026-03-17T09:30:00Z")).total_seconds() / 190))], fmt="%d")
b.rng_series('jenkins_executor_in_use_value{namespace="ci", label="maven"}', "Executors in use (maven)", [({}, lambda t, i: rng.randint(2, 5) if t < chg else sum(1 for a in agents[:4] if P(a["metadata"]["creationTimestamp"]) <= t))], fmt="%d")
b.rng_series('rate(jenkins_node_builds_count{namespace="ci"}[10m]) * 600', "Builds completed per 10 min", [({}, lambda t, i: b.noise(9, 0.3) if t < T("2026-03-17T09:35:00Z") else b.noise(1.5, 0.5))])
b.rng_series('sum by (namespace) (kube_pod_status_phase{namespace="ci-agents", phase="Pending"})', "Pending agent pods", [({"namespace": "ci-agents"}, lambda t, i: 0)], fmt="%d")
b.rng_series('sum by (node) (kube_node_status_allocatable{resource="memory"}) - sum by (node) (kube_pod_container_resource_requests{resource="memory"})', "Unrequested memory per node",
             [({"node": n}, (lambda base: lambda t, i: base)(base)) for n, base in zip(nodes, [5.1e10, 4.4e10, 4.7e10, 6.2e10])], fmt="%.0f")
b.rng_series('sum by (pod) (container_memory_working_set_bytes{namespace="ci", container="jenkins"})', "Jenkins controller memory", [({"pod": JC}, lambda t, i: b.noise(3.1e9, 0.03))], fmt="%.0f")

notes = """
# apx-jenkins-agent-quota — raised agent memory limit now exceeds the namespace ResourceQuota

**Incident.** Jenkins (Helm, controller in ns `ci`, agents in ns `ci-agents`, staging). PR #418 (09:22) changes the JCasC pod
template `maven` to `resourceLimitMemory: 6Gi` (was 2Gi); the config-reload sidecar applies it at 09:22:41. The namespace
`ci-agents` has ResourceQuota `agents-quota` with `limits.memory: 28Gi`. Four 6.5Gi maven agents consume 26Gi (26624Mi),
so every further agent pod is rejected by the API server (`pods "maven-xxxxx" is forbidden: exceeded quota: agents-quota ...`).
The Kubernetes plugin retries every ~20 s and the build queue grows; no Pending pods or scheduler events exist because the pods are
never created, and nodes have plenty of free memory.

**Chain / evidence.** Queue growing, executors capped at 4 (metrics `jenkins_queue_size_value`, `jenkins_executor_in_use_value`,
Queue "waiting" log lines) -> Jenkins log `KubernetesLauncher#launch: Error in provisioning ... Forbidden ... exceeded quota:
agents-quota, requested: limits.memory=6656Mi, used: 26Gi, limited: 28Gi` -> ResourceQuota status used≈hard
(k8s/policy.yaml, `kube_resourcequota`) -> JCasC configmap `jenkins-jenkins-config-kubernetes` with 6Gi limit and change annotation,
CasC reload at 09:22:41.

**Decoys.** update-center download timeouts; a genuine test failure in ledger-api PR-2231; new node registered at 09:12
(autoscaler); old startup-probe event from the 03-10 restart. No Pending pods, nodes not full.

**must_mention:** `quota`.

**Provenance.** Kubernetes quota failure family (k8s.af; awesome-prometheus-alerts KubernetesQuotaExceeded /
KubernetesResourceQuotaFull style rules); error text is the upstream API-server quota admission message surfaced by the Jenkins
kubernetes-plugin (KubernetesLauncher). App objects follow jenkinsci/helm-charts (controller StatefulSet, config-reload sidecar,
JCasC `jenkins-jenkins-config-*` configmaps). Generated by gen/c09_jenkins.py (seed 909).
"""
b.write(["quota"], notes)
