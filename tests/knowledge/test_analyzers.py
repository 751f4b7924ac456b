"""Tests of the one BM25 analyzer (opsmate.knowledge.analyzers) and the zh->en glossary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from opsmate.knowledge.analyzers import (
    GLOSSARY_PATH,
    JIEBA_DICT_PATH,
    expand_query,
    glossary_terms,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max_connections", ["max_connections", "max", "connection"]),
        ("PoolTimeout", ["pooltimeout", "pool", "timeout"]),
        ("CrashLoopBackOff", ["crashloopbackoff", "crash", "loop", "back", "off"]),
        ("ORA-00054", ["ora-00054", "ora", "00054"]),
        ("HTTP 503", ["http", "503"]),
        ("order-service", ["order-service", "order", "service"]),
        ("55P03", ["55p03"]),
        ("x509", ["x509"]),
        ("127.0.0.1", ["127.0.0.1"]),
        (
            "deployment/order-service",
            ["deployment/order-service", "deployment", "order-service", "order", "service"],
        ),
        ("OOMKilled", ["oomkilled", "oom", "killed"]),
        ("IOError", ["ioerror", "io", "error"]),
        (
            "sqlalchemy.exc.TimeoutError",
            [
                "sqlalchemy.exc.timeouterror",
                "sqlalchemy",
                "exc",
                "timeouterror",
                "timeout",
                "error",
            ],
        ),
    ],
)
def test_identifiers_kept_whole_and_split(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_sentence_punctuation_is_not_part_of_identifiers() -> None:
    tokens = tokenize("Restart order-service. Then check ORA-00054, HTTP 503!")
    assert tokens == [
        "restart",
        "order-service",
        "order",
        "service",
        "check",
        "ora-00054",
        "ora",
        "00054",
        "http",
        "503",
    ]


def test_stop_words_dropped_but_numbers_and_negations_kept() -> None:
    tokens = tokenize("The pool is at 0 and it is not a problem")
    assert tokens == ["pool", "0", "not", "problem"]
    # a stop word inside an identifier never removes the identifier
    assert tokenize("is_ready")[0] == "is_ready"
    assert tokenize("a-b")[0] == "a-b"


def test_plural_normalisation_only_on_plain_words_and_parts() -> None:
    assert tokenize("connections queries pods replicas") == [
        "connection",
        "query",
        "pod",
        "replica",
    ]
    # endings that are not plurals are kept
    assert tokenize("status ingress redis analysis") == ["status", "ingress", "redis", "analysis"]
    # whole identifiers are never normalised, only their parts
    for ident in ("max_connections", "status_codes", "pods/web-1", "ReadinessProbes", "k8s"):
        assert tokenize(ident)[0] == ident.lower()
    # query words meet identifier parts
    assert set(tokenize("max connections")) <= set(tokenize("max_connections"))


def test_chinese_segmentation_uses_ops_dictionary() -> None:
    tokens = tokenize("订单服务的连接池耗尽了，需要扩容或者回滚")
    for word in ("连接池", "耗尽", "扩容", "回滚", "订单"):
        assert word in tokens
    # function characters and punctuation are dropped
    for dropped in ("的", "了", "，"):
        assert dropped not in tokens
    for word in ("消费积压", "锁等待", "主从切换", "熔断", "限流"):
        assert word in tokenize(f"出现{word}问题"), word


def test_mixed_chinese_english_protects_identifiers() -> None:
    assert tokenize("连接池 PoolTimeout 报错") == [
        "连接",
        "连接池",
        "pooltimeout",
        "pool",
        "timeout",
        "报错",
    ]
    tokens = tokenize("max_connections太小，order-service报错ORA-00054")
    assert "max_connections" in tokens
    assert "order-service" in tokens
    assert "ora-00054" in tokens
    assert "_" not in tokens
    assert not any(t in ("-", "，") for t in tokens)


def test_same_analyzer_for_index_and_query_text() -> None:
    doc = tokenize("Pods restart with CrashLoopBackOff after the connections ran out")
    query = tokenize("crash loop back off connection")
    assert set(query) <= set(doc)


def test_jieba_loaded_lazily_with_cache_in_user_cache_dir(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from opsmate.knowledge.analyzers import tokenize\n"
        "tokenize('english only text, max_connections')\n"
        "assert 'jieba' not in sys.modules, 'jieba imported for English text'\n"
        "print(tokenize('连接池报错'))\n"
        "assert 'jieba' in sys.modules\n"
    )
    env = {**os.environ, "OPSMATE_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "连接池" in proc.stdout
    assert (tmp_path / "cache" / "jieba" / "jieba.cache").is_file()


def test_expand_query_appends_english_equivalents() -> None:
    q = "订单服务连接池耗尽，要不要扩容还是回滚？"
    expanded = expand_query(q)
    assert expanded.startswith(q)
    for english in ("connection pool", "scale out", "rollback"):
        assert english in expanded
    tokens = tokenize(expanded)
    assert {"connection", "pool", "rollback"} <= set(tokens)


def test_expand_query_longest_term_wins_and_english_unchanged() -> None:
    assert glossary_terms("连接池") == ["connection pool"]
    assert glossary_terms("内存溢出") == ["out of memory", "oom"]
    assert glossary_terms("限流") == ["rate limit", "throttling"]
    assert expand_query("order-service returns 503") == "order-service returns 503"
    assert expand_query("你好") == "你好"


def test_glossary_and_dictionary_files_are_well_formed() -> None:
    entries = [
        line
        for line in GLOSSARY_PATH.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert len(entries) >= 150
    seen: set[str] = set()
    for line in entries:
        zh, en = line.split("\t")
        assert zh and en.strip(), line
        assert zh not in seen, f"duplicate glossary term {zh}"
        seen.add(zh)
    for term in ("重启", "磁盘", "节点", "证书", "连接池", "熔断", "扩容", "回滚", "限流"):
        assert term in seen
    for line in JIEBA_DICT_PATH.read_text(encoding="utf-8").splitlines():
        word, freq, _tag = line.split(" ")
        assert word and int(freq) > 0
