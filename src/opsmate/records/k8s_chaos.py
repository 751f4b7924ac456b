"""Records of fault-injection experiments: Chaos Mesh's kinds (chaos-mesh.org/v1alpha1:
NetworkChaos, PodChaos, StressChaos, IOChaos, TimeChaos, DNSChaos, HTTPChaos, JVMChaos,
KernelChaos) and LitmusChaos's ChaosEngine (litmuschaos.io/v1alpha1).

An experiment's events say that it started and on which pods; what it does (partition,
loss, delay, a CPU hog, an I/O error) is written only in its spec, read here."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opsmate.records.k8s import Condition
from opsmate.records.k8s_meta import K8sObject
from opsmate.records.types import StrList, StrMap, Text, items

CHAOS_MESH_KINDS = (
    "NetworkChaos",
    "PodChaos",
    "StressChaos",
    "IOChaos",
    "TimeChaos",
    "DNSChaos",
    "HTTPChaos",
    "JVMChaos",
    "KernelChaos",
)
FAULT_EXPERIMENT_KINDS = (*CHAOS_MESH_KINDS, "ChaosEngine")


class FaultExperiment(K8sObject):
    tool: Text = None  # "Chaos Mesh" | "LitmusChaos"
    action: Text = (
        None  # spec.action (loss, partition, pod-kill ...), a stressor, a Litmus experiment
    )
    params: StrMap = Field(
        default_factory=dict
    )  # the action's settings (loss: 35%, latency: 200ms)
    mode: Text = None  # one | all | fixed-percent ...
    direction: Text = None  # NetworkChaos: to | from | both
    duration: Text = None
    namespaces: StrList = Field(default_factory=list)  # where its selector looks
    selector: StrMap = Field(default_factory=dict)  # the pods it acts on (labels)
    target: StrMap = Field(default_factory=dict)  # NetworkChaos: the other side (labels)
    pods: StrList = Field(default_factory=list)  # pods it was applied to (status records)
    state: Text = None  # paused | recovered | injected | stopped (from status)
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
