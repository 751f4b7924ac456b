from lib import *
import math

b = Bundle("apx-vault-autounseal-kms", "payments-api rollout stuck: new pods Init:0/1", "2026-10-20T11:40:00Z", "2026-10-20T12:50:00Z",
           "staging", "stg-eks-euw1",
           "staging: the payments-api rollout started at 12:35 (ns payments) is stuck - the new pods sit in Init:0/1 forever while the old "
           "ones keep serving. nothing changed in payments-api except the image tag. what's blocking it?", 1111)
b.ns = "vault"
T = P
tf = T("2026-10-20T11:52:17Z")
rs_t = {0: T("2026-10-20T12:21:05Z"), 1: T("2026-10-20T12:25:10Z"), 2: T("2026-10-20T12:29:20Z")}
dep = T("2026-10-20T12:35:04Z")
oldn = ["ip-10-20-40-12.eu-west-1.compute.internal", "ip-10-20-61-201.eu-west-1.compute.internal", "ip-10-20-88-34.eu-west-1.compute.internal"]
newn = ["ip-10-20-42-77.eu-west-1.compute.internal", "ip-10-20-63-9.eu-west-1.compute.internal", "ip-10-20-90-150.eu-west-1.compute.internal"]
for n, z in zip(oldn, "abc"):
    b.node(n, zone="eu-west-1" + z, labels={"eks.amazonaws.com/nodegroup": "platform-1-29"}, kubelet="v1.29.10-eks-94953ac", unschedulable=True,
           taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-10-20T12:19:40Z"}])
for n, z in zip(newn, "abc"):
    b.node(n, zone="eu-west-1" + z, labels={"eks.amazonaws.com/nodegroup": "platform-1-30"}, kubelet="v1.30.6-eks-7f9249a", created="2026-10-20T12:12:00Z")
b.namespace("vault", {"environment": "staging"})
b.namespace("payments", {"environment": "staging"})
vl = {"app.kubernetes.io/name": "vault", "app.kubernetes.io/instance": "vault", "component": "server"}
vc = b.container("vault", "hashicorp/vault:1.17.6", [("http", 8200), ("https-internal", 8201)],
                 {"VAULT_ADDR": "https://127.0.0.1:8200", "VAULT_API_ADDR": "https://$(POD_IP):8200", "VAULT_CLUSTER_ADDR": "https://$(HOSTNAME).vault-internal:8201",
                  "AWS_ROLE_ARN": "arn:aws:iam::412345678901:role/stg-vault-irsa", "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/secrets/eks.amazonaws.com/serviceaccount/token", "AWS_REGION": "eu-west-1"},
                 {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
                 readiness={"exec": {"command": ["/bin/sh", "-ec", "vault status -tls-skip-verify"]}, "failureThreshold": 2, "initialDelaySeconds": 5, "periodSeconds": 5, "successThreshold": 1, "timeoutSeconds": 3},
                 command=["/bin/sh", "-ec"], args=["cp /vault/config/extraconfig-from-values.hcl /tmp/storageconfig.hcl;\n/usr/local/bin/docker-entrypoint.sh vault server -config=/tmp/storageconfig.hcl\n"])
b.statefulset("vault", "vault", vl, [vc], 3, ready=0, created="2025-04-02T10:00:00Z", svc="vault-internal", sa="vault",
              vct=[{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}])
vp = []
for k in range(3):
    st = rs_t[k] + dt.timedelta(seconds=14)
    vp.append(b.pod("vault-%d" % k, "vault", dict(vl, **{"statefulset.kubernetes.io/pod-name": "vault-%d" % k, "vault-active": "false", "vault-initialized": "true", "vault-sealed": "true", "vault-version": "1.17.6"}),
                    ("StatefulSet", "vault"), [vc], newn[k], iso(st), sa="vault", cstatus={"vault": {"ready": False, "started": True, "restarts": 0, "state": running(iso(st + dt.timedelta(seconds=4)))}}))
eps = [(p["status"]["podIP"], p["spec"]["nodeName"], pname(p), False) for p in vp]
b.service("vault", "vault", vl, [("https", 8200, 8200), ("https-internal", 8201, 8201)], endpoints=eps)
b.services = None
b.k8s["services.yaml"][-2]["spec"]["publishNotReadyAddresses"] = True
b.service("vault-active", "vault", dict(vl, **{"vault-active": "true"}), [("https", 8200, 8200)], endpoints=[])
b.configmap("vault-config", "vault", {"extraconfig-from-values.hcl": 'disable_mlock = true\nui = true\nlistener "tcp" {\n  address = "[::]:8200"\n  cluster_address = "[::]:8201"\n  tls_cert_file = "/vault/userconfig/vault-tls/tls.crt"\n  tls_key_file = "/vault/userconfig/vault-tls/tls.key"\n}\nstorage "raft" {\n  path = "/vault/data"\n  retry_join { leader_api_addr = "https://vault-0.vault-internal:8200" }\n  retry_join { leader_api_addr = "https://vault-1.vault-internal:8200" }\n  retry_join { leader_api_addr = "https://vault-2.vault-internal:8200" }\n}\nseal "awskms" {\n  region     = "eu-west-1"\n  kms_key_id = "alias/stg-vault-unseal"\n}\nservice_registration "kubernetes" {}\n'})
b.add("policy.yaml", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": b.meta("ServiceAccount", "vault", "vault", None, {"eks.amazonaws.com/role-arn": "arn:aws:iam::412345678901:role/stg-vault-irsa"}, "2025-04-02T10:00:00Z")})
b.configmap("infra-terraform-last-apply", "vault", {"summary": "workspace: stg-platform-iam\napplied: 2026-10-20T11:52:17Z by ci (pipeline #77812, MR !1934 'kms: consolidate key policies, least privilege')\nchanges:\n  ~ aws_kms_key_policy.vault_unseal: principals [stg-vault-irsa, stg-break-glass] -> [stg-kms-admins, stg-break-glass]\n  ~ aws_kms_key_policy.ebs_default: no-op\n  + aws_iam_role_policy.platform_readonly\n"},
            labels={"app.kubernetes.io/managed-by": "atlantis"})
# payments
pl = {"app": "payments-api"}
ann_new = {"vault.hashicorp.com/agent-inject": "true", "vault.hashicorp.com/role": "payments-api", "vault.hashicorp.com/agent-inject-secret-db": "database/creds/payments-api", "vault.hashicorp.com/agent-pre-populate-only": "false"}
agent_init = b.container("vault-agent-init", "hashicorp/vault:1.17.6", None, {"VAULT_ADDR": "https://vault.vault.svc:8200", "VAULT_LOG_LEVEL": "info", "VAULT_LOG_FORMAT": "standard"},
                         {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}}, command=["/bin/sh", "-ec"], args=["echo ${VAULT_CONFIG?} | base64 -d > /home/vault/config.json && vault agent -config=/home/vault/config.json"])
agent = dict(agent_init, name="vault-agent")
pc = b.container("payments-api", "registry.acme.io/payments/payments-api:4.18.2", 8080, {"DB_CREDS_FILE": "/vault/secrets/db", "SPRING_PROFILES_ACTIVE": "staging"},
                 {"requests": {"cpu": "500m", "memory": "768Mi"}, "limits": {"memory": "1Gi"}}, readiness=b.http_probe("/actuator/health/readiness", 8080))
pc_old = dict(pc, image="registry.acme.io/payments/payments-api:4.18.1")
h_new = b.deployment("payments-api", "payments", pl, [pc, agent], 3, created="2025-04-20T10:00:00Z", revision=31, ready=3, rs_created=iso(dep), updated=1, unavailable=1,
                     old_rs=("7b9f6c5d48", 30, [pc_old, agent], "2026-10-13T09:10:00Z"), sa="payments-api", init=[agent_init], pod_annotations=ann_new,
                     conditions=[{"type": "Available", "status": "True", "lastUpdateTime": "2026-10-13T09:12:00Z", "lastTransitionTime": "2026-10-13T09:12:00Z", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."},
                                 {"type": "Progressing", "status": "True", "lastUpdateTime": iso(dep), "lastTransitionTime": iso(dep), "reason": "ReplicaSetUpdated", "message": 'ReplicaSet "payments-api-%s" is progressing.' % b.hsh(10, "payments-api", 31)}])
rs = [o for o in b.k8s["workloads.yaml"] if o["kind"] == "ReplicaSet" and o["metadata"]["name"] == "payments-api-7b9f6c5d48"][0]
rs["spec"]["replicas"] = 3
rs["status"] = {"replicas": 3, "fullyLabeledReplicas": 3, "readyReplicas": 3, "availableReplicas": 3, "observedGeneration": 30}
rsn = [o for o in b.k8s["workloads.yaml"] if o["kind"] == "ReplicaSet" and o["metadata"]["name"] == "payments-api-" + h_new][0]
rsn["spec"]["replicas"] = 1
rsn["status"] = {"replicas": 1, "fullyLabeledReplicas": 1, "readyReplicas": 0, "availableReplicas": 0, "observedGeneration": 1}
oldp = []
for k in range(3):
    oldp.append(b.pod("payments-api-7b9f6c5d48-" + b.hsh(5, "po", k), "payments", dict(pl, **{"pod-template-hash": "7b9f6c5d48"}), ("ReplicaSet", "payments-api-7b9f6c5d48"), [pc_old, agent],
                      oldn[k] if False else newn[k], "2026-10-20T12:%02d:30Z" % (21 + 4 * k), init=[agent_init], annotations=ann_new, sa="payments-api",
                      init_status=[{"name": "vault-agent-init", "ready": True, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": "2026-10-20T12:%02d:33Z" % (21 + 4 * k), "finishedAt": "2026-10-20T12:%02d:35Z" % (21 + 4 * k)}}, "image": "hashicorp/vault:1.17.6", "imageID": "", "started": False}]))
newp = b.pod("payments-api-%s-%s" % (h_new, b.hsh(5, "pn")), "payments", dict(pl, **{"pod-template-hash": h_new}), ("ReplicaSet", "payments-api-" + h_new), [pc, agent], newn[1], iso(dep), phase="Pending",
             init=[agent_init], annotations=ann_new, sa="payments-api",
             cstatus={"payments-api": {"ready": False, "started": False, "state": {"waiting": {"reason": "PodInitializing"}}}, "vault-agent": {"ready": False, "started": False, "state": {"waiting": {"reason": "PodInitializing"}}}},
             init_status=[{"name": "vault-agent-init", "ready": False, "restartCount": 0, "state": running(iso(dep + dt.timedelta(seconds=3))), "image": "hashicorp/vault:1.17.6", "imageID": "", "started": True}])
newp["spec"]["nodeName"] = newn[1]
newp["status"].update({"hostIP": b.node_ip(newn[1]), "podIP": "10.20.63.140", "podIPs": [{"ip": "10.20.63.140"}], "startTime": iso(dep)})
b.service("payments-api", "payments", pl, [("http", 8080, "http")], endpoints=b.eps_for(oldp))
for k in range(3):
    b.event("Pod", "vault-%d" % k, "vault", "Unhealthy", "Readiness probe failed: Key                      Value\n---                      -----\nRecovery Seal Type       awskms\nInitialized              true\nSealed                   true\nTotal Recovery Shares    5\nThreshold                3\nUnseal Progress          0/3\nUnseal Nonce             n/a\nVersion                  1.17.6\nStorage Type             raft\nHA Enabled               true",
            iso(rs_t[k] + dt.timedelta(seconds=25)), "2026-10-20T12:49:50Z", int((T("2026-10-20T12:49:50Z") - rs_t[k]).total_seconds() / 5), "Warning", host=newn[k], fieldPath="spec.containers{vault}")
    b.event("Pod", "vault-%d" % k, "vault", "Killing", "Stopping container vault", iso(rs_t[k]), host=oldn[k], fieldPath="spec.containers{vault}")
    b.event("Pod", "vault-%d" % k, "vault", "Scheduled", "Successfully assigned vault/vault-%d to %s" % (k, newn[k]), iso(rs_t[k] + dt.timedelta(seconds=12)), component="default-scheduler")
    b.event("Node", oldn[k], None, "NodeNotSchedulable", "Node %s status is now: NodeNotSchedulable" % oldn[k], "2026-10-20T12:19:40Z", host=oldn[k])
b.event("Deployment", "payments-api", "payments", "ScalingReplicaSet", "Scaled up replica set payments-api-%s to 1" % h_new, iso(dep), component="deployment-controller", api="apps/v1")
b.event("PodDisruptionBudget", "vault", "vault", "NoPods", "No matching pods found", "2026-10-20T12:29:30Z", type_="Normal", component="controllermanager", api="policy/v1")

rng = b.rng


def vlog(t, k, lvl, msg):
    b.log(t, "vault", "vault-%d" % k, "%s [%s] %s" % (iso(t, True), lvl, msg) if lvl in ("INFO", "WARN") else "%s [%s] %s" % (iso(t, True), lvl, msg), lvl.lower(), container="vault", ns="vault")


def vbg(t):
    alive = [k for k in range(3) if t < rs_t[k]]
    if not alive:
        return
    k = rng.choice(alive)
    r = rng.random()
    if r < 0.5:
        vlog(t, k, "INFO", " expiration: revoked lease: lease_id=database/creds/%s/%s" % (rng.choice(["payments-api", "ledger-api", "risk-engine"]), rid(rng, 24, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")))
    elif r < 0.8:
        vlog(t, k, "INFO", " storage.raft: starting snapshot up to: index=%d" % rng.randint(9100000, 9200000)) if rng.random() < 0.1 else vlog(t, k, "INFO", " secrets.database.database_4c1e7f0a: rotated credentials for role payments-api")
    else:
        vlog(t, k, "WARN", " core: lease count exceeds warning lease count threshold: have=%d threshold=75000" % rng.randint(81000, 83000))


b.every(b.start, b.end, 30, vbg)
for k in range(3):
    t0 = rs_t[k]
    vlog(t0 + dt.timedelta(seconds=1), k, "INFO", " core: marked as sealed")
    if k == 2:
        vlog(t0 + dt.timedelta(seconds=1), k, "INFO", " core: stopping raft active node")
    vlog(t0 + dt.timedelta(seconds=2), k, "INFO", " core: vault is sealed")
    s = t0 + dt.timedelta(seconds=19)
    vlog(s, k, "INFO", "==> Vault server configuration:\n\nAdministrative Namespace: \n             Api Address: https://%s:8200\n                     Cgo: disabled\n         Cluster Address: https://vault-%d.vault-internal:8201\n              Listener 1: tcp (addr: \"[::]:8200\", cluster address: \"[::]:8201\", tls: \"enabled\")\n                 Storage: raft (HA available)\n                 Version: Vault v1.17.6, built 2024-09-24T19:48:40Z" % (vp[k]["status"]["podIP"], k))
    vlog(s + dt.timedelta(seconds=1), k, "INFO", " core: stored unseal keys are supported, attempting fetch")

    def fail(t, k=k):
        vlog(t, k, "WARN", " failed to unseal core: error=\"fetching stored unseal keys failed: failed to decrypt encrypted stored keys: error decrypting data encryption key: operation error KMS: Decrypt, https response error StatusCode: 400, RequestID: %s, api error AccessDeniedException: User: arn:aws:sts::412345678901:assumed-role/stg-vault-irsa/%d is not authorized to perform: kms:Decrypt on the resource associated with this ciphertext because the resource does not exist in this Region, no resource-based policies allow access, or a resource-based policy explicitly denies access\"" % (b.uid("rq", t.isoformat()), 1792400000000 + k))
    b.every(s + dt.timedelta(seconds=1), b.end, 5, fail, jitter=0.05)
    if k == 0:
        vlog(s + dt.timedelta(seconds=2), k, "INFO", " core: security barrier not initialized")
AI = pname(newp)


def agent_fail(t):
    b.log(t, "vault-agent-init", AI, "%s [ERROR] agent.auth.handler: error authenticating:\n  error=\n  | Error making API request.\n  | \n  | URL: PUT https://vault.vault.svc:8200/v1/auth/kubernetes/login\n  | Code: 503. Errors:\n  | \n  | * Vault is sealed\n   backoff=%.1fs" % (iso(t, True), rng.uniform(30, 300)), "error", container="vault-agent-init", ns="payments")


b.every(dep + dt.timedelta(seconds=5), b.end, 45, agent_fail)
b.log(dep + dt.timedelta(seconds=4), "vault-agent-init", AI, "%s [INFO]  agent.auth.handler: authenticating" % iso(dep + dt.timedelta(seconds=4), True), "info", container="vault-agent-init", ns="payments")
OP = [pname(p) for p in oldp]


def sidecar(t):
    if t < T("2026-10-20T12:30:00Z"):
        return
    b.log(t, "vault-agent", rng.choice(OP), "%s [ERROR] agent.auth.handler: error authenticating: error=\"Error making API request.\\n\\nURL: PUT https://vault.vault.svc:8200/v1/auth/kubernetes/login\\nCode: 503. Errors:\\n\\n* Vault is sealed\" backoff=%.1fs" % (iso(t, True), rng.uniform(60, 300)), "error", container="vault-agent", ns="payments")


b.every(b.start, b.end, 120, sidecar)


def pay(t):
    p = rng.choice(OP)
    b.log(t, "payments-api", p, "%s  INFO 1 --- [payments-api] [nio-8080-exec-%d] c.a.p.web.PaymentController : POST /v2/payments/%s/capture status=200 duration=%dms" % (iso(t, True), rng.randint(1, 20), b.uid("pay", t.isoformat())[:18], rng.randint(30, 200)), "INFO", container="payments-api", ns="payments")


b.every(b.start, b.end, 20, pay)

b.rng_series('vault_core_unsealed{namespace="vault"}', "Vault unsealed (per pod)", [({"pod": "vault-%d" % k}, (lambda k: lambda t, i: 1 if t < rs_t[k] else (None if t < rs_t[k] + dt.timedelta(seconds=40) else 0))(k)) for k in range(3)], fmt="%d")
b.rng_series('vault_core_active{namespace="vault"}', "Vault active node", [({"pod": "vault-%d" % k}, (lambda k: lambda t, i: (1 if (k == 2 and t < rs_t[2]) else 0) if t < rs_t[k] else (None if t < rs_t[k] + dt.timedelta(seconds=40) else 0))(k)) for k in range(3)], fmt="%d")
b.rng_series('sum(rate(vault_core_handle_request_count{namespace="vault"}[5m]))', "Vault handled requests/s", [({}, lambda t, i: b.noise(14) if t < rs_t[2] else 0)])
b.rng_series('kube_statefulset_status_replicas_ready{namespace="vault", statefulset="vault"}', "Vault ready replicas", [({"statefulset": "vault"}, lambda t, i: 3 - sum(1 for k in range(3) if t >= rs_t[k]))], fmt="%d")
b.rng_series('kube_deployment_status_replicas_available{namespace="payments", deployment="payments-api"}', "payments-api available", [({"deployment": "payments-api"}, lambda t, i: 3)], fmt="%d")
b.rng_series('kube_deployment_status_replicas_updated{namespace="payments", deployment="payments-api"}', "payments-api updated replicas", [({"deployment": "payments-api"}, lambda t, i: 3 if t < dep else 0)], fmt="%d")
b.rng_series('sum by (status) (rate(http_server_requests_seconds_count{namespace="payments", service="payments-api"}[5m]))', "payments-api requests by status",
             [({"status": "200"}, lambda t, i: b.noise(21)), ({"status": "500"}, lambda t, i: b.noise(0.02, 0.9))])
b.rng_series('sum by (pod) (kube_pod_container_status_restarts_total{namespace=~"vault|payments"})', "Restarts", [({"pod": p}, lambda t, i: 0) for p in ["vault-0", "vault-1", "vault-2"] + OP], fmt="%d")

notes = """
# apx-vault-autounseal-kms — Vault pods restarted by a node-group upgrade cannot auto-unseal (KMS access removed)

**Incident.** Vault 1.17 HA raft cluster with `seal "awskms"` (ns `vault`, staging). At 11:52 a Terraform apply (MR !1934,
"least privilege") rewrites the KMS key policy of `alias/stg-vault-unseal`, dropping the `stg-vault-irsa` role. Running Vault nodes
are unaffected (the key is only needed at unseal). The 12:19 node-group upgrade (1.29 -> 1.30) drains nodes and restarts vault-0,
vault-1 and finally the active vault-2 (12:29). Each restarted node tries to auto-unseal, gets
`AccessDeniedException ... not authorized to perform: kms:Decrypt`, and stays sealed (retrying every 5 s). From 12:29 the whole
cluster is sealed. The payments-api rollout at 12:35 creates a pod whose `vault-agent-init` init container cannot log in
(`Code: 503 * Vault is sealed`), so it stays `Init:0/1`; old pods keep serving with already-rendered secrets (their sidecars log the
same 503).

**Chain / evidence.** New payments-api pod Pending with init container running (k8s/pods.yaml) -> vault-agent-init logs
`Vault is sealed` -> vault pods Running but not Ready, label `vault-sealed: "true"`, readiness events `Sealed true`,
`vault_core_unsealed` 1 -> 0 per pod at 12:21/12:25/12:29, no active node -> vault logs `failed to unseal core ... kms:Decrypt
AccessDeniedException` -> Terraform change summary (configmap `infra-terraform-last-apply`) and seal config (`vault-config`),
ServiceAccount IRSA role `stg-vault-irsa`.

**Decoys.** The payments-api image bump (the question points at it); the node-group upgrade (trigger, not the mechanism); lease-count
WARN in Vault; PDB event; payments traffic healthy.

**must_mention:** `seal` (Vault sealed / auto-unseal failure).

**Provenance.** HashiCorp Vault auto-unseal with AWS KMS (awskms seal stanza; documented failure when the key is inaccessible);
Vault Agent Injector (vault-agent-init, annotations `vault.hashicorp.com/*`); awesome-prometheus-alerts "Vault sealed" rule
(vault_core_unsealed == 0). Helm objects follow hashicorp/vault-helm (StatefulSet vault, vault-internal/vault-active services,
readiness `vault status`). Generated by gen/c11_vault.py (seed 1111).
"""
b.write(["seal"], notes)
