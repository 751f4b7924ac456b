"""A derived fact: a resource in use reaching its capacity, across two metric results."""

from __future__ import annotations

from opsmate.agent.evidence import EvidenceStore
from opsmate.agent.observe.facts import Fact, FactKind
from opsmate.agent.signals import metric_names
from opsmate.agent.state import TaskState
from opsmate.records.payloads import MetricsPayload

_CAP_WORDS = ("_max", "_limit", "_capacity", "_size", "_total_capacity")
_USE_WORDS = ("_in_use", "_used", "_usage", "_active", "_current", "_busy", "_open")


def derive_saturation(store: EvidenceStore, state: TaskState) -> None:
    """``x_in_use`` reaching ``x_max`` (two recorded queries) -> a saturation fact."""
    seen: list[tuple[str, str, float, float]] = []  # (eid, name, max, last)
    for eid, res in store.results.items():
        if res.tool != "query_metrics" or res.status not in ("success", "partial"):
            continue
        m = res.payload_as(MetricsPayload)
        if m is None:
            continue
        names = metric_names(m.query or str(res.args.get("query") or ""))
        if len(names) != 1 or not m.series:
            continue
        mx = max((s.max.value or 0.0) if s.max else 0.0 for s in m.series)
        last = max((s.last.value or 0.0) if s.last else 0.0 for s in m.series)
        seen.append((eid, names[0], float(mx), float(last)))
    for eu, nu, mxu, _ in seen:
        stem_u = next((nu[: -len(w)] for w in _USE_WORDS if nu.endswith(w)), None)
        if not stem_u:
            continue
        for ec, nc, _, lastc in seen:
            stem_c = next((nc[: -len(w)] for w in _CAP_WORDS if nc.endswith(w)), None)
            if stem_c != stem_u or lastc <= 0 or mxu < lastc:
                continue
            quote = f"{nu} reached {nc} ({mxu:g} of {lastc:g})"
            state.upsert_fact(
                Fact(
                    key=f"saturation:{stem_u}",
                    statement=f"{quote}: the resource is exhausted",
                    evidence=[eu, ec],
                    kind=FactKind.SATURATION,
                    severity="error",
                    quote=quote,
                    terms=[
                        nu.lower(),
                        nc.lower(),
                        *[p for p in stem_u.lower().split("_") if len(p) > 3],
                    ],
                    focus=True,
                    detail={"in_use": nu, "capacity": nc, "max": mxu, "limit": lastc},
                )
            )
