"""Changes: what happened before the onset (rollouts, configuration edits, flags, scale;
HolmesGPT's config-change playbooks; ITBench / AIOpsLab injected misconfigurations)."""

from __future__ import annotations

from opsmate.agent.kinds.card import Trait
from opsmate.agent.kinds.catalog.base import variant
from opsmate.agent.observe.facts import FactKind as K

CARDS = (
    variant(
        K.CHANGE,
        "fault-injection",
        "A fault-injection experiment (Chaos Mesh, LitmusChaos) runs against the workload",
        reasons=("FaultInjection",),
        traits=frozenset({Trait.QUIET, Trait.ACTS}),  # its own events say it acted on them
        phrase="a fault-injection experiment",
        check="see the experiment, its target and its duration: `kubectl -n {ns} get "
        "networkchaos,iochaos,stresschaos,podchaos,timechaos,jvmchaos,httpchaos,chaosengine` and "
        "`kubectl -n {ns} describe` it (Events)",
        mitigation="pause or delete the experiment if it was not meant to reach this workload "
        "(a person decides: `kubectl -n {ns} annotate <kind> <name> "
        "experiment.chaos-mesh.org/pause=true`, or delete the ChaosEngine)",
        topics=("chaos", "experiment", "fault injection", "game day"),
        asks=r"chaos|game ?day|experiment|injected",
        evidence="the experiment's own events (Started / Applied / ExperimentJobCreate)",
        catalog=("ChaosMesh", "LitmusChaos", "AIOpsLab", "RCAEval"),
    ),
    variant(
        K.CHANGE,
        "config-edit",
        "A ConfigMap / Secret the workload reads was edited",
        reasons=("ConfigChanged",),
        phrase="a configuration edit",
        check="diff the ConfigMap against its previous content (the change's evidence) and "
        "what reads it",
        mitigation="restore the previous value, then restart what reads it (a person decides)",
        catalog=("HolmesGPT:config change impact", "ITBench"),
    ),
    variant(
        K.CHANGE,
        "feature-flag-change",
        "A feature flag was switched",
        reasons=("feature_flag",),
        words=r"flag",
        example=("feature_flag", "flag paymentFailure changed"),
        phrase="a feature flag switched",
        mitigation="switch the flag back (a person decides)",
        topics=("flag", "feature", "toggle"),
        catalog=("classic: feature flag", "OpenTelemetry demo flagd"),
    ),
    variant(
        K.CHANGE,
        "config-reload",
        "The application reloaded its configuration",
        reasons=("config_reload",),
        phrase="a configuration reload",
        catalog=("classic: config drift",),
    ),
    variant(
        K.CHANGE,
        "failover",
        "A failover / leader change",
        reasons=("failover", "rebalance"),
        traits=frozenset({Trait.QUIET}),
        phrase="a failover or rebalance",
        catalog=("classic: failover", "RabbitMQ split brain"),
    ),
)
