"""Secret redaction: one test per pattern, and non-secrets left alone."""

from __future__ import annotations

import pytest

from opsmate.errors import ConfigError
from opsmate.tools.redact import MASK, Redactor

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.fixture(scope="module")
def r() -> Redactor:
    return Redactor()


@pytest.mark.parametrize(
    ("text", "expected", "count"),
    [
        (
            "Authorization: Bearer abcdef1234567890",
            "Authorization: Bearer [REDACTED]",
            1,
        ),
        ("authorization=Basic dXNlcjpwYXNz", "authorization=Basic [REDACTED]", 1),
        ("sent Bearer tok_9a8b7c6d5e4f upstream", "sent Bearer [REDACTED] upstream", 1),
        (f"jwt {JWT} end", "jwt [REDACTED] end", 1),
        (f"Authorization: Bearer {JWT}", "Authorization: Bearer [REDACTED]", 1),
        (
            "dsn postgres://orders:S3cret!x@db.shop:5432/orders",
            "dsn postgres://orders:[REDACTED]@db.shop:5432/orders",
            1,
        ),
        ("redis://:hunter2@cache:6379/0", "redis://:hunter2@cache:6379/0", 0),  # no user part
        ("amqp://guest:guest@mq", "amqp://guest:[REDACTED]@mq", 1),
        ("login password=hunter2 ok", "login password=[REDACTED] ok", 1),
        ("passwd: hunter2", "passwd: [REDACTED]", 1),
        ("pwd=abc secret=xyz", "pwd=[REDACTED] secret=[REDACTED]", 2),
        ("?token=abc123&page=2", "?token=[REDACTED]&page=2", 1),
        ("api_key=k-123 apikey: k-456", "api_key=[REDACTED] apikey: [REDACTED]", 2),
        ("DB_PASSWORD=pa55 client_secret=cs", "DB_PASSWORD=[REDACTED] client_secret=[REDACTED]", 2),
        (
            '{"password": "two words", "user": "bob"}',
            '{"password": "[REDACTED]", "user": "bob"}',
            1,
        ),
        ("{'secret': 'x1'}", "{'secret': '[REDACTED]'}", 1),
        ("key id AKIAIOSFODNN7EXAMPLE used", "key id [REDACTED] used", 1),
        ("ASIAY34FZKBOKMUTVV7A", "[REDACTED]", 1),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "aws_secret_access_key = [REDACTED]",
            1,
        ),
        (
            "AWS secret key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS secret key: [REDACTED]",
            1,
        ),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "stripe [REDACTED]", 1),
        ("gh ghp_16C7e42F292c6912E7710c838347Ae178B4a", "gh [REDACTED]", 1),
        ("slack xoxb-123456789012-abcdefABCDEF", "slack [REDACTED]", 1),
        ("slack xoxp-123456789012-abcdefABCDEF", "slack [REDACTED]", 1),
    ],
)
def test_patterns(r: Redactor, text: str, expected: str, count: int) -> None:
    assert r.redact_text(text) == (expected, count)


def test_pem_private_key(r: Redactor) -> None:
    pem = (
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nq0fV+Jk=\n"
        "-----END RSA PRIVATE KEY-----\nafter"
    )
    out, n = r.redact_text(pem)
    assert n == 1 and "MIIE" not in out and "q0fV" not in out
    assert out == (
        "key:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nafter"
    )
    out, n = r.redact_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk (cut")
    assert n == 1 and "b3Bl" not in out


@pytest.mark.parametrize(
    "text",
    [
        "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
        "deployed 9fceb02d0ae598e95dc970b74767f19372d61af8 (sha)",
        "event=password_reset_requested user=42",
        "timeout=30 retries=3 max_tokens=512",
        "https://grafana.example/d/abc?orgId=1&from=now-6h",
        "http://db.shop:5432/orders",
        "Bearer",
        "secretName: db-credentials",
        "PoolTimeout: QueuePool limit of size 20 overflow 0 reached",
        "image: registry.example/order-service:1.8.2@sha256:" + "a" * 64,
    ],
)
def test_non_secrets_are_left_alone(r: Redactor, text: str) -> None:
    assert r.redact_text(text) == (text, 0)


def test_kubernetes_secret_data(r: Redactor) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "db",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"data":{}}'},
        },
        "data": {"username": "b3JkZXJz", "url": "cG9zdGdyZXM6Ly8="},
        "stringData": {"note": "plain"},
        "type": "Opaque",
    }
    out, n = r.redact_obj(secret)
    assert out["data"] == {"username": MASK, "url": MASK}
    assert out["stringData"] == {"note": MASK}
    assert (
        out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == MASK
    )
    assert out["metadata"]["name"] == "db" and out["type"] == "Opaque"
    assert n == 4
    assert secret["data"]["username"] == "b3JkZXJz"  # the input is not modified


def test_structured_values_under_secret_keys(r: Redactor) -> None:
    obj = {
        "env": [{"name": "X", "value": "1"}],
        "config": {"password": "p@ss", "DB_PASSWORD": "x", "secretName": "db", "token_budget": 5},
        "headers": {"Authorization": "Basic dXNlcjpwYXNz"},
        "items": [("msg", "password=hunter2")],
    }
    out, n = r.redact_obj(obj)
    assert out["config"] == {
        "password": MASK,
        "DB_PASSWORD": MASK,
        "secretName": "db",
        "token_budget": 5,
    }
    assert out["headers"]["Authorization"] == MASK
    assert out["items"] == [("msg", "password=[REDACTED]")]
    assert out["env"] == obj["env"]
    assert n == 4


def test_configured_patterns() -> None:
    r = Redactor([r"INT-[0-9]{6}", r"customer=(\w+)"])
    assert r.redact_text("ticket INT-123456 customer=acme") == (
        "ticket [REDACTED] customer=[REDACTED]",
        2,
    )


def test_invalid_configured_pattern_names_it() -> None:
    with pytest.raises(ConfigError, match=r"redact_patterns.*\(unclosed"):
        Redactor(["(unclosed"])


def test_already_redacted_text_is_not_counted_twice(r: Redactor) -> None:
    once, n1 = r.redact_text("password=hunter2 Authorization: Bearer abcdefgh12345")
    twice, n2 = r.redact_text(once)
    assert n1 == 2 and n2 == 0 and twice == once
