import datetime as dt, hashlib, json, os, random, uuid, yaml, math
from collections import defaultdict

OUT = '/work/main/evals/blind8'


class _D(yaml.SafeDumper):
    pass


def _str(d, data):
    if '\n' in data:
        return d.represent_scalar('tag:yaml.org,2002:str', data, style='|')
    return d.represent_scalar('tag:yaml.org,2002:str', data)


_D.add_representer(str, _str)


def uid(*parts):
    return str(uuid.UUID(hashlib.md5('|'.join(map(str, parts)).encode()).hexdigest()))


def h(n, *parts):
    alpha = 'bcdfghjklmnpqrstvwxz2456789'
    x = int(hashlib.sha1('|'.join(map(str, parts)).encode()).hexdigest(), 16)
    s = ''
    for _ in range(n):
        s += alpha[x % len(alpha)]
        x //= len(alpha)
    return s


def iso(t, ms=False):
    if ms:
        return t.strftime('%Y-%m-%dT%H:%M:%S.') + '%03dZ' % (t.microsecond // 1000)
    return t.strftime('%Y-%m-%dT%H:%M:%SZ')


class B:
    def __init__(self, case, title, start, minutes, env, cluster, ns, question, mm, status=('complete',), seed=1,
                 step=60):
        self.case, self.title, self.env, self.cluster, self.ns = case, title, env, cluster, ns
        self.t0 = dt.datetime.strptime(start, '%Y-%m-%dT%H:%M').replace(tzinfo=dt.timezone.utc)
        self.minutes = minutes
        self.t1 = self.t0 + dt.timedelta(minutes=minutes)
        self.question, self.mm, self.status = question, mm, list(status)
        self.rnd = random.Random(seed)
        self.objs = defaultdict(list)
        self.logs = []
        self.metrics = []
        self.step = step
        self.rv = 40000000 + seed * 1000
        self.notes = ''

    # ---- time
    def T(self, m, s=0):
        return self.t0 + dt.timedelta(minutes=m, seconds=s)

    def ago(self, days=0, hours=0, minutes=0):
        return self.t0 - dt.timedelta(days=days, hours=hours, minutes=minutes)

    def _rv(self):
        self.rv += self.rnd.randint(3, 900)
        return str(self.rv)

    def meta(self, name, ns=None, labels=None, ann=None, created=None, owner=None, kind=''):
        m = {'name': name}
        if ns is not False:
            m['namespace'] = ns or self.ns
        m['uid'] = uid(self.case, kind, name)
        m['resourceVersion'] = self._rv()
        m['creationTimestamp'] = iso(created or self.ago(days=20))
        if labels:
            m['labels'] = dict(labels)
        if ann:
            m['annotations'] = dict(ann)
        if owner:
            m['ownerReferences'] = [{'apiVersion': owner[0], 'kind': owner[1], 'name': owner[2],
                                     'uid': uid(self.case, owner[1], owner[2]), 'controller': True,
                                     'blockOwnerDeletion': True}]
        return m

    def add(self, file, obj):
        self.objs[file].append(obj)
        return obj

    # ---- nodes
    def nodes(self, names, zone_prefix='eu-west-1', kubelet='v1.30.6-eks-7f9249a', runtime='containerd://1.7.23',
              os_image='Amazon Linux 2023.6.20241121', itype='m6i.xlarge', cpu='4', mem='15896932Ki', extra=None,
              ng='apps'):
        self.node_names = list(names)
        for i, n in enumerate(names):
            cond = [
                {'type': 'MemoryPressure', 'status': 'False', 'reason': 'KubeletHasSufficientMemory',
                 'message': 'kubelet has sufficient memory available'},
                {'type': 'DiskPressure', 'status': 'False', 'reason': 'KubeletHasNoDiskPressure',
                 'message': 'kubelet has no disk pressure'},
                {'type': 'PIDPressure', 'status': 'False', 'reason': 'KubeletHasSufficientPID',
                 'message': 'kubelet has sufficient PID available'},
                {'type': 'Ready', 'status': 'True', 'reason': 'KubeletReady',
                 'message': 'kubelet is posting ready status'},
            ]
            for c in cond:
                c['lastHeartbeatTime'] = iso(self.T(self.minutes - 1, 20 + i))
                c['lastTransitionTime'] = iso(self.ago(days=6, hours=i))
            node = {'apiVersion': 'v1', 'kind': 'Node',
                    'metadata': self.meta(n, ns=False, kind='Node', created=self.ago(days=6, hours=i), labels={
                        'kubernetes.io/hostname': n, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
                        'node.kubernetes.io/instance-type': itype,
                        'topology.kubernetes.io/zone': zone_prefix + 'abc'[i % 3],
                        'eks.amazonaws.com/nodegroup': ng}),
                    'spec': {'providerID': 'aws:///%s%s/i-0%s' % (zone_prefix, 'abc'[i % 3], h(16, n).replace('z', 'a')[:16])},
                    'status': {'capacity': {'cpu': cpu, 'memory': mem, 'pods': '58', 'ephemeral-storage': '83873772Ki'},
                               'allocatable': {'cpu': str(int(cpu) * 1000 - 70) + 'm', 'memory': str(int(mem[:-2]) - 1200000) + 'Ki',
                                               'pods': '58', 'ephemeral-storage': '76224326324'},
                               'conditions': cond,
                               'addresses': [{'type': 'InternalIP', 'address': '10.20.%d.%d' % (32 + 16 * (i % 3), 40 + 11 * i)},
                                             {'type': 'Hostname', 'address': n}],
                               'nodeInfo': {'kubeletVersion': kubelet, 'kubeProxyVersion': kubelet,
                                            'containerRuntimeVersion': runtime, 'osImage': os_image,
                                            'kernelVersion': '6.1.115-126.197.amzn2023.x86_64',
                                            'operatingSystem': 'linux', 'architecture': 'amd64'}}}
            if extra and n in extra:
                extra[n](node)
            self.add('nodes', node)

    # ---- workloads
    def deploy(self, name, image, replicas=1, port=8080, labels=None, env=None, res=None, probe=None, svc_port=80,
               svc=True, created=None, cname=None, pods_override=None, extra_containers=None, strategy=None,
               rs_hash=None, nodes=None, svc_name=None, target_port=None, command=None, args=None, ann=None,
               volumes=None, mounts=None, kind='Deployment', ns=None, pod_created=None, status_override=None,
               gen=1, spec_replicas=None, old_rs=None, rs_created=None):
        ns = ns or self.ns
        labels = labels or {'app': name}
        created = created or self.ago(days=30)
        rs_hash = rs_hash or h(10, self.case, name, 'rs')
        rsname = name + '-' + rs_hash
        c = {'name': cname or name, 'image': image, 'imagePullPolicy': 'IfNotPresent'}
        if command:
            c['command'] = command
        if args:
            c['args'] = args
        if port:
            c['ports'] = [{'containerPort': port, 'name': 'http', 'protocol': 'TCP'}]
        if env:
            c['env'] = [{'name': k, 'value': str(v)} if not isinstance(v, dict) else dict(name=k, **v) for k, v in env.items()]
        c['resources'] = res or {'requests': {'cpu': '100m', 'memory': '128Mi'}, 'limits': {'memory': '256Mi'}}
        if probe is not False and port:
            p = probe or {'httpGet': {'path': '/health', 'port': port, 'scheme': 'HTTP'}}
            c['readinessProbe'] = dict(p, periodSeconds=10, timeoutSeconds=1, failureThreshold=3, successThreshold=1)
            c['livenessProbe'] = dict(p, periodSeconds=10, timeoutSeconds=1, failureThreshold=3, successThreshold=1,
                                      initialDelaySeconds=15)
        if mounts:
            c['volumeMounts'] = mounts
        c['terminationMessagePath'] = '/dev/termination-log'
        c['terminationMessagePolicy'] = 'File'
        containers = [c] + (extra_containers or [])
        podspec = {'containers': containers, 'restartPolicy': 'Always', 'terminationGracePeriodSeconds': 30,
                   'dnsPolicy': 'ClusterFirst', 'serviceAccountName': name, 'securityContext': {}}
        if volumes:
            podspec['volumes'] = volumes
        spec_replicas = replicas if spec_replicas is None else spec_replicas
        d = {'apiVersion': 'apps/v1', 'kind': kind,
             'metadata': self.meta(name, ns, labels=dict(labels, **{'app.kubernetes.io/managed-by': 'Helm'}),
                                   ann=dict({'deployment.kubernetes.io/revision': str(gen)}, **(ann or {})),
                                   created=created, kind=kind),
             'spec': {'replicas': spec_replicas, 'selector': {'matchLabels': dict(labels)},
                      'template': {'metadata': {'labels': dict(labels)}, 'spec': podspec}}}
        d['metadata']['generation'] = gen
        if kind == 'Deployment':
            d['spec']['strategy'] = strategy or {'type': 'RollingUpdate',
                                                 'rollingUpdate': {'maxSurge': '25%', 'maxUnavailable': '25%'}}
            d['spec']['revisionHistoryLimit'] = 10
        else:
            d['spec']['serviceName'] = name
        pods = []
        for i in range(replicas):
            pname = (rsname + '-' + h(5, self.case, name, i)) if kind == 'Deployment' else '%s-%d' % (name, i)
            node = (nodes or self.node_names)[(i + len(name)) % len(nodes or self.node_names)]
            ov = (pods_override or {}).get(i, {})
            pods.append(self.pod(pname, ns, dict(labels, **({'pod-template-hash': rs_hash} if kind == 'Deployment' else {})),
                                 podspec, node, owner=('apps/v1', 'ReplicaSet' if kind == 'Deployment' else kind,
                                                       rsname if kind == 'Deployment' else name),
                                 created=ov.get('created', pod_created or self.ago(days=2, hours=i)), **{k: v for k, v in ov.items() if k != 'created'}))
        ready = sum(1 for p in pods if all(cs['ready'] for cs in p['status']['containerStatuses']))
        st = {'observedGeneration': gen, 'replicas': replicas, 'readyReplicas': ready, 'availableReplicas': ready,
              'updatedReplicas': replicas}
        if kind == 'Deployment':
            conds = [{'type': 'Available', 'status': 'True' if ready >= max(1, replicas - 1) or spec_replicas == 0 else 'False',
                      'reason': 'MinimumReplicasAvailable' if ready >= max(1, replicas - 1) or spec_replicas == 0 else 'MinimumReplicasUnavailable',
                      'message': 'Deployment has minimum availability.' if ready >= max(1, replicas - 1) or spec_replicas == 0 else 'Deployment does not have minimum availability.',
                      'lastUpdateTime': iso(created), 'lastTransitionTime': iso(created)},
                     {'type': 'Progressing', 'status': 'True', 'reason': 'NewReplicaSetAvailable',
                      'message': 'ReplicaSet "%s" has successfully progressed.' % rsname,
                      'lastUpdateTime': iso(created), 'lastTransitionTime': iso(created)}]
            st['conditions'] = conds
        if ready == 0:
            st.pop('readyReplicas'); st.pop('availableReplicas')
            if replicas:
                st['unavailableReplicas'] = replicas
        if replicas == 0:
            st = {'observedGeneration': gen}
        if status_override:
            st.update(status_override)
        d['status'] = st
        self.add('workloads', d)
        if kind == 'Deployment':
            rs = {'apiVersion': 'apps/v1', 'kind': 'ReplicaSet',
                  'metadata': self.meta(rsname, ns, labels=dict(labels, **{'pod-template-hash': rs_hash}),
                                        ann={'deployment.kubernetes.io/revision': str(gen),
                                             'deployment.kubernetes.io/desired-replicas': str(spec_replicas)},
                                        created=rs_created or created, owner=('apps/v1', 'Deployment', name), kind='ReplicaSet'),
                  'spec': {'replicas': spec_replicas, 'selector': {'matchLabels': dict(labels, **{'pod-template-hash': rs_hash})},
                           'template': {'metadata': {'labels': dict(labels, **{'pod-template-hash': rs_hash})}, 'spec': podspec}},
                  'status': {'replicas': replicas, 'fullyLabeledReplicas': replicas, 'readyReplicas': ready,
                             'availableReplicas': ready, 'observedGeneration': 1}}
            if replicas == 0:
                rs['status'] = {'replicas': 0, 'observedGeneration': 2}
            self.add('workloads', rs)
        if svc:
            self.service(svc_name or name, labels, svc_port, target_port or port, ns=ns)
        return [p['metadata']['name'] for p in pods]

    def service(self, name, selector, port, target, ns=None, ptype='ClusterIP', pname='http'):
        ip = '172.20.%d.%d' % (self.rnd.randint(1, 250), self.rnd.randint(2, 250))
        s = {'apiVersion': 'v1', 'kind': 'Service',
             'metadata': self.meta(name, ns, labels={'app': name}, kind='Service', created=self.ago(days=30)),
             'spec': {'type': ptype, 'clusterIP': ip, 'clusterIPs': [ip], 'selector': dict(selector),
                      'ports': [{'name': pname, 'port': port, 'targetPort': target, 'protocol': 'TCP'}],
                      'sessionAffinity': 'None', 'ipFamilies': ['IPv4'], 'ipFamilyPolicy': 'SingleStack'},
             'status': {'loadBalancer': {}}}
        self.add('services', s)
        return s

    def pod(self, name, ns, labels, podspec, node, owner, created, phase='Running', ready=True, restarts=0,
            state=None, last_state=None, started=None, cstatus=None, conditions=None, ann=None, reason=None,
            message=None, image_id=None):
        ip = '10.20.%d.%d' % (self.rnd.randint(32, 80), self.rnd.randint(2, 250))
        started = started or created + dt.timedelta(seconds=9)
        css = []
        for c in podspec['containers']:
            cs = {'name': c['name'], 'image': c['image'],
                  'imageID': image_id or ('docker.io/' + c['image'].split(':')[0] + '@sha256:' + hashlib.sha256(c['image'].encode()).hexdigest()),
                  'containerID': 'containerd://' + hashlib.sha256((name + c['name']).encode()).hexdigest(),
                  'ready': ready, 'started': ready, 'restartCount': restarts,
                  'state': state or {'running': {'startedAt': iso(started)}}}
            if last_state:
                cs['lastState'] = last_state
            else:
                cs['lastState'] = {}
            if cstatus and c['name'] in cstatus:
                cs.update(cstatus[c['name']])
            css.append(cs)
        allready = all(cs['ready'] for cs in css)
        conds = conditions or [
            {'type': 'PodReadyToStartContainers', 'status': 'True', 'lastTransitionTime': iso(created + dt.timedelta(seconds=3))},
            {'type': 'Initialized', 'status': 'True', 'lastTransitionTime': iso(created + dt.timedelta(seconds=2))},
            {'type': 'Ready', 'status': 'True' if allready else 'False', 'lastTransitionTime': iso(started + dt.timedelta(seconds=6))},
            {'type': 'ContainersReady', 'status': 'True' if allready else 'False', 'lastTransitionTime': iso(started + dt.timedelta(seconds=6))},
            {'type': 'PodScheduled', 'status': 'True', 'lastTransitionTime': iso(created)}]
        if not allready:
            for cnd in conds:
                if cnd['type'] in ('Ready', 'ContainersReady') and cnd['status'] == 'False':
                    cnd['reason'] = 'ContainersNotReady'
                    cnd['message'] = 'containers with unready status: [%s]' % ' '.join(cs['name'] for cs in css if not cs['ready'])
        spec = dict(podspec, nodeName=node)
        p = {'apiVersion': 'v1', 'kind': 'Pod',
             'metadata': self.meta(name, ns, labels=labels, created=created, owner=owner, kind='Pod', ann=ann),
             'spec': spec,
             'status': {'phase': phase, 'conditions': conds, 'hostIP': self._node_ip(node), 'podIP': ip,
                        'podIPs': [{'ip': ip}], 'startTime': iso(created), 'containerStatuses': css,
                        'qosClass': 'Burstable'}}
        if reason:
            p['status']['reason'] = reason
        if message:
            p['status']['message'] = message
        self.add('pods', p)
        return p

    def _node_ip(self, node):
        try:
            i = self.node_names.index(node)
        except Exception:
            i = 0
        return '10.20.%d.%d' % (32 + 16 * (i % 3), 40 + 11 * i)

    def event(self, kind, name, reason, message, first, last=None, count=1, typ='Normal', component='kubelet',
              host=None, field=None, ns=None, api='v1'):
        ns = ns or self.ns
        ev = {'apiVersion': 'v1', 'kind': 'Event',
              'metadata': self.meta('%s.%s' % (name, hashlib.md5((name + reason + iso(first)).encode()).hexdigest()[:16]), ns,
                                    created=first, kind='Event'),
              'involvedObject': {'apiVersion': api, 'kind': kind, 'name': name, 'namespace': ns,
                                 'uid': uid(self.case, kind, name)},
              'reason': reason, 'message': message, 'type': typ, 'count': count,
              'firstTimestamp': iso(first), 'lastTimestamp': iso(last or first),
              'source': {'component': component}, 'reportingComponent': component}
        if field:
            ev['involvedObject']['fieldPath'] = field
        if host:
            ev['source']['host'] = host
            ev['reportingInstance'] = host
        self.add('events', ev)
        return ev

    def obj(self, file, apiVersion, kind, name, spec=None, status=None, ns=None, labels=None, ann=None, created=None,
            data=None, extra=None):
        o = {'apiVersion': apiVersion, 'kind': kind,
             'metadata': self.meta(name, ns if ns is not None else None, labels=labels, ann=ann, created=created, kind=kind)}
        if ns is False:
            o['metadata'].pop('namespace', None)
        if spec is not None:
            o['spec'] = spec
        if data is not None:
            o['data'] = data
        if status is not None:
            o['status'] = status
        if extra:
            o.update(extra)
        self.add(file, o)
        return o

    def namespace(self, name, labels=None):
        self.obj('config', 'v1', 'Namespace', name, ns=False, spec={'finalizers': ['kubernetes']},
                 status={'phase': 'Active'}, labels=dict({'kubernetes.io/metadata.name': name}, **(labels or {})),
                 created=self.ago(days=200))

    # ---- logs
    def log(self, t, service, pod, message, level=None, container=None, ns=None, **kw):
        r = {'@timestamp': iso(t, ms=True), 'message': message, 'service': service, 'environment': self.env,
             'namespace': ns or self.ns, 'pod': pod, 'container': container or service}
        if level is not None:
            r['level'] = level
        r.update(kw)
        self.logs.append(r)

    def stream(self, service, pods, per_min, fn, m0=0, m1=None, container=None, ns=None, jitter=0.25):
        """fn(t, minute_float, rnd, pod) -> None | (level, msg) | [(level,msg),...]"""
        m1 = self.minutes if m1 is None else m1
        rnd = self.rnd
        for m in range(int(m0), int(m1)):
            rate = per_min(m) if callable(per_min) else per_min
            n = max(0, int(round(rate * (1 + rnd.uniform(-jitter, jitter)))))
            for _ in range(n):
                sec = rnd.uniform(0, 60)
                t = self.T(m, sec)
                pod = rnd.choice(pods) if isinstance(pods, list) else pods
                if callable(pod):
                    pod = pod(m)
                if pod is None:
                    continue
                r = fn(t, m + sec / 60.0, rnd, pod)
                if r is None:
                    continue
                if isinstance(r, tuple):
                    r = [r]
                for k, item in enumerate(r):
                    lvl, msg = item[0], item[1]
                    extra = item[2] if len(item) > 2 else {}
                    extra = dict(extra)
                    c = extra.pop('container', container)
                    self.log(t + dt.timedelta(milliseconds=k * 3), service, pod, msg, lvl, container=c, ns=ns, **extra)

    # ---- metrics
    def ts_list(self):
        n = self.minutes * 60 // self.step
        return [self.t0 + dt.timedelta(seconds=i * self.step) for i in range(n + 1)]

    def rng(self, query, desc, series):
        """series: list of (labels, fn(m_float, rnd) -> value or None)"""
        res = []
        for labels, fn in series:
            vals = []
            for t in self.ts_list():
                m = (t - self.t0).total_seconds() / 60.0
                v = fn(m, self.rnd)
                if v is None:
                    continue
                vals.append([int(t.timestamp()), fmt(v)])
            res.append({'metric': dict(labels), 'values': vals})
        self.metrics.append({'query': query, 'type': 'range', 'start': iso(self.t0), 'end': iso(self.t1),
                             'step': self.step, 'description': desc,
                             'result': {'resultType': 'matrix', 'result': res}})

    def inst(self, query, desc, series, at=None):
        at = at or self.t1
        res = [{'metric': dict(l), 'value': [int(at.timestamp()), fmt(v)]} for l, v in series]
        self.metrics.append({'query': query, 'type': 'instant', 'time': iso(at), 'description': desc,
                             'result': {'resultType': 'vector', 'result': res}})

    # ---- write
    def write(self):
        d = os.path.join(OUT, self.case)
        os.makedirs(os.path.join(d, 'k8s'), exist_ok=True)
        for f in os.listdir(os.path.join(d, 'k8s')):
            os.remove(os.path.join(d, 'k8s', f))
        b = {'format': 'opsmate-bundle/v1', 'title': self.title, 'captured_at': iso(self.t1),
             'window': {'from': iso(self.t0), 'to': iso(self.t1)}, 'environment': self.env,
             'cluster': self.cluster, 'question': self.question}
        dump(os.path.join(d, 'bundle.yaml'), b)
        e = {'question': self.question, 'env': self.env, 'must_mention': self.mm, 'status': self.status,
             'runbooks': [], 'must_not_query_env': ['prod'], 'max_steps': 12}
        dump(os.path.join(d, 'expected.yaml'), e)
        for f, objs in self.objs.items():
            with open(os.path.join(d, 'k8s', f + '.yaml'), 'w') as fh:
                yaml.dump_all(objs, fh, Dumper=_D, sort_keys=False, explicit_start=True, default_flow_style=False,
                              width=200)
        self.logs.sort(key=lambda r: r['@timestamp'])
        self.logs = [r for r in self.logs if iso(self.t0, ms=True) <= r['@timestamp'] < iso(self.t1, ms=True)]
        with open(os.path.join(d, 'logs.ndjson'), 'w') as fh:
            for r in self.logs:
                fh.write(json.dumps(r) + '\n')
        dump(os.path.join(d, 'metrics.yaml'), self.metrics)
        with open(os.path.join(d, 'NOTES.md'), 'w') as fh:
            fh.write(self.notes.strip() + '\n')
        size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(d) for f in fs)
        print(self.case, 'logs', len(self.logs), 'metrics', len(self.metrics), 'size', size)


def fmt(v):
    if isinstance(v, str):
        return v
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return ('%.4g' % v) if abs(v) < 1e6 else str(int(v))


def dump(path, obj):
    with open(path, 'w') as fh:
        yaml.dump(obj, fh, Dumper=_D, sort_keys=False, default_flow_style=False, width=200, allow_unicode=True)


# ---- helpers for series
def noisy(base, rel=0.08):
    return lambda m, r: max(0.0, base * (1 + r.uniform(-rel, rel)))


def step_fn(before, after, onset, rel=0.08, end=None, recover=None):
    def f(m, r):
        if m < onset or (end is not None and m >= end):
            v = before if recover is None or m < onset else recover
        else:
            v = after
        if callable(v):
            v = v(m)
        return max(0.0, v * (1 + r.uniform(-rel, rel)))
    return f


def sometimes(fn, cond):
    return lambda m, r: fn(m, r) if cond(m) else None


def rid(rnd, n=32):
    return '%0*x' % (n, rnd.getrandbits(n * 4))


def ip(rnd, a=20):
    return '10.%d.%d.%d' % (a, rnd.randint(32, 80), rnd.randint(2, 250))


def res_metrics(b, ns, cpu, mem, restarts=None, label='namespace'):
    """cpu/mem: dict pod -> fn(m, r); restarts: dict pod -> fn or None (then constant 0)"""
    b.rng('sum by (pod) (rate(container_cpu_usage_seconds_total{namespace="%s", container!=""}[5m]))' % ns,
          'CPU usage (cores) by pod', [({'pod': p}, f) for p, f in cpu.items()])
    b.rng('sum by (pod) (container_memory_working_set_bytes{namespace="%s", container!=""})' % ns,
          'memory working set (bytes) by pod', [({'pod': p}, f) for p, f in mem.items()])
    rs = restarts or {}
    b.rng('sum by (pod) (kube_pod_container_status_restarts_total{namespace="%s"})' % ns,
          'container restarts (cumulative) by pod',
          [({'pod': p}, rs.get(p, (lambda m, r: 0))) for p in cpu.keys()])


def const(v):
    return lambda m, r: v


def MiB(x):
    return x * 1048576
