"""Two teams' runbooks for the team-index tests (not a test module).

Domains: ``payments/`` and ``platform/`` by folder; ``security/psp-key-rotation.md`` by
front matter in ``security`` and ``payments``; ``oncall-basics.md`` at the top is
``shared``. The two teams' runbooks share words on purpose (connection pools, timeouts,
restarts), so BM25 statistics differ between the whole index and one team's part.
"""

from __future__ import annotations

from pathlib import Path

TEAM_RUNBOOKS: dict[str, str] = {
    "payments/refunds-stuck.md": """---
title: Refunds stuck in pending
service: payment-api
alerts: [RefundQueueBacklog]
tags: [refunds, psp]
---

# Refunds stuck in pending

## Symptoms

Customers report refunds that stay pending for hours. The RefundQueueBacklog alert fires
when more than 500 refunds wait in the refund queue.

## Checks

Look at the PSP webhook deliveries: a refund completes only when the provider calls back.
Check `refund_worker` logs for `PSPTimeout` errors and the worker's connection pool.

## Mitigation

Replay the missed webhooks from the provider dashboard; restart the refund worker only
after the backlog drains.
""",
    "payments/card-declines.md": """---
title: Card decline spike
service: payment-api
environment: [prod]
alerts: [CardDeclineRateHigh]
---

# Card decline spike

## Symptoms

The share of declined card payments doubles within minutes; checkout conversion drops.

## Checks

Split declines by issuer response code: `05 do not honor` from one issuer points at the
issuer, `91 issuer unavailable` at the network. Compare with the fraud rules changed
today.

## Mitigation

Roll back a fraud rule deployed before the spike; open a ticket with the acquirer.
""",
    "payments/ledger-db-pool.md": """---
title: Ledger database connection pool exhausted
service: ledger
alerts: [LedgerPoolSaturated]
---

# Ledger database connection pool exhausted

## Symptoms

Ledger writes time out with `PoolTimeout` and payment captures queue up.

## Checks

Count open connections per ledger pod; a long transaction holding locks keeps the pool
full. Check the pool size against the database's max_connections.

## Mitigation

Kill the long transaction, then scale the ledger workers back down.
""",
    "platform/node-disk-pressure.md": """---
title: Node disk pressure
service: kubernetes
alerts: [KubeNodeDiskPressure]
---

# Node disk pressure

## Symptoms

Pods are evicted from one node; kubelet reports DiskPressure and image pulls fail.

## Checks

Find what fills the root filesystem: container logs, unused images, emptyDir volumes.

## Mitigation

Prune unused images with `crictl rmi --prune`, then cordon the node if it fills again.
""",
    "platform/postgres-max-connections.md": """---
title: Postgres max_connections reached
service: postgresql
alerts: [PostgresTooManyConnections]
---

# Postgres max_connections reached

## Symptoms

Applications fail with `FATAL: sorry, too many clients already`; every connection pool in
front of the database times out.

## Checks

Group `pg_stat_activity` by application and state; idle in transaction sessions hold
connections for nothing.

## Mitigation

Terminate idle sessions and lower the pool size of the noisiest client; restart nothing.
""",
    "platform/dns-failures.md": """---
title: CoreDNS resolution failures
service: coredns
alerts: [CoreDNSErrorsHigh]
---

# CoreDNS resolution failures

## Symptoms

Services log `no such host` and `i/o timeout` for names inside the cluster.

## Checks

Check the CoreDNS pods' restarts and the conntrack table of the nodes.

## Mitigation

Scale CoreDNS up and enable NodeLocal DNSCache.
""",
    "security/psp-key-rotation.md": """---
title: Rotating the PSP API key
service: payment-api
domains: [security, payments]
---

# Rotating the PSP API key

## Steps

Create the new key in the provider dashboard, store it in the vault, roll the payment-api
pods, then revoke the old key after one hour without errors.
""",
    "oncall-basics.md": """# On-call basics

## First minutes

Acknowledge the page, open the incident channel, and write down the time the symptoms
started before touching anything.
""",
}

PAYMENTS = {"payments/refunds-stuck.md", "payments/card-declines.md",
            "payments/ledger-db-pool.md", "security/psp-key-rotation.md"}  # fmt: skip
PLATFORM = {"platform/node-disk-pressure.md", "platform/postgres-max-connections.md",
            "platform/dns-failures.md"}  # fmt: skip

QUERIES = [
    "refunds pending for hours",
    "connection pool exhausted PoolTimeout",
    "too many clients already",
    "node disk full pods evicted",
    "restart the worker",
    "rotate the provider API key",
    "card declines doubled",
    "DNS no such host",
]


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, "utf-8")
    return root


def only(files: set[str]) -> dict[str, str]:
    """The runbooks named in ``files`` (a one-team tree, same relative paths)."""
    return {k: v for k, v in TEAM_RUNBOOKS.items() if k in files}
