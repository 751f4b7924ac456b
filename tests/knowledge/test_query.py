"""Query understanding: glossary, identifiers, error signatures, hints, intents, follow-ups."""

from __future__ import annotations

from pathlib import Path

import pytest

from opsmate.errors import ConfigError
from opsmate.knowledge.glossary import (
    OPS_GLOSSARY_PATH,
    Entry,
    Glossary,
    load_glossary,
    normalize_word,
    parse_lines,
)
from opsmate.knowledge.query import (
    QueryContext,
    Vocabulary,
    complete_follow_up,
    split_intents,
    understand,
)
from opsmate.knowledge.signature import (
    extract_signature,
    extract_times,
    extract_version,
    split_identifier,
    template_of,
)

VOCAB = Vocabulary(
    services=frozenset({"order-service", "payment-service", "redis", "orders-db"}),
    environments=frozenset({"test", "staging", "prod"}),
    known_term=lambda t: t in {"redis", "postgresql", "kafka"},
    topic_term=lambda t: t in {"redis", "postgresql", "kafka", "kubernetes"},
)


def _added(plan: object, kind: str | None = None) -> list[str]:
    return [a for e in plan.expansions if kind in (None, e.kind) for a in e.added]  # type: ignore[attr-defined]


# -- glossary ------------------------------------------------------------------------


def test_glossary_files_parse_and_hold_general_vocabulary() -> None:
    g = load_glossary()
    assert len(g) > 500
    kinds = {e.kind for e in g.entries.values()}
    assert kinds == {"alias", "env", "product"}
    assert g.entries["crashloopbackoff"].kind == "alias"
    assert g.entries["production"].expansions == ("prod",)
    assert g.entries["mongodb"].kind == "product"
    parse_lines(OPS_GLOSSARY_PATH.read_text("utf-8"), "ops_glossary.tsv")  # no error


def test_english_terms_match_across_inflections_and_small_gaps() -> None:
    assert normalize_word("restarting") == normalize_word("restarted") == normalize_word("restart")
    assert normalize_word("throttled") == normalize_word("throttle")
    g = load_glossary()
    m = g.match("the pods keep getting restarted every few minutes")
    assert [x.entry.term for x in m] == ["keep restart"]
    assert m[0].surface == "keep getting restarted"
    assert "CrashLoopBackOff" in m[0].entry.expansions
    # a term that needs more than two filler words does not match
    assert not [
        x
        for x in g.match("keep the three other things restarted")
        if x.entry.term == "keep restart"
    ]


def test_cjk_terms_longest_first_and_mixed_with_english() -> None:
    g = load_glossary()
    terms = [m.entry.term for m in g.match("新版本发不上去，镜像拉不下来 ImagePullBackOff")]
    assert "镜像拉不下来" in terms and "镜像" not in terms  # the longer term wins
    assert "ImagePullBackOff" in terms


def test_site_glossary_extends_and_overrides(tmp_path: Path) -> None:
    site = tmp_path / "site.tsv"
    site.write_text(
        "# our words\nwidgetd\tinventory-service; stock API\nprod\tproduction-eu\tenv\n"
        "frobnicator\t\tproduct\n",
        "utf-8",
    )
    g = load_glossary((str(site),))
    assert g.entries["widgetd"].expansions == ("inventory-service", "stock API")
    assert g.entries["prod"].expansions == ("production-eu",)  # replaces the built-in entry
    assert g.entries["frobnicator"].kind == "product"
    assert "crashloopbackoff" in g.entries  # built-in entries stay


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("just one column\n", "site.tsv:1"),
        ("a\tb\tweird\n", "unknown glossary kind"),
        ("# ok\n\nterm\t\n", "has no expansion"),
    ],
)
def test_malformed_site_glossary_names_file_and_line(
    tmp_path: Path, text: str, message: str
) -> None:
    site = tmp_path / "site.tsv"
    site.write_text(text, "utf-8")
    with pytest.raises(ConfigError, match=message):
        load_glossary((str(site),))
    with pytest.raises(ConfigError, match="cannot read"):
        load_glossary((str(tmp_path / "missing.tsv"),))


def test_added_entry_is_matched() -> None:
    g = Glossary()
    g.add(Entry("blue screen", ("kernel panic",)))
    assert [m.entry.term for m in g.match("a Blue   screens appeared")] == ["blue screen"]


# -- identifiers and signatures ----------------------------------------------------------


def test_alert_names_split_into_words() -> None:
    assert split_identifier("KubePodCrashLooping") == "Kube Pod Crash Looping"
    assert split_identifier("SSLCertExpiringSoon") == "SSL Cert Expiring Soon"
    assert split_identifier("lock_not_available") == "lock not available"
    plan = understand("KubePodCrashLooping", vocabulary=VOCAB)
    assert "Kube Pod Crash Looping" in _added(plan, "split")
    assert "CrashLoopBackOff" in _added(plan, "alias")  # found through the split words
    assert "Kube Pod Crash Looping" in plan.embed_text


def test_signature_of_a_java_stack_trace() -> None:
    trace = (
        "2026-10-21T10:02:11.482Z ERROR [inventory-service] request failed\n"
        "java.net.UnknownHostException: redis-master.shop.svc.cluster.local\n"
        "\tat java.net.InetAddress.getAllByName(InetAddress.java:1281)\n"
    )
    sig = extract_signature(trace)
    assert sig is not None and sig.is_log
    assert sig.exception == "UnknownHostException"
    assert sig.qualified == "java.net.UnknownHostException"
    assert "1281" not in sig.template and "2026" not in sig.template


def test_signature_of_a_python_traceback_keeps_the_message_template() -> None:
    tb = (
        "Traceback (most recent call last):\n"
        '  File "/app/orders/db.py", line 88, in checkout\n'
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size 20 overflow 0 reached, "
        "connection timed out, timeout 30.00\n"
    )
    sig = extract_signature(tb)
    assert sig is not None and sig.exception == "TimeoutError"
    assert sig.template == (
        "sqlalchemy.exc.TimeoutError: QueuePool limit of size <*> overflow <*> reached, "
        "connection timed out, timeout <*>"
    )
    plan = understand(tb, vocabulary=VOCAB)
    assert plan.text.startswith("sqlalchemy.exc.TimeoutError: QueuePool limit")  # frames dropped
    assert "queuepool" in plan.terms and "88" not in plan.terms and "30.00" not in plan.terms
    assert "checkout" not in plan.terms


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("ERROR: could not obtain lock on row SQLSTATE: 55P03", ["SQLSTATE 55P03"]),
        ("ORA-00054: resource busy and acquire with NOWAIT specified", ["ORA-00054"]),
        ("Last State: Terminated, Reason: OOMKilled, Exit Code: 137", ["exit code 137"]),
        ("write /var/lib/data: ENOSPC", ["ENOSPC"]),
        ('"POST /api/orders HTTP/1.1" 503 UH 0 19', ["HTTP 503"]),
        ("httpx.ConnectError: [Errno -2] Name or service not known", ["errno -2"]),
    ],
)
def test_error_codes(text: str, codes: list[str]) -> None:
    sig = extract_signature(text)
    assert sig is not None
    assert sig.codes == codes


def test_template_removes_ids_addresses_and_pod_hashes() -> None:
    t = template_of(
        "Back-off restarting failed container in pod payment-service-7d9c6b5f4-x2lqp "
        "on 10.0.4.21:41234 req 3f2b8c1e-1111-4c2a-9d3e-8a1b2c3d4e5f after 250ms"
    )
    assert "payment-service-<*>" in t
    assert "10.0.4.21" not in t and "3f2b8c1e" not in t and "250ms" not in t


def test_plain_questions_have_no_signature() -> None:
    assert extract_signature("why is checkout slow since the release") is None
    assert extract_signature("redis restart prod") is None


# -- hints: environment, service, time, version (never mandatory) ------------------------


def test_environment_service_and_time_are_hints_not_terms() -> None:
    plan = understand(
        "order service keeps timing out in production since 10:00 yesterday", vocabulary=VOCAB
    )
    assert plan.environment == "prod"
    assert plan.services == ["order-service"]
    assert plan.times == ["since 10:00", "yesterday"]
    assert "10:00" not in plan.text and "yesterday" not in plan.terms
    zh = understand("线上 redis 能不能重启一下，昨天晚上开始的", vocabulary=VOCAB)
    assert zh.environment == "prod" and zh.services == ["redis"]
    assert "昨天" in zh.times
    labels = understand("KubePodCrashLooping env=staging pod=payment-service-7d9c6b5f4-x2lqp")
    assert labels.environment == "staging"


def test_version_and_old_version_questions() -> None:
    assert extract_version("The rollout of order-service 3.15.0 is stuck") == ("3.15.0", False)
    assert extract_version("what did the old 1.0 version of the runbook say") == ("1.0", True)
    assert extract_version("旧版连接池手册里怎么说") == (None, True)
    assert extract_version("node 10.0.3.17 is down") == (None, False)


def test_times_are_not_read_inside_addresses() -> None:
    assert extract_times("lookup on 10.96.0.10:53: no such host") == []
    assert extract_times("errors since 14:05 and 2 hours ago, 今天早上 10点半") == [
        "since 14:05",
        "2 hours ago",
        "今天",
        "早上",
        "10点半",
    ]


# -- Chinese, products, weights ------------------------------------------------------------


def test_chinese_question_is_embedded_in_english_and_weighted() -> None:
    plan = understand("订单服务的 pod 一直在重启", vocabulary=VOCAB)
    assert plan.services == ["order-service"]
    assert "CrashLoopBackOff" in plan.embed_text and "订单" not in plan.embed_text
    weights = plan.term_weights()
    assert weights["订单"] == 1.0 and weights["order"] == 1.0  # translations weigh fully
    alias = understand("pods keep getting restarted", vocabulary=VOCAB).term_weights()
    assert alias["keep"] == 1.0 and alias["crashloopbackoff"] == 0.5  # aliases weigh less


def test_products_no_runbook_is_about_are_noted() -> None:
    plan = understand("MongoDB replica set election keeps flapping", vocabulary=VOCAB)
    assert "mongodb" in plan.products and "mongodb" in plan.unknown_products
    ok = understand("postgres too many connections", vocabulary=VOCAB)
    assert ok.unknown_products == []


# -- intents and follow-ups --------------------------------------------------------------


def test_multi_intent_questions_are_split() -> None:
    assert split_intents("redis is evicting keys and also the kafka consumers are lagging") == [
        "redis is evicting keys",
        "the kafka consumers are lagging",
    ]
    assert split_intents("证书快过期了，另外 kafka 消费也有积压") == [
        "证书快过期了",
        "kafka 消费也有积压",
    ]
    # a second sentence that refers back is context, not a second question
    assert split_intents("Can I restart Redis in prod? It fixed the same thing in test.") == []
    assert split_intents("order-service PoolTimeout after deploy") == []


def test_follow_ups_are_completed_from_the_previous_question() -> None:
    assert complete_follow_up("what about prod?", "can I restart redis in test") == (
        "what about prod? restart redis"
    )
    assert complete_follow_up("那生产环境呢", "测试环境 redis 连接满了可以重启吗") == (
        "那生产环境呢 redis 连接满了可以重启吗"
    )
    assert complete_follow_up("how do I fix it", None, ["order-service", "PoolTimeout"]) == (
        "how do I fix it order-service PoolTimeout"
    )
    # a question that stands alone is left as it is
    assert complete_follow_up("kafka consumer lag on order-projector", "redis restart") is None
    plan = understand(
        "and in prod?", vocabulary=VOCAB, context=QueryContext("redis restart in test")
    )
    assert plan.follow_up == "redis restart in test"
    assert plan.environment == "prod" and "redis" in plan.terms
