"""Records of cert-manager's kinds (cert-manager.io/v1): Certificate, Issuer, ClusterIssuer.

A Certificate says which Secret holds the key pair, for which names, from which issuer, and
(in its status) until when it is valid and whether its renewal fails; an issuer says whether
it can sign at all. The expiry of a certificate nobody renewed is written only here and in
the clients' handshake errors."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opsmate.records.k8s import Condition
from opsmate.records.k8s_meta import K8sObject
from opsmate.records.types import OptInt, StrList, Text, Time, items


class Certificate(K8sObject):
    secret_name: Text = None  # spec.secretName: where the key pair is written
    dns_names: StrList = Field(default_factory=list)  # spec.dnsNames (and commonName)
    issuer_name: Text = None  # spec.issuerRef.name
    issuer_kind: Text = None  # spec.issuerRef.kind: Issuer (default) | ClusterIssuer
    not_after: Time = None  # status.notAfter: the certificate's end of validity
    renewal_time: Time = None  # status.renewalTime
    failed_attempts: OptInt = None  # status.failedIssuanceAttempts
    last_failure: Time = None  # status.lastFailureTime
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)


class Issuer(K8sObject):
    """An Issuer or ClusterIssuer."""

    issuer_type: Text = None  # ca | acme | vault | selfSigned | venafi
    ca_secret: Text = None  # spec.ca.secretName
    conditions: Annotated[list[Condition], items(Condition)] = Field(default_factory=list)
