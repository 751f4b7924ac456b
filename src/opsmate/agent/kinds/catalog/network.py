"""Network and names: policies, DNS, unreachable and slow dependencies (k8sgpt's
NetworkPolicy analyzer; Chaos Mesh NetworkChaos and DNSChaos; RCAEval delay / loss;
HolmesGPT's DNS and network playbooks)."""

from __future__ import annotations

from opsmate.agent.kinds.card import read
from opsmate.agent.kinds.catalog.base import NODE_CONNTRACK_DROPS, NODE_RETRANSMITS, variant
from opsmate.agent.observe.facts import FactKind as K

_POLICIES = read(
    "list_objects", "policies that may drop the calls", kind="NetworkPolicy", namespace="{ns}"
)
_DNS_PODS = read("list_pods", "the cluster DNS pods", namespace="kube-system")
_DNS_LOG = read("log_stats", "the cluster DNS's own errors (its upstream resolvers)",
                service="coredns")  # fmt: skip
_DNS_CONFIG = read("list_objects", "the cluster DNS configuration (the Corefile's forward)",
                   kind="ConfigMap", namespace="kube-system")  # fmt: skip
_CALLEE_CHANGE = read(
    "rollout_history", "what changed on the dependency", name="{target}", namespace="{ns}"
)
CARDS = (
    variant(
        K.NETWORK_POLICY,
        "policy-blocks-dependency",
        "A NetworkPolicy isolates a service and admits none of its callers",
        reasons=("BlocksDependency", "ingressDenied"),
        phrase="a NetworkPolicy that drops the calls",
        asks=r"timeout|timed out|hang|refused|unreachable|network|connect|policy",
        reads=(_POLICIES,),
        catalog=("k8sgpt:NetworkPolicy", "HolmesGPT:network policy", "ChaosMesh:partition"),
    ),
    variant(
        K.NETWORK_POLICY,
        "policy-blocks-dns",
        "An egress NetworkPolicy blocks DNS (port 53)",
        reasons=("egressDNSDenied",),
        phrase="an egress NetworkPolicy that blocks DNS",
        asks=r"dns|resolve|resolution|names?\b|lookup|解析",  # "name", not "namespace"
        reads=(_POLICIES,),
        catalog=("HolmesGPT:dns issues", "ITBench:network"),
    ),
    variant(
        K.NETWORK_POLICY,
        "policy-blocks-egress",
        "An egress NetworkPolicy drops the calls out",
        reasons=("egressDenied",),
        phrase="an egress NetworkPolicy that drops the calls",
        reads=(_POLICIES,),
        catalog=("k8sgpt:NetworkPolicy",),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "dns-unresolvable",
        "A name does not resolve",
        reasons=("dns",),
        phrase="a name that does not resolve",
        check="resolve the name from a pod of {workload}: `kubectl -n {ns} exec {obj} -- "
        "nslookup {target}`; check CoreDNS and egress policies",
        mitigation="correct the host name in {workload}'s configuration, or restore DNS "
        "(CoreDNS, the policy that blocks port 53)",
        topics=("dns", "resolv", "name resolution", "coredns", "lookup"),
        asks=r"dns|resolve|resolution|lookup|nxdomain|解析",
        reads=(_DNS_PODS, _DNS_LOG, _POLICIES, _DNS_CONFIG),
        evidence="the caller's 'no such host' / 'could not resolve' lines naming the host",
        rules_out="the name resolves from the same pod; other names fail too (then: DNS itself)",
        catalog=("ChaosMesh:DNSChaos", "HolmesGPT:dns issues", "k8sgpt:Log"),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "dependency-refused",
        "Connections to a dependency are refused (nothing listens)",
        reasons=("refused",),
        needs_deeper=True,
        phrase="a dependency that refuses connections",
        asks=r"refused|connect|unavailable|down|503",
        reads=(
            _CALLEE_CHANGE,
            read("list_objects", "Services the callers use", kind="Service", namespace="{ns}"),
        ),
        rules_out="the dependency's pods ready and its Service's endpoints present",
        catalog=("ChaosMesh:PodChaos", "RCAEval", "HolmesGPT"),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "dependency-timeout",
        "Calls to a dependency time out",
        reasons=("timeout",),
        needs_deeper=True,
        phrase="a dependency that does not answer in time",
        asks=r"slow|latency|timeouts?|timed out|hang|延迟|超时",
        reads=(_POLICIES, NODE_RETRANSMITS, NODE_CONNTRACK_DROPS),
        rules_out="the dependency's own request duration normal (then: the network between)",
        catalog=("ChaosMesh:NetworkChaos delay", "RCAEval:delay", "HolmesGPT:network flapping"),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "slow-operation",
        "A slow operation the service waits on (a query, an external call) takes its time",
        reasons=("slow",),
        phrase="a slow operation the service waits on",
        check="read the slow operation's own timings before and after the onset (the log "
        "lines around it, the dependency's own duration series)",
        mitigation="find why the operation got slow (its query plan, its backend's load) before "
        "scaling the caller (a person decides)",
        topics=("slow", "latency", "query", "timeout", "duration"),
        asks=r"slow|latency|延迟|慢",
        evidence="the duration the service logs for the operation, as a share of the request",
        catalog=("RCAEval:delay", "HolmesGPT:high latency"),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "dependency-unavailable",
        "A dependency answers unavailable / 5xx",
        reasons=("unavailable",),
        needs_deeper=True,
        phrase="a dependency that is unavailable",
        reads=(_CALLEE_CHANGE,),
        catalog=("ChaosMesh:HTTPChaos abort", "RCAEval", "AIOpsLab"),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "network-delay-to-service",
        "Network delay or loss on the path to a service (callers see it slow, it is not)",
        reasons=("network",),
        phrase="network delay or loss on the path to a service",
        check="compare client- and server-side durations and retransmits for the callee "
        "(istio/linkerd request duration by reporter, node_netstat_Tcp_RetransSegs)",
        mitigation="find what slows the path (a chaos experiment, a sidecar, the node's network) "
        "and remove it (a person decides)",
        topics=("network", "latency", "delay", "packet loss", "retransmit"),
        asks=r"slow|latency|timeouts?|delay|packet|loss|延迟|超时",
        evidence="client-side request duration up, server-side flat",
        catalog=("ChaosMesh:NetworkChaos delay/loss", "RCAEval:delay", "RCAEval:loss"),
    ),
    variant(
        K.DEPENDENCY_FAILURE,
        "credentials-refused",
        "A backend refuses the credentials it is given",
        reasons=("auth",),
        conclusive=False,
        specificity=2.9,
        phrase="credentials the backend refuses",
        check="compare the credentials the workload uses (Secret, its version, when it changed) "
        "with the backend's users: `kubectl -n {ns} get secret` (metadata) and the backend's "
        "auth log",
        mitigation="restore matching credentials (re-sync the Secret or the backend user), then "
        "restart {workload} (a person decides)",
        topics=("auth", "credential", "password", "authentication", "secret", "login"),
        asks=r"auth|login|credential|password|permission|denied|401|403",
        evidence="the backend's authentication error in the caller's log",
        catalog=("AIOpsLab:revoke auth", "HolmesGPT", "classic: db auth after rotation"),
    ),
    variant(
        K.LAST_WORDS,
        "last-words-dns",
        "Exits because a name does not resolve",
        reasons=("dns",),
        phrase="a name that does not resolve at start-up",
        topics=("dns", "resolv", "crash", "startup"),
        catalog=("HolmesGPT:job fail curl", "ChaosMesh:DNSChaos"),
    ),
    variant(
        K.LAST_WORDS,
        "last-words-dependency",
        "Exits because a dependency is unreachable at start-up",
        reasons=("refused", "timeout", "unavailable"),
        needs_deeper=True,
        phrase="a dependency unreachable at start-up",
        catalog=("HolmesGPT:job crashing", "RCAEval"),
    ),
    variant(
        K.LAST_WORDS,
        "last-words-auth",
        "Exits because a backend refuses its credentials",
        reasons=("auth",),
        phrase="credentials a backend refuses at start-up",
        topics=("auth", "credential", "password", "authentication"),
        catalog=("AIOpsLab:revoke auth",),
    ),
)
