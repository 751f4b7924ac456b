"""cert-manager objects (Certificate, Issuer, ClusterIssuer) to their records' fields."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import tzinfo
from typing import Any

from opsmate.tools.kubernetes.shaping_common import (
    as_list,
    conditions,
    get,
    integer,
    text,
    time_text,
)

_ISSUER_TYPES = ("acme", "ca", "vault", "selfSigned", "venafi")


def certificate(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    names = [text(n) for n in as_list(get(obj, "spec", "dnsNames"))]
    common = text(get(obj, "spec", "commonName"))
    if common and common not in names:
        names.insert(0, common)
    return {
        "secret_name": text(get(obj, "spec", "secretName")),
        "dns_names": [n for n in names if n],
        "issuer_name": text(get(obj, "spec", "issuerRef", "name")),
        "issuer_kind": text(get(obj, "spec", "issuerRef", "kind")) or "Issuer",
        "not_after": time_text(get(obj, "status", "notAfter"), tz),
        "renewal_time": time_text(get(obj, "status", "renewalTime"), tz),
        "failed_attempts": integer(get(obj, "status", "failedIssuanceAttempts")),
        "last_failure": time_text(get(obj, "status", "lastFailureTime"), tz),
        "conditions": conditions(obj, tz),
    }


def issuer(obj: Any, tz: tzinfo | None) -> dict[str, Any]:
    spec = get(obj, "spec")
    kind = next((t for t in _ISSUER_TYPES if isinstance(spec, Mapping) and t in spec), None)
    return {
        "issuer_type": kind,
        "ca_secret": text(get(obj, "spec", "ca", "secretName")),
        "conditions": conditions(obj, tz),
    }


CERT_SHAPERS = {"Certificate": certificate, "Issuer": issuer, "ClusterIssuer": issuer}
