"""Nodes: conditions, pressure and reachability (k8sgpt's Node analyzer; Chaos Mesh
KernelChaos / node faults; HolmesGPT's node playbooks)."""

from __future__ import annotations

from opsmate.agent.kinds.card import read
from opsmate.agent.kinds.catalog.base import (
    NODE_CONNTRACK,
    NODE_CONNTRACK_DROPS,
    NODE_CONNTRACK_LIMIT,
    NODE_RETRANSMITS,
    variant,
)
from opsmate.agent.observe.facts import FactKind as K

# what a node that drops or loses the packets of calls into its pods shows
_CALLS_FAIL = frozenset({K.ERROR_RATE, K.LATENCY, K.ALERT, K.NOT_READY})

CARDS = (
    variant(
        K.SATURATION,
        "conntrack-table-full",
        "A node's connection-tracking table is full: new connections are dropped",
        reasons=("conntrack_full",),
        example=("conntrack_full", "nf_conntrack: nf_conntrack: table full, dropping packet"),
        conclusive=True,
        specificity=3.0,
        phrase="a full conntrack table on the node (the kernel drops new connections)",
        check="on the node: `node_nf_conntrack_entries` against `node_nf_conntrack_entries_limit`"
        ", the kernel log (`dmesg | grep conntrack`), and which pod there opens connections in "
        "bulk",
        mitigation="stop or move what floods the node with connections; raise "
        "net.netfilter.nf_conntrack_max only as a stopgap (a person decides)",
        topics=("conntrack", "node", "network", "kernel", "dropping packet"),
        asks=r"conntrack|connection|timeout|drop|node",
        # most telling first: drops say it is full; the limit says how full the entries are
        reads=(NODE_CONNTRACK_DROPS, NODE_CONNTRACK_LIMIT, NODE_CONNTRACK),
        evidence="the kernel's 'nf_conntrack: table full, dropping packet' in the node's log, "
        "node-exporter's conntrack series (entries at the limit, drops)",
        catalog=("classic: conntrack exhaustion", "SREGym: OS limits"),
    ),
    variant(
        K.SATURATION,
        "conntrack-filling",
        "One node's connection-tracking table fills (far more entries than the other nodes)",
        reasons=("conntrack_filling",),
        example=(
            "conntrack_filling",
            "node_nf_conntrack_entries on node w2 rose from 27600 to 262144 at 13:38",
        ),
        specificity=2.5,
        phrase="a node whose conntrack table fills up",
        check="compare `node_nf_conntrack_entries` with `node_nf_conntrack_entries_limit` on "
        "that node, its conntrack drops, and which pod there opens connections in bulk",
        mitigation="stop or move what floods the node with connections (a person decides)",
        topics=("conntrack", "node", "network", "connections"),
        reads=(NODE_CONNTRACK_LIMIT, NODE_CONNTRACK_DROPS),
        evidence="node-exporter's conntrack entries rising on one node only",
        confirms="the entries at the table's limit, or conntrack drops on that node",
        catalog=("classic: conntrack exhaustion", "SREGym: OS limits"),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-packet-loss",
        "Packets are lost on one node's network (its TCP retransmits rose, other nodes' did not)",
        reasons=("NodeNetworkLoss",),
        example=(
            "NodeNetworkLoss",
            "node_netstat_Tcp_RetransSegs on node n2 rose from 0.4 to 34/s at 11:19",
        ),
        conclusive=True,
        specificity=2.9,
        explains=_CALLS_FAIL,
        phrase="packet loss on the node's network",
        check="on node {target}: `node_netstat_Tcp_RetransSegs` and drops per interface against "
        "the other nodes, a chaos experiment or `tc qdisc` (netem) on its pods, the NIC's errors",
        mitigation="remove what drops the packets (a chaos experiment, a netem rule) or drain "
        "the node so the pods move (a person decides)",
        topics=("node", "network", "packet loss", "retransmit", "netem", "loss"),
        asks=r"packets?|loss|retransmi|dropp",
        reads=(NODE_RETRANSMITS,),
        evidence="node-exporter's retransmit / timeout / drop counters rising on one node only",
        rules_out="every node's counters rising together (load, not loss)",
        catalog=(
            "ChaosMesh:NetworkChaos loss",
            "RCAEval:loss",
            "AIOpsLab: network loss",
            "LitmusChaos:pod-network-loss",
        ),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-shared-by-failing-calls",
        "The calls that fail all go to one node (its network or kernel)",
        reasons=("SharedNode",),
        example=("SharedNode", "the calls that fail (a, b) all go to pods on node n1"),
        specificity=2.7,
        explains=_CALLS_FAIL,
        phrase="one node whose pods do not answer: its network or kernel",
        check="on node {target}: packet loss and retransmits (`node_netstat_Tcp_RetransSegs`), "
        "conntrack use against its limit, the kernel log (`dmesg`), and what else runs there",
        mitigation="cordon and drain the node so the pods move, then repair or replace it (a "
        "person decides)",
        topics=("node", "network", "packet loss", "conntrack", "retransmit"),
        evidence="the failing calls' targets and where their pods run (pod nodeName)",
        confirms="node-level loss or drops on that node only",
        catalog=(
            "ChaosMesh:NetworkChaos loss on a node",
            "AIOpsLab: network loss",
            "classic: bad node",
        ),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-network-unavailable",
        "Node network unavailable (CNI not ready)",
        words=r"networkunavailable|network (?:is )?not ready|cni|NetworkPluginNotReady",
        example=("NetworkNotReady", "network is not ready: container runtime network not ready"),
        phrase="a node whose pod network is down",
        topics=("node", "network", "cni"),
        catalog=("k8sgpt:Node",),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-not-ready",
        "Node NotReady / unreachable (kubelet stopped reporting)",
        reasons=("NodeStatusUnknown", "NodeNotReady", "KubeletNotReady", "NotReady"),
        words=r"kubelet stopped posting|node is not ready|notready|unreachable",
        example=(
            "NodeStatusUnknown",
            "Ready (NodeStatusUnknown: Kubelet stopped posting node status.)",
        ),
        conclusive=True,
        specificity=2.8,
        phrase="a node that is not ready",
        check="check the node: `kubectl describe node {target}` (Conditions, Events) and the "
        "kubelet's log on it",
        mitigation="restore the kubelet / node or drain and replace it (a person decides)",
        topics=("node", "notready", "not ready", "kubelet", "unreachable"),
        catalog=("k8sgpt:Node", "ChaosMesh:node failure"),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-memory-pressure",
        "Node under memory pressure",
        words=r"memorypressure|memory pressure|reclaim memory",
        example=("NodeHasMemoryPressure", "MemoryPressure"),
        phrase="a node under memory pressure",
        topics=("node", "memory", "pressure", "evict"),
        catalog=("k8sgpt:Node", "ChaosMesh:StressChaos memory"),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-pid-pressure",
        "Node under PID pressure",
        words=r"pidpressure|pid pressure",
        example=("NodeHasPIDPressure", "PIDPressure"),
        phrase="a node out of process ids",
        topics=("node", "pid", "pressure", "process"),
        catalog=("k8sgpt:Node", "SREGym:os limits"),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-cordoned",
        "Node cordoned (unschedulable)",
        reasons=("Unschedulable",),
        conclusive=False,
        phrase="a cordoned node",
        # a node cordoned for a drain that never finishes: a budget that allows no eviction
        reads=(read("list_objects", "disruption budgets", kind="PodDisruptionBudget"),),
        topics=("node", "cordon", "drain", "unschedulable"),
        catalog=("k8sgpt:Node",),
    ),
    variant(
        K.SATURATION,
        "pod-ip-exhaustion",
        "The pod network has no IP address to give (CNI pool or subnet exhausted)",
        reasons=("FailedCreatePodSandBox",),
        example=(
            "FailedCreatePodSandBox",
            'failed to setup network for sandbox "x": add cmd: failed to assign an IP '
            "address to container",
        ),
        conclusive=True,
        specificity=2.8,
        phrase="pods that get no IP address: the CNI's address pool or the subnet behind it "
        "is exhausted",
        check="see the CNI's own account (its daemon's log on the node: ipamd / calico-node / "
        "cilium-agent) and the free addresses of the node's subnet or IP pool",
        mitigation="free or add addresses (a larger subnet or pool, prefix delegation, fewer "
        "pods per node); a person decides",
        topics=("cni", "ip", "subnet", "ipam", "sandbox", "network"),
        evidence="FailedCreatePodSandBox events on pods stuck in ContainerCreating",
        confirms="the CNI's log saying it has no free address",
        catalog=("k8sgpt:Pod", "AWS VPC CNI: InsufficientFreeAddressesInSubnet", "ITBench"),
    ),
    variant(
        K.NODE_PROBLEM,
        "node-sandbox-failure",
        "Pod sandbox / runtime failures on the node",
        reasons=("FailedCreatePodSandBox", "FailedKillPod", "FailedSync"),
        phrase="container runtime failures on the node",
        catalog=("k8sgpt:Pod",),
    ),
    variant(
        K.NOT_READY,
        "pod-on-failed-node",
        "Pods not ready because their node is not ready",
        reasons=("NodeNotReady",),
        reads=(read("node_conditions", "the node the pods run on"),),
        phrase="is not ready because its node is not",
        catalog=("k8sgpt:Node",),
    ),
)
