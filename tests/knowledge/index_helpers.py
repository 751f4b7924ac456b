"""Helpers shared by the index / retrieval / CLI tests (not a test module)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OPSMATE = Path(sys.executable).parent / "opsmate"

POOL = """---
title: Order service connection pool exhaustion
service: order-service
environment: [test, prod]
status: active
alerts: [OrderServiceDBPoolSaturated]
---

# Order service connection pool exhaustion

## Symptoms

Checkout hangs and the logs show `PoolTimeout: QueuePool limit of size 20 overflow 0
reached`. The pool of database connections is exhausted.

## Mitigation

Find the long transactions holding connections before raising `DB_POOL_SIZE`.
"""

REDIS_TEST = """---
title: Restarting Redis in test
service: redis
environment: [test]
---

# Restarting Redis in test

Restarting the Redis pod in the test environment is safe: run
`kubectl -n shop rollout restart statefulset/redis`.
"""

REDIS_PROD = """---
title: Redis in prod must not be restarted
service: redis
environment: [prod]
---

# Redis in prod must not be restarted

Never restart Redis in prod; fail over with Sentinel instead.
"""

DISK = """# Node disk pressure

Kubelet reports DiskPressure when the node's root filesystem is almost full; pods are
evicted. Clean up unused images with `crictl rmi --prune`.
"""

CERT_OLD = """---
title: Gateway certificate renewal (old)
service: api-gateway
status: deprecated
---

# Gateway certificate renewal (old)

Renew the TLS certificate of the gateway by hand with openssl before it expires.
"""

CERT_NEW = """---
title: Gateway certificate renewal
service: api-gateway
---

# Gateway certificate renewal

cert-manager renews the TLS certificate of the gateway; check the Certificate resource
when it expires.
"""

SMALL_CORPUS = {
    "order-service/pool.md": POOL,
    "redis/restart-test.md": REDIS_TEST,
    "redis/restart-prod.md": REDIS_PROD,
    "kubernetes/disk.md": DISK,
    "gateway/cert-old.md": CERT_OLD,
    "gateway/cert.md": CERT_NEW,
}


def write_runbooks(folder: Path, docs: dict[str, str]) -> Path:
    for rel, text in docs.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return folder


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run the ``opsmate`` console script (the test's environment, plus ``env``)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [str(OPSMATE), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        check=False,
    )


def cli_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    """(exit code, parsed stdout JSON or None, stderr)."""
    proc = run_cli(*args, env=env)
    try:
        data = json.loads(proc.stdout) if proc.stdout.strip() else None
    except json.JSONDecodeError:
        data = None
    return proc.returncode, data, proc.stderr
