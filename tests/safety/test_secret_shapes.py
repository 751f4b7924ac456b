"""Secrets judged by their shape in free text, and the ordinary values that look a little
like them (each neighbour below was masked once, in the repository's own bundles, by a
looser rule: see ``benchmarks/redact_false_positives.py``)."""

from __future__ import annotations

import base64
import random
import string

import pytest

from opsmate.tools.redact import MASK, Redactor, looks_secret
from opsmate.tools.redact_shapes import random_token, wordlike

RANDOM = "Zx9Qw8Er7Ty6Ui5Op4As3Df2"

# (text, fragment that must go)
SECRETS = [
    (f"deployed by ci with {RANDOM} as key", RANDOM),
    (f"key {RANDOM}.", RANDOM),  # at the end of a sentence
    (f"[{RANDOM}]", RANDOM),
    (f"https://discord.com/api/webhooks/1234567890/{RANDOM}xYz_-AbC12", RANDOM),
    (f"https://hooks.example/services/T01/{RANDOM}/send", RANDOM),
    ("base64 key kP3+Lm9/Nq2Rs8Tv4Wx7Yz1Bc6Df0Gh5Jk== used", "kP3+Lm9/Nq2Rs8Tv4Wx7"),
    ("db=postgres://u:p@h/db", "u:p@"),
    ("note: token=Tk8sNoteValue", "Tk8sNoteValue"),
    ("password=hunter2 retry", "hunter2"),
    ("secret=abc", "=abc"),
    ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
    ("sent Bearer QWxhZGRpbjpvcGVuIHNlc2FtZQ123", "QWxhZGRpbjpvcGVuIHNlc2FtZQ123"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "eyJzdWIiOiIxMjM0In0"),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAA",
    ),
    ("mongodb+srv://app:Mg0Pw@c0.example.net/db", "Mg0Pw"),
    ("session id vP3mkwq2S7ajcBfDj0Zi8A", "vP3mkwq2S7ajcBfDj0Zi8A"),  # a session id is one
    ("password=yes123", "yes123"),
    ("password=$ecret99", "$ecret99"),
    ("Cookie: sid=Ck8Value", "Ck8Value"),
]

NEIGHBOURS = [
    "alert OrderServiceHigh5xxRate is firing",
    "UnableToConnect on redis-cart:6379/Interactive, Initializing/NotStarted",
    "JAVA_TOOL_OPTIONS=-XX:MaxRAMPercentage=75",
    "verify_token | Error validating token: Signature has expired",
    "stream-thread [java-kafka-streams-6f1d2c3a-9b4e-4d8f-a2c7-1e5b8f0d3c42-StreamThread-1]",
    "pod payments-api-PR-118-7-ds4t4-2jr5m started",
    "grpc call /hipstershop.RecommendationService/ListRecommendations failed",
    "io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception: stream closed",
    "image registry.example.com/shop/api@sha256:" + "9fceb02d0ae598e95dc970b74767f193" * 2,
    "request_id=123e4567-e89b-12d3-a456-426614174000 trace 4bf92f3577b34da6a3ce929d0e0e4736",
    "pod-template-hash=6c8f9d7b4d",
    "clusterId: vP3mkwq2S7ajcBfDj0Zi8A",
    "request id vP3mkwq2S7ajcBfDj0Zi8A",
    "message_sid=SM9f1fe0ab30b18121dd496b36abd7158a delivered",
    "mounted jwtRS256.key.pub from the secret",
    "node image AKSUbuntu-2204gen2containerd-202402.26.0",
    "service.name=$(OTEL_SERVICE_NAME),service.namespace=opentelemetry-demo",
    "greeting aGVsbG8gd29ybGQgZnJvbSBvcHNtYXRl end",  # base64 of plain words
    "uploads/2026/05/Image0123456789abcdefXYZ.png",
    "K8sClusterAutoscalerV1beta1Controller started",
    "-----BEGIN CERTIFICATE-----\nMIIELTCCApWgAwIBAgIRAJq0Vb1Zy0m3bQ2tL8kS3XcwDQYJKoZIhvcNAQEL\n"
    "-----END CERTIFICATE-----",
    # values under secret-sounding keys that are no secret
    "Error when reading /var/lib/rabbitmq/.erlang.cookie: eacces",
    "kubectl set image deployment/shop-auth shop-auth=harbor.example.internal/shop/auth:1.4.2",
    "ALLOW_EMPTY_PASSWORD=yes",
    "SERVER_SSL_CERTIFICATE_PRIVATE_KEY=/etc/tls/tls.key",
    "REDIS_PASSWORD=${REDIS_PASSWORD} and DB_PASSWORD=$(DB_PASSWORD)",  # references
]


@pytest.mark.parametrize(("text", "fragment"), SECRETS)
def test_secret_shapes_are_masked_in_free_text(text: str, fragment: str) -> None:
    clean, n = Redactor().redact_text(text)
    assert fragment not in clean and n >= 1, clean
    assert MASK in clean


@pytest.mark.parametrize("text", NEIGHBOURS)
def test_ordinary_identifiers_are_left_alone(text: str) -> None:
    assert Redactor().redact_text(text) == (text, 0)


def test_masking_is_idempotent() -> None:
    r = Redactor()
    for text, _ in SECRETS:
        once = r.redact_text(text)[0]
        assert r.redact_text(once) == (once, 0), once


def test_random_tokens_are_caught_nearly_always() -> None:
    """Random base62 and base64 keys of 24+ characters: at least 9 in 10 (the shape rule
    misses the few whose letters happen to read like words)."""
    rng = random.Random(27)
    alphabet = string.ascii_letters + string.digits
    base62 = ["".join(rng.choice(alphabet) for _ in range(28)) for _ in range(400)]
    b64 = [base64.b64encode(rng.randbytes(30)).decode() for _ in range(400)]
    for tokens in (base62, b64):
        caught = sum(random_token(t) for t in tokens)
        assert caught >= 0.9 * len(tokens), caught


def test_words_and_random_are_told_apart() -> None:
    assert wordlike("OrderServiceHigh5xxRate") and wordlike("Http2ServerConnectionHandler")
    assert not wordlike(RANDOM) and not wordlike("vP3mkwq2S7ajcBfDj0Zi8A")


def test_annotation_and_label_values_by_shape_and_by_key() -> None:
    """Under any annotation or label key the value decides; a key naming an id keeps a
    random-looking id; an alert name in labels is no secret."""
    obj = {
        "metadata": {
            "labels": {"alertname": "OrderServiceHigh5xxRate", "acme.io/ci": RANDOM},
            "annotations": {
                "acme.io/build-id": "vP3mkwq2S7ajcBfDj0Zi8A",
                "acme.io/sessionId": "vP3mkwq2S7ajcBfDj0Zi8A",
                "example.com/db-dsn": "postgres://u:p@h/db",
                "acme.io/note": f"rotated, token={RANDOM}",
                "acme.io/cmd": f"ran with {RANDOM} as key",
            },
        },
        "status": {"clusterId": "vP3mkwq2S7ajcBfDj0Zi8A"},
    }
    obj["series"] = [{"labels": {"grpc_service": "emojivoto.v1.EmojiService"}}]  # not a key
    out, n = Redactor().redact_obj(obj)
    labels, ann = out["metadata"]["labels"], out["metadata"]["annotations"]
    assert labels == {"alertname": "OrderServiceHigh5xxRate", "acme.io/ci": MASK}
    assert ann["acme.io/build-id"] == "vP3mkwq2S7ajcBfDj0Zi8A"
    assert ann["acme.io/sessionId"] == MASK
    assert ann["example.com/db-dsn"] == f"postgres://u:{MASK}@h/db"
    assert ann["acme.io/note"] == f"rotated, token={MASK}"
    assert ann["acme.io/cmd"] == f"ran with {MASK} as key"
    assert out["status"]["clusterId"] == "vP3mkwq2S7ajcBfDj0Zi8A"
    assert out["series"][0]["labels"]["grpc_service"] == "emojivoto.v1.EmojiService"
    assert n == 5
    assert not looks_secret("OrderServiceHigh5xxRate") and looks_secret(RANDOM)
