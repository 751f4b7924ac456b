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
        ("redis://:hunter2@cache:6379/0", "redis://:[REDACTED]@cache:6379/0", 1),  # no user
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


# -- the classes of issue 12 (each masked; the key, scheme or prefix kept) ------------------

B64_PASSWORD = "cGFzc3dvcmQ9aHVudGVyMg=="  # base64 of "password=hunter2"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=Zm9vYmFyYmF6cXV4MTI=;"
            "EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=[REDACTED];"
            "EndpointSuffix=core.windows.net",
        ),
        (f"config blob {B64_PASSWORD} loaded", "config blob [REDACTED] loaded"),
        ("数据库密码: Mima42x 已更新", "数据库密码: [REDACTED] 已更新"),
        ("数据库密码：hunter2，请勿泄露", "数据库密码：[REDACTED]，请勿泄露"),
        ("口令=a1 令牌: b2 密钥=c3", "口令=[REDACTED] 令牌: [REDACTED] 密钥=[REDACTED]"),
        ("export PGPASSWORD=pg55 && psql", "export PGPASSWORD=[REDACTED] && psql"),
        ("key sk-proj-AbCdEfGhIjKlMnOpQrStUv0123 used", "key [REDACTED] used"),
        ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv0123", "[REDACTED]"),
        ("maps AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW ok", "maps [REDACTED] ok"),
        ("push glpat-xYz12AbC34dEf56GhI78", "push [REDACTED]"),
        ("Cookie: sessionid=s3ss; csrftoken=t0k path=/x", "Cookie: [REDACTED] path=/x"),
        ("Set-Cookie: sid=abc; Path=/; HttpOnly", "Set-Cookie: [REDACTED]"),
        ('up{upstream="Basic dXNlcjpwYXNzd29yZA=="}', 'up{upstream="Basic [REDACTED]"}'),
        ("X-Acme-Sig: Qm9vdDJLc2FmZTk4N3Vvd3Z5WnRy", "X-Acme-Sig: [REDACTED]"),
        (
            "kubectl set env deploy/pay DB_PASSWORD=cc66 --record",
            "kubectl set env deploy/pay DB_PASSWORD=[REDACTED] --record",
        ),
        ("--from-literal=password=lit1", "--from-literal=password=[REDACTED]"),
        ("psql --password fl6 -h db", "psql --password [REDACTED] -h db"),
        ("mysql -u root -pMy5ecret orders", "mysql -u root -p[REDACTED] orders"),
        ("redis-cli -h cache -a r3dis ping", "redis-cli -h cache -a [REDACTED] ping"),
        ("SECRET_KEY_BASE=8fG2kL9mQ4rT7vX1zB3nC5hJ", "SECRET_KEY_BASE=[REDACTED]"),
        ("Proxy-Authorization: Basic dXNlcjpw", "Proxy-Authorization: Basic [REDACTED]"),
        ("slack xoxb-<num>-AbcdefABCDEF", "slack [REDACTED]"),  # after log templating
    ],
)
def test_issue_12_classes(r: Redactor, text: str, expected: str) -> None:
    out, n = r.redact_text(text)
    assert out == expected and n >= 1


@pytest.mark.parametrize(
    "word",
    ["password", "passwd", "pwd", "secret", "token", "api-key", "api_key", "auth",
     "credential", "credentials", "cookie", "密码", "口令", "令牌", "密钥"],
)  # fmt: skip
@pytest.mark.parametrize(
    "form",
    ["{w}=V4lue1", '"{w}": "V4lue1"', "{w}: V4lue1", "x_{w}=V4lue1", "  {w}: V4lue1"],
)
def test_pairs_whose_key_names_a_secret(r: Redactor, word: str, form: str) -> None:
    out, n = r.redact_text(form.format(w=word))
    assert "V4lue1" not in out and n == 1, out


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("postgresql://orders:Pu1@db.shop:5432/orders", "Pu1"),
        ("mysql://root:My2@mysql:3306/app", "My2"),
        ("mongodb+srv://app:Mg3@c0.example.net/db", "Mg3"),
        ("redis://:Rd4@cache:6379/0", "Rd4"),
        ("amqps://guest:Aq5@mq:5671/", "Aq5"),
        ("jdbc:sqlserver://db:1433;databaseName=app;user=sa;password=Jd6;", "Jd6"),
        ("jdbc:postgresql://db/app?user=app&password=Jp7&ssl=true", "Jp7"),
        ("jdbc:oracle:thin:scott/Ot8@db:1521/orcl", "Ot8"),
        ("Server=tcp:db,1433;User ID=app;Password=Ad9;Encrypt=True", "Ad9"),
        ("Driver={ODBC};Server=db;Uid=app;Pwd={Od10};", "Od10"),
        ("host=db user=app password=Lq11 dbname=x", "Lq11"),
        (
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;"
            "SharedAccessKey=Sb12Zq9Xw7=",
            "Sb12Zq9Xw7",
        ),
        ("https://a.blob.core.windows.net/c?sv=2022&sig=Sa13%2Fx&se=2026", "Sa13"),
        ("https://b.s3.amazonaws.com/k?X-Amz-Signature=9f8e7d6c5b4a3f2e", "9f8e7d6c5b4a3f2e"),
        ("sqlplus scott/Or14Tiger@orcl", "Or14Tiger"),
        ("https://hooks.slack.com/services/T0AB/B0CD/Hk15abcdefXYZ", "Hk15abcdefXYZ"),
        ("machine api.example login bob password Nr16", "Nr16"),
        ("requirepass Rp17secret", "Rp17secret"),
    ],
)
def test_connection_strings(r: Redactor, text: str, secret: str) -> None:
    out, n = r.redact_text(text)
    assert secret not in out and n >= 1, out


@pytest.mark.parametrize(
    "text",
    [
        "X-Request-Id: 6f1c2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f",
        "pod=order-service-7d9f8b6c5d-x2x9k node=ip-10-0-1-23.ec2.internal",
        "Basic authentication failed for user bob",
        "basic auth is disabled",
        "_id: kYf6bYsBq9zT0pC1d7mJ",
        "controller-revision-hash: order-7d9f8b6c5d",
        "auth_method=password login=ok",
        "it needs credentials: opsmate auth set prometheus --env test",
        "the cookie consent banner was shown",
        "token_budget=5 tokens=12 tokenizer=bpe",
        "greeting aGVsbG8gd29ybGQgZnJvbSBvcHNtYXRl end",  # base64 of a harmless text
        'sum by (code) (rate(http_requests_total{service="pay-service"}[5m]))',
        "X-Amz-Date: 20260101T000000Z",
        "connection_refused_total InternalServerError QueuePoolLimitReached",
        "oauth2 login flow started",
        "kubectl -n shop rollout undo deployment/cart-service",
        "数据库连接超时，请检查密码是否正确",
    ],
)
def test_more_non_secrets_are_left_alone(r: Redactor, text: str) -> None:
    assert r.redact_text(text) == (text, 0)


def test_terminal_control_is_removed_but_not_counted(r: Redactor) -> None:
    out, n = r.redact_text("\x1b[31mERROR\x1b[0m \x9b2J done\x07")
    assert (out, n) == ("ERROR  done", 0)
    out, n = r.redact_text("\x1b]0;title\x07password=hunter2")
    assert (out, n) == ("password=[REDACTED]", 1)


def test_structured_secrets(r: Redactor) -> None:
    obj = {
        "env": [
            {"name": "DB_PASSWORD", "value": "pw1"},
            {"name": "LOG_LEVEL", "value": "debug"},
        ],
        "headers": {"X-Acme-Sig": "Qm9vdDJLc2FmZTk4N3Vvd3Z5WnRy", "X-Request-Id": "abc-123"},
        "密码": "cjk1",
        "config": {"SECRET_KEY_BASE": "8fG2kL9mQ4rT7vX1zB3nC5hJ", "password_reset": "true"},
        "annotations": {"kubernetes.io/change-cause": "kubectl set env x API_TOKEN=t0k"},
        "labels\x1b[2J": "v\x9b",
    }
    out, n = r.redact_obj(obj)
    assert out["env"] == [
        {"name": "DB_PASSWORD", "value": MASK},
        {"name": "LOG_LEVEL", "value": "debug"},
    ]
    assert out["headers"] == {"X-Acme-Sig": MASK, "X-Request-Id": "abc-123"}
    assert out["密码"] == MASK
    assert out["config"] == {"SECRET_KEY_BASE": MASK, "password_reset": "true"}
    assert (
        out["annotations"]["kubernetes.io/change-cause"] == "kubectl set env x API_TOKEN=[REDACTED]"
    )
    assert out["labels"] == "v"
    assert n == 5


def test_pydantic_models_keep_their_type(r: Redactor) -> None:
    from enum import StrEnum

    from pydantic import BaseModel

    class Kind(StrEnum):
        LOG = "log_error"

    class Inner(BaseModel):
        kind: Kind = Kind.LOG
        text: str

    class Outer(BaseModel):
        question: str
        items: list[Inner]
        args: dict[str, str]

    model = Outer(
        question="why? password=hunter2",
        items=[Inner(text="token=abc\x1b[2J")],
        args={"api_key": "k1", "q": "x"},
    )
    clean = r.clean(model)
    assert type(clean) is Outer and type(clean.items[0]) is Inner
    assert clean.items[0].kind is Kind.LOG
    assert clean.question == "why? password=[REDACTED]"
    assert clean.items[0].text == "token=[REDACTED]"
    assert clean.args == {"api_key": MASK, "q": "x"}
    assert model.question.endswith("hunter2")  # the original is unchanged
