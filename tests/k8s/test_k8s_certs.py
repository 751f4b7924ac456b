"""cert-manager's Certificates and issuers, on objects of our own, fed through the analyzer
registry: an expired certificate with why its renewal fails, an issuer that cannot sign."""

from __future__ import annotations

from datetime import UTC, datetime

from k8s_build import obj
from k8s_observe import Feed

from opsmate.agent.kinds import card_for
from opsmate.agent.observe.facts import FactKind as K

FAILED = 'Error getting keypair for CA issuer: secret "internal-ca-keypair" not found'


def cert(name: str, not_after: str, *conds: dict) -> dict:
    spec = {
        "secretName": name,
        "dnsNames": ["api", "api.shop.svc"],
        "issuerRef": {"name": "internal-ca", "kind": "ClusterIssuer"},
    }
    return obj("Certificate", name, spec=spec, status={"notAfter": not_after,
                                                      "conditions": list(conds)})  # fmt: skip


def issuer(ready: bool) -> dict:
    cond = {"type": "Ready", "status": "True" if ready else "False",
            "reason": "KeyPairVerified" if ready else "ErrGetKeyPair",
            "message": "Signing CA verified" if ready else FAILED}  # fmt: skip
    spec = {"ca": {"secretName": "internal-ca-keypair"}}
    return obj("ClusterIssuer", "internal-ca", None, spec=spec, status={"conditions": [cond]})


def test_an_expired_certificate_says_when_and_why_it_was_not_renewed() -> None:
    f = Feed()
    expired = {"type": "Ready", "status": "False", "reason": "Expired",
               "message": "Certificate expired on Sat, 14 Mar 2026 06:00:00 UTC"}  # fmt: skip
    issuing = {"type": "Issuing", "status": "False", "reason": "Failed",
               "message": f"The certificate request has failed to complete: {FAILED}"}  # fmt: skip
    c = cert("api-tls", "2026-03-14T06:00:00Z", expired, issuing)
    c["status"]["failedIssuanceAttempts"] = 6
    f.objects("Certificate", [c, cert("web-tls", "2099-01-01T00:00:00Z")])
    [fact] = f.facts(K.CONFIG_ERROR)
    assert fact.statement.startswith(
        "Certificate `api-tls` (Secret `api-tls`, for api, api.shop.svc) expired at 2026-03-14 "
        "06:00 (status.notAfter); cert-manager cannot renew it (6 failed attempts)"
    )
    assert FAILED in fact.statement and fact.conclusive
    assert fact.time == datetime(2026, 3, 14, 6, 0, tzinfo=UTC)
    assert card_for(fact).id == "certificate-expired"
    assert {o.name for o in fact.objects if o.kind == "host"} == {"api", "api.shop.svc"}


def test_a_certificate_past_its_end_in_the_window_is_expired_whatever_its_condition() -> None:
    f = Feed()
    f.ctx.window_to = datetime(2026, 3, 14, 7, 0, tzinfo=UTC)
    ready = {"type": "Ready", "status": "True", "reason": "Ready"}
    f.objects("Certificate", [cert("api-tls", "2026-03-14T06:00:00Z", ready)])
    [fact] = f.facts(K.CONFIG_ERROR)
    assert "expired at 06:00:00" in fact.statement
    g = Feed()  # a window that ends while it is still valid: nothing
    g.ctx.window_to = datetime(2026, 3, 14, 5, 0, tzinfo=UTC)
    g.objects("Certificate", [cert("api-tls", "2026-03-14T06:00:00Z", ready)])
    assert g.facts(K.CONFIG_ERROR) == []


def test_an_issuer_that_cannot_sign_names_the_certificates_it_issues() -> None:
    f = Feed()
    f.objects("ClusterIssuer", [issuer(False)], ns=None)
    expired = {"type": "Ready", "status": "False", "reason": "Expired", "message": "expired"}
    f.objects("Certificate", [cert("api-tls", "2026-03-14T06:00:00Z", expired)])
    [fact] = f.facts(K.MISCONFIGURATION)
    assert fact.statement.startswith("ClusterIssuer `internal-ca` is not Ready (ErrGetKeyPair)")
    assert "it issues `api-tls`" in fact.statement and fact.severity == "error"
    assert card_for(fact).id == "certificate-issuer-not-ready"
    ok = Feed()
    ok.objects("ClusterIssuer", [issuer(True)], ns=None)
    assert ok.facts(K.MISCONFIGURATION) == []
