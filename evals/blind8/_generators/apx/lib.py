"""Small generator library for opsmate-bundle/v1 incident bundles (apx- cases)."""
import datetime as dt
import hashlib
import json
import os
import random
import string
import uuid

import yaml

OUT = "/work/main/evals/blind8"


class _D(yaml.SafeDumper):
    pass


def _str_rep(dumper, data):
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_D.add_representer(str, _str_rep)


def ydump(obj):
    return yaml.dump(obj, Dumper=_D, sort_keys=False, default_flow_style=False, width=200)


def P(s):
    """parse 'YYYY-MM-DDTHH:MM:SSZ'"""
    return dt.datetime.strptime(s.replace("Z", ""), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)


def iso(t, ms=False):
    if ms:
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def ep(t):
    return int(t.timestamp())


class Bundle:
    def __init__(self, case, title, start, end, env, cluster, question, seed):
        self.case, self.title = case, title
        self.start, self.end = P(start), P(end)
        self.env, self.cluster, self.question = env, cluster, question
        self.rng = random.Random(seed)
        self.k8s = {}  # file -> list of objs
        self.logs = []
        self.metrics = []
        self.rv = 1000000 + self.rng.randint(0, 9000000)

    # ---------- ids ----------
    def uid(self, *parts):
        h = hashlib.sha1(("|".join([self.case] + [str(p) for p in parts])).encode()).hexdigest()
        return str(uuid.UUID(h[:32]))

    def hsh(self, n=10, *parts):
        alpha = "bcdfghjklmnpqrstvwxz2456789"
        r = random.Random(self.case + "|".join(map(str, parts)))
        return "".join(r.choice(alpha) for _ in range(n))

    def nextrv(self):
        self.rv += self.rng.randint(1, 5000)
        return str(self.rv)

    def meta(self, kind, name, ns=None, labels=None, annotations=None, created=None, owner=None, extra=None):
        m = {"name": name}
        if ns:
            m["namespace"] = ns
        m["uid"] = self.uid(kind, ns, name)
        m["resourceVersion"] = self.nextrv()
        m["creationTimestamp"] = created or "2026-06-01T10:00:00Z"
        if labels:
            m["labels"] = dict(labels)
        if annotations:
            m["annotations"] = dict(annotations)
        if owner:
            okind, oname = owner
            m["ownerReferences"] = [{"apiVersion": "apps/v1" if okind in ("ReplicaSet", "Deployment", "StatefulSet", "DaemonSet") else ("batch/v1" if okind in ("Job", "CronJob") else "v1"),
                                     "kind": okind, "name": oname, "uid": self.uid(okind, ns, oname), "controller": True, "blockOwnerDeletion": True}]
        if extra:
            m.update(extra)
        return m

    def add(self, file, obj):
        self.k8s.setdefault(file, []).append(obj)
        return obj

    # ---------- k8s builders ----------
    def container(self, name, image, port=None, env=None, resources=None, liveness=None, readiness=None, command=None, args=None, envFrom=None, volumeMounts=None, portname="http"):
        c = {"name": name, "image": image}
        if command:
            c["command"] = command
        if args:
            c["args"] = args
        if port:
            ports = port if isinstance(port, list) else [(portname, port)]
            c["ports"] = [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in ports]
        if envFrom:
            c["envFrom"] = envFrom
        if env:
            c["env"] = [({"name": k, "value": str(v)} if not isinstance(v, dict) else dict(name=k, **v)) for k, v in env.items()]
        c["resources"] = resources or {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "512Mi"}}
        if liveness:
            c["livenessProbe"] = liveness
        if readiness:
            c["readinessProbe"] = readiness
        if volumeMounts:
            c["volumeMounts"] = volumeMounts
        c["terminationMessagePath"] = "/dev/termination-log"
        c["terminationMessagePolicy"] = "File"
        c["imagePullPolicy"] = "IfNotPresent"
        return c

    @staticmethod
    def http_probe(path, port, period=10, timeout=1, failure=3, initial=None):
        p = {"httpGet": {"path": path, "port": port, "scheme": "HTTP"}, "periodSeconds": period, "timeoutSeconds": timeout,
             "failureThreshold": failure, "successThreshold": 1}
        if initial is not None:
            p["initialDelaySeconds"] = initial
        return p

    @staticmethod
    def tcp_probe(port, period=10, timeout=1, failure=3, initial=None):
        p = {"tcpSocket": {"port": port}, "periodSeconds": period, "timeoutSeconds": timeout, "failureThreshold": failure, "successThreshold": 1}
        if initial is not None:
            p["initialDelaySeconds"] = initial
        return p

    def pod(self, name, ns, labels, owner, containers, node, created, ip=None, phase="Running", cstatus=None, init=None,
            init_status=None, volumes=None, sa="default", annotations=None, conditions=None, reason=None, message=None):
        """cstatus: dict container-name -> overrides {ready, restarts, state, lastState, started}"""
        cstatus = cstatus or {}
        nodeip = self.node_ip(node) if node else None
        ip = ip or ("10.%d.%d.%d" % (self.rng.randint(100, 130), self.rng.randint(0, 255), self.rng.randint(2, 250)) if node else None)
        spec = {}
        if init:
            spec["initContainers"] = init
        spec["containers"] = containers
        spec.update({"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                     "serviceAccountName": sa, "securityContext": {}, "schedulerName": "default-scheduler"})
        if node:
            spec["nodeName"] = node
        if volumes:
            spec["volumes"] = volumes
        spec["tolerations"] = [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
        ct = P(created)
        sched = iso(ct + dt.timedelta(seconds=1))
        statuses = []
        allready = True
        for c in containers:
            o = cstatus.get(c["name"], {})
            ready = o.get("ready", phase == "Running")
            allready = allready and ready
            st = {"name": c["name"],
                  "state": o.get("state", {"running": {"startedAt": iso(ct + dt.timedelta(seconds=5))}} if phase == "Running" else {"waiting": {"reason": "ContainerCreating"}}),
                  "lastState": o.get("lastState", {}), "ready": ready, "restartCount": o.get("restarts", 0), "image": c["image"],
                  "imageID": c["image"].split(":")[0] + "@sha256:" + hashlib.sha256(c["image"].encode()).hexdigest(),
                  "started": o.get("started", ready)}
            if phase == "Running" or "state" in o:
                st["containerID"] = "containerd://" + hashlib.sha256((name + c["name"]).encode()).hexdigest()
            statuses.append(st)
        if conditions is None:
            r = "True" if (allready and phase == "Running") else "False"
            conditions = [
                {"type": "PodReadyToStartContainers", "status": "True" if node else "False", "lastProbeTime": None, "lastTransitionTime": iso(ct + dt.timedelta(seconds=3))},
                {"type": "Initialized", "status": "True" if not init_status or all(s.get("ready") for s in init_status) else "False", "lastProbeTime": None, "lastTransitionTime": iso(ct + dt.timedelta(seconds=3))},
                {"type": "Ready", "status": r, "lastProbeTime": None, "lastTransitionTime": iso(ct + dt.timedelta(seconds=20))},
                {"type": "ContainersReady", "status": r, "lastProbeTime": None, "lastTransitionTime": iso(ct + dt.timedelta(seconds=20))},
                {"type": "PodScheduled", "status": "True" if node else "False", "lastProbeTime": None, "lastTransitionTime": sched}]
            if r == "False":
                for cnd in conditions[2:4]:
                    cnd["reason"] = "ContainersNotReady"
                    cnd["message"] = "containers with unready status: [%s]" % " ".join(s["name"] for s in statuses if not s["ready"])
        status = {"phase": phase, "conditions": conditions}
        if reason:
            status["reason"] = reason
        if message:
            status["message"] = message
        if node:
            status.update({"hostIP": nodeip, "hostIPs": [{"ip": nodeip}], "podIP": ip, "podIPs": [{"ip": ip}], "startTime": sched})
        if init_status:
            status["initContainerStatuses"] = init_status
        status["containerStatuses"] = statuses
        status["qosClass"] = "Burstable"
        obj = {"apiVersion": "v1", "kind": "Pod",
               "metadata": self.meta("Pod", name, ns, labels, annotations, created, owner), "spec": spec, "status": status}
        self.add("pods.yaml", obj)
        return obj

    def node_ip(self, node):
        if node.startswith("ip-"):
            return ".".join(node.split(".")[0][3:].split("-"))
        h = int(hashlib.md5(node.encode()).hexdigest(), 16)
        return "10.0.%d.%d" % (h % 200 + 10, h // 200 % 240 + 5)

    def node(self, name, created="2026-05-01T08:00:00Z", labels=None, instance="m6i.xlarge", zone="eu-west-1a", conditions=None,
             unschedulable=False, taints=None, kubelet="v1.30.6-eks-7f9249a", runtime="containerd://1.7.22", os_image="Amazon Linux 2023.6.20241031",
             cpu="4", mem="16005408Ki", alloc_cpu="3920m", alloc_mem="15046432Ki", kernel="6.1.112-124.190.amzn2023.x86_64", images=None):
        base = {"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": instance, "topology.kubernetes.io/zone": zone,
                "topology.kubernetes.io/region": zone[:-1]}
        base.update(labels or {})
        hb = iso(self.end - dt.timedelta(seconds=self.rng.randint(5, 40)))
        conds = [
            {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available"},
            {"type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure", "message": "kubelet has no disk pressure"},
            {"type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID", "message": "kubelet has sufficient PID available"},
            {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}]
        over = conditions or {}
        for c in conds:
            if c["type"] in over:
                c.update(over[c["type"]])
            c["lastHeartbeatTime"] = hb
            c.setdefault("lastTransitionTime", created)
        spec = {"providerID": "aws:///%s/i-0%s" % (zone, hashlib.md5(name.encode()).hexdigest()[:16])}
        if taints:
            spec["taints"] = taints
        if unschedulable:
            spec["unschedulable"] = True
        ip = self.node_ip(name)
        st = {"addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
              "allocatable": {"cpu": alloc_cpu, "ephemeral-storage": "95551679124", "memory": alloc_mem, "pods": "58"},
              "capacity": {"cpu": cpu, "ephemeral-storage": "104845292Ki", "memory": mem, "pods": "58"},
              "conditions": conds, "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
              "nodeInfo": {"architecture": "amd64", "bootID": self.uid("boot", name), "containerRuntimeVersion": runtime,
                           "kernelVersion": kernel, "kubeProxyVersion": kubelet, "kubeletVersion": kubelet,
                           "machineID": hashlib.md5(name.encode()).hexdigest(), "operatingSystem": "linux", "osImage": os_image,
                           "systemUUID": self.uid("sys", name)}}
        obj = {"apiVersion": "v1", "kind": "Node", "metadata": self.meta("Node", name, None, base, {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"}, created),
               "spec": spec, "status": st}
        self.add("nodes.yaml", obj)
        return obj

    def deployment(self, name, ns, labels, containers, replicas, created="2026-06-01T10:00:00Z", revision=1, ready=None, rs_hash=None,
                   rs_created=None, old_rs=None, strategy=None, sa="default", init=None, volumes=None, pod_annotations=None, conditions=None,
                   updated=None, unavailable=None, generation=None):
        ready = replicas if ready is None else ready
        rs_hash = rs_hash or self.hsh(10, name, revision)
        sel = dict(labels)
        tmpl = {"metadata": {"labels": dict(labels)}, "spec": {"serviceAccountName": sa, "containers": containers}}
        if pod_annotations:
            tmpl["metadata"]["annotations"] = pod_annotations
        if init:
            tmpl["spec"]["initContainers"] = init
        if volumes:
            tmpl["spec"]["volumes"] = volumes
        gen = generation or revision
        st = {"observedGeneration": gen, "replicas": replicas if updated is None else max(replicas, updated), "updatedReplicas": replicas if updated is None else updated,
              "readyReplicas": ready, "availableReplicas": ready}
        if replicas - ready > 0 or unavailable:
            st["unavailableReplicas"] = unavailable if unavailable is not None else replicas - ready
        rt = rs_created or created
        st["conditions"] = conditions or [
            {"type": "Available", "status": "True" if ready >= max(1, replicas - replicas // 4) or replicas == 0 else "False",
             "lastUpdateTime": rt, "lastTransitionTime": rt,
             "reason": "MinimumReplicasAvailable" if ready >= max(1, replicas - replicas // 4) or replicas == 0 else "MinimumReplicasUnavailable",
             "message": "Deployment has minimum availability." if ready >= max(1, replicas - replicas // 4) or replicas == 0 else "Deployment does not have minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": rt, "lastTransitionTime": created, "reason": "NewReplicaSetAvailable",
             "message": 'ReplicaSet "%s-%s" has successfully progressed.' % (name, rs_hash)}]
        d = {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": self.meta("Deployment", name, ns, labels, {"deployment.kubernetes.io/revision": str(revision)}, created, extra={"generation": gen}),
             "spec": {"replicas": replicas, "selector": {"matchLabels": sel},
                      "strategy": strategy or {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                      "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600, "template": tmpl}, "status": st}
        self.add("workloads.yaml", d)
        rsl = dict(labels, **{"pod-template-hash": rs_hash})
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": self.meta("ReplicaSet", "%s-%s" % (name, rs_hash), ns, rsl,
                                    {"deployment.kubernetes.io/desired-replicas": str(replicas), "deployment.kubernetes.io/max-replicas": str(replicas + max(1, replicas // 4)),
                                     "deployment.kubernetes.io/revision": str(revision)}, rs_created or created, ("Deployment", name)),
              "spec": {"replicas": replicas, "selector": {"matchLabels": rsl}, "template": {"metadata": {"labels": rsl}, "spec": tmpl["spec"]}},
              "status": {"replicas": replicas, "fullyLabeledReplicas": replicas, "readyReplicas": ready, "availableReplicas": ready, "observedGeneration": 1}}
        self.add("workloads.yaml", rs)
        if old_rs:
            oh, orev, oc, ocreated = old_rs
            orsl = dict(labels, **{"pod-template-hash": oh})
            self.add("workloads.yaml", {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                        "metadata": self.meta("ReplicaSet", "%s-%s" % (name, oh), ns, orsl,
                                                              {"deployment.kubernetes.io/desired-replicas": str(replicas), "deployment.kubernetes.io/revision": str(orev)}, ocreated, ("Deployment", name)),
                                        "spec": {"replicas": 0, "selector": {"matchLabels": orsl}, "template": {"metadata": {"labels": orsl}, "spec": dict(tmpl["spec"], containers=oc)}},
                                        "status": {"replicas": 0, "observedGeneration": 2}})
        return rs_hash

    def statefulset(self, name, ns, labels, containers, replicas, ready=None, created="2026-06-01T10:00:00Z", svc=None, vct=None, sa="default", init=None,
                    volumes=None, revision=None):
        ready = replicas if ready is None else ready
        rev = revision or "%s-%s" % (name, self.hsh(10, name, "rev"))
        tmpl = {"metadata": {"labels": dict(labels)}, "spec": {"serviceAccountName": sa, "containers": containers}}
        if init:
            tmpl["spec"]["initContainers"] = init
        if volumes:
            tmpl["spec"]["volumes"] = volumes
        spec = {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "serviceName": svc or name + "-headless",
                "podManagementPolicy": "OrderedReady", "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "template": tmpl}
        if vct:
            spec["volumeClaimTemplates"] = vct
        s = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": self.meta("StatefulSet", name, ns, labels, None, created, extra={"generation": 1}),
             "spec": spec,
             "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": ready, "currentReplicas": replicas, "updatedReplicas": replicas,
                        "availableReplicas": ready, "currentRevision": rev, "updateRevision": rev, "collisionCount": 0}}
        self.add("workloads.yaml", s)
        return rev

    def service(self, name, ns, selector, ports, type_="ClusterIP", labels=None, headless=False, endpoints=None, created="2026-06-01T10:00:00Z"):
        """ports: list of (name, port, targetPort); endpoints: list of (ip, node, podname, ready)"""
        h = int(hashlib.md5((ns + name).encode()).hexdigest(), 16)
        cip = "None" if headless else "172.20.%d.%d" % (h % 250 + 1, h // 250 % 250 + 2)
        spec = {"type": type_, "selector": selector,
                "ports": [{"name": n, "port": p, "targetPort": t, "protocol": "TCP"} for n, p, t in ports],
                "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster",
                "clusterIP": cip, "clusterIPs": [cip]}
        self.add("services.yaml", {"apiVersion": "v1", "kind": "Service", "metadata": self.meta("Service", name, ns, labels, None, created), "spec": spec,
                                   "status": {"loadBalancer": {}}})
        if endpoints is not None:
            eps = []
            for ip, node, pod, ready in endpoints:
                eps.append({"addresses": [ip], "conditions": {"ready": ready, "serving": ready, "terminating": False}, "nodeName": node,
                            "targetRef": {"kind": "Pod", "name": pod, "namespace": ns, "uid": self.uid("Pod", ns, pod)}})
            self.add("services.yaml", {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
                                       "metadata": self.meta("EndpointSlice", "%s-%s" % (name, self.hsh(5, name)), ns,
                                                             {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io", "kubernetes.io/service-name": name},
                                                             None, created, ("Service", name)),
                                       "endpoints": eps,
                                       "ports": [{"name": n, "port": (t if isinstance(t, int) else p), "protocol": "TCP"} for n, p, t in ports]})

    def eps_for(self, pods):
        out = []
        for p in pods:
            st = p["status"]
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in st["conditions"])
            if st.get("podIP"):
                out.append((st["podIP"], p["spec"].get("nodeName"), p["metadata"]["name"], ready))
        return out

    def event(self, kind, name, ns, reason, message, first, last=None, count=1, type_="Normal", component="kubelet", host=None, fieldPath=None, api="v1"):
        last = last or first
        inv = {"apiVersion": api, "kind": kind, "name": name, "uid": self.uid(kind, ns, name)}
        if ns:
            inv["namespace"] = ns
        if fieldPath:
            inv["fieldPath"] = fieldPath
        src = {"component": component}
        if host:
            src["host"] = host
        ev = {"apiVersion": "v1", "kind": "Event",
              "metadata": self.meta("Event", "%s.%s" % (name, hashlib.md5((name + reason + first + message).encode()).hexdigest()[:16]), ns or "default", None, None, first),
              "involvedObject": inv, "reason": reason, "message": message, "type": type_, "count": count,
              "firstTimestamp": first, "lastTimestamp": last, "source": src, "reportingComponent": component, "reportingInstance": host or ""}
        self.add("events.yaml", ev)

    def configmap(self, name, ns, data, labels=None, created="2026-06-01T10:00:00Z", annotations=None, file="config.yaml"):
        self.add(file, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": self.meta("ConfigMap", name, ns, labels, annotations, created), "data": data})

    def namespace(self, name, labels=None, created="2025-09-01T10:00:00Z"):
        l = {"kubernetes.io/metadata.name": name}
        l.update(labels or {})
        self.add("policy.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": self.meta("Namespace", name, None, l, None, created),
                                 "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    def raw(self, file, obj):
        self.add(file, obj)

    # ---------- logs ----------
    def log(self, t, service, pod, message, level=None, container=None, ns=None, **extra):
        if isinstance(t, str):
            t = P(t)
        r = {"@timestamp": iso(t, ms=True), "message": message, "service": service, "environment": self.env,
             "namespace": ns or self.ns, "pod": pod, "container": container or service}
        if level:
            r["level"] = level
        r.update(extra)
        self.logs.append(r)

    def every(self, start, end, mean_s, fn, jitter=0.6):
        """call fn(t) at roughly every mean_s seconds between start and end (datetimes or strings)."""
        t = P(start) if isinstance(start, str) else start
        e = P(end) if isinstance(end, str) else end
        while True:
            t = t + dt.timedelta(seconds=mean_s * (1 + self.rng.uniform(-jitter, jitter)), microseconds=self.rng.randint(0, 999999))
            if t >= e:
                break
            fn(t)

    # ---------- metrics ----------
    def minutes(self, step=60):
        t = self.start
        out = []
        while t <= self.end:
            out.append(t)
            t += dt.timedelta(seconds=step)
        return out

    def rng_series(self, query, desc, series, step=60, fmt="%.4g"):
        """series: list of (labels, fn(t datetime, i) -> number or None)"""
        res = []
        for labels, fn in series:
            vals = []
            for i, t in enumerate(self.minutes(step)):
                v = fn(t, i)
                if v is None:
                    continue
                vals.append([ep(t), (fmt % v) if not isinstance(v, str) else v])
            res.append({"metric": labels, "values": vals})
        self.metrics.append({"query": query, "type": "range", "start": iso(self.start), "end": iso(self.end), "step": step,
                             "description": desc, "result": {"resultType": "matrix", "result": res}})

    def instant(self, query, desc, series, t=None):
        t = t or self.end
        res = [{"metric": l, "value": [ep(t), v if isinstance(v, str) else ("%.6g" % v)]} for l, v in series]
        self.metrics.append({"query": query, "type": "instant", "time": iso(t), "description": desc,
                             "result": {"resultType": "vector", "result": res}})

    def noise(self, base, rel=0.08):
        return base * (1 + self.rng.uniform(-rel, rel))

    # ---------- write ----------
    def write(self, must_mention, notes, status=("complete",), question=None):
        d = os.path.join(OUT, self.case)
        os.makedirs(os.path.join(d, "k8s"), exist_ok=True)
        for f in os.listdir(os.path.join(d, "k8s")):
            os.remove(os.path.join(d, "k8s", f))
        b = {"format": "opsmate-bundle/v1", "title": self.title, "captured_at": iso(self.end),
             "window": {"from": iso(self.start), "to": iso(self.end)}, "environment": self.env, "cluster": self.cluster,
             "question": self.question}
        open(os.path.join(d, "bundle.yaml"), "w").write(ydump(b))
        e = {"question": question or self.question, "env": self.env, "must_mention": list(must_mention), "status": list(status),
             "runbooks": [], "must_not_query_env": ["prod"], "max_steps": 12}
        open(os.path.join(d, "expected.yaml"), "w").write(ydump(e))
        for f, objs in self.k8s.items():
            open(os.path.join(d, "k8s", f), "w").write("".join("---\n" + ydump(o) for o in objs))
        self.logs.sort(key=lambda r: r["@timestamp"])
        self.logs = [r for r in self.logs if self.start <= P(r["@timestamp"][:19] + "Z") < self.end]
        with open(os.path.join(d, "logs.ndjson"), "w") as fh:
            for r in self.logs:
                fh.write(json.dumps(r) + "\n")
        open(os.path.join(d, "metrics.yaml"), "w").write(ydump(self.metrics))
        open(os.path.join(d, "NOTES.md"), "w").write(notes.strip() + "\n")
        return d


def rid(rng, n=32, alpha="0123456789abcdef"):
    return "".join(rng.choice(alpha) for _ in range(n))


def app(b, name, ns, image, replicas, port, nodes, labels=None, kind="Deployment", created="2026-06-01T10:00:00Z",
        pod_created=None, env=None, resources=None, liveness=None, readiness=None, cstatus=None, svc_ports=None, revision=1,
        old_rs=None, rs_created=None, sa="default", command=None, args=None, extra_containers=None, init=None, init_status=None,
        vct=None, volumes=None, pod_phase=None, ready=None, pod_annotations=None, no_service=False, headless=False,
        container_name=None, pod_names=None, dep_conditions=None, envFrom=None):
    """Create workload + pods + service + endpointslice. cstatus: list per pod index of container overrides dict."""
    labels = labels or {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": name}
    cname = container_name or name
    cont = b.container(cname, image, port, env, resources, liveness, readiness, command, args, envFrom=envFrom)
    conts = [cont] + (extra_containers or [])
    pod_created = pod_created or created
    pods = []
    if kind == "Deployment":
        h = b.deployment(name, ns, labels, conts, replicas, created, revision, ready=ready, rs_created=rs_created, old_rs=old_rs, sa=sa,
                         init=init, volumes=volumes, pod_annotations=pod_annotations, conditions=dep_conditions)
        names = pod_names or ["%s-%s-%s" % (name, h, b.hsh(5, name, i)) for i in range(replicas)]
        owner = ("ReplicaSet", "%s-%s" % (name, h))
        plabels = dict(labels, **{"pod-template-hash": h})
    else:
        rev = b.statefulset(name, ns, labels, conts, replicas, ready=ready, created=created, vct=vct, sa=sa, init=init, volumes=volumes)
        names = pod_names or ["%s-%d" % (name, i) for i in range(replicas)]
        owner = ("StatefulSet", name)
        plabels = dict(labels, **{"controller-revision-hash": rev, "statefulset.kubernetes.io/pod-name": None})
    for i, pn in enumerate(names):
        pl = dict(plabels)
        if "statefulset.kubernetes.io/pod-name" in pl:
            pl["statefulset.kubernetes.io/pod-name"] = pn
        cs = (cstatus[i] if cstatus and i < len(cstatus) else None) or {}
        pc = pod_created[i] if isinstance(pod_created, list) else pod_created
        ph = pod_phase[i] if isinstance(pod_phase, list) else (pod_phase or "Running")
        ist = init_status[i] if init_status and i < len(init_status) else None
        pods.append(b.pod(pn, ns, pl, owner, conts, nodes[i % len(nodes)] if ph != "Pending" or nodes else None, pc, phase=ph,
                          cstatus=cs, init=init, init_status=ist, volumes=volumes, sa=sa, annotations=pod_annotations))
    if not no_service and port:
        pt = svc_ports or [("http", port if isinstance(port, int) else port[0][1], "http" if isinstance(port, int) else port[0][0])]
        b.service(name + ("-headless" if headless else ""), ns, labels, pt, headless=headless, endpoints=b.eps_for(pods))
    return pods


def running(t):
    return {"running": {"startedAt": t}}


def crashloop(restarts, last_reason, exit_code, started, finished, msg=None):
    ls = {"terminated": {"exitCode": exit_code, "reason": last_reason, "startedAt": started, "finishedAt": finished,
                         "containerID": "containerd://" + hashlib.sha256((started + finished).encode()).hexdigest()}}
    if msg:
        ls["terminated"]["message"] = msg
    return {"ready": False, "started": False, "restarts": restarts,
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s restarting failed container"}},
            "lastState": ls}


def restarted(restarts, last_reason, exit_code, started, finished, now_started, ready=True):
    return {"ready": ready, "started": True, "restarts": restarts, "state": {"running": {"startedAt": now_started}},
            "lastState": {"terminated": {"exitCode": exit_code, "reason": last_reason, "startedAt": started, "finishedAt": finished,
                                         "containerID": "containerd://" + hashlib.sha256((started + finished).encode()).hexdigest()}}}


def mknodes(b, names, **kw):
    zones = kw.pop("zones", None)
    for i, n in enumerate(names):
        z = zones[i % len(zones)] if zones else "eu-west-1" + "abc"[i % 3]
        b.node(n, zone=z, **kw)
    return names


def pname(p):
    return p["metadata"]["name"]


def restarts_series(times, t):
    return sum(1 for s in times if P(s) <= t)
