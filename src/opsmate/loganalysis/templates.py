"""Log templates: group messages by their constant part with Drain (the drain3 miner).

Drain (He et al., ICWS 2017; IBM's maintained ``drain3`` implementation) builds a
fixed-depth prefix tree over message tokens and puts a message in the cluster whose
template shares the most tokens with it, turning the tokens that differ into ``<*>``.
Before mining, values that are variable by nature are masked (``<uuid>``, ``<ts>``,
``<ip>``, ``<id>``, ``<dur>``, ``<num>``), as drain3's own masking instructions do, so that
``PoolTimeout waiting 41`` and ``PoolTimeout waiting 57`` meet in
``PoolTimeout waiting <num>`` even when seen only twice.

Mining is the costly step, so :class:`TemplateMiner` remembers every message *shape*
(the message with its digits replaced) it has placed: a bundle of 150,000 records
written by a few dozen log statements costs a few dozen Drain insertions. JSON lines
are mined on their ``message`` field (see :mod:`opsmate.loganalysis.parse`), never on the
whole JSON text, so records with the same keys but different messages stay apart.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["ID_MASKS", "TemplateMiner", "mask_message"]

# ids, times and addresses: the parts of a message that differ between occurrences of
# one statement (shared with :func:`opsmate.tools.shaping.message_pattern`)
ID_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
        "<uuid>",
    ),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        "<ts>",
    ),
    (re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b"), "<ip>"),
    (re.compile(r"\b(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}\b"), "<ip>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<id>"),
    # Kubernetes pod names: <name>-<replicaset hash>-<5 chars>
    (re.compile(r"(?<=[a-z0-9])-[a-z0-9]{8,10}-[a-z0-9]{5}\b"), "-<id>"),
    # long hex ids / trace ids, and mixed letter+digit tokens of 12+ chars
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<id>"),
    (re.compile(r"\b(?=[A-Za-z0-9_]*\d)(?=[A-Za-z0-9_]*[A-Za-z])[A-Za-z0-9_]{12,}\b"), "<id>"),
)
_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    *ID_MASKS,
    (re.compile(r"(?<![\w.<])\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d)\b"), "<dur>"),
    (re.compile(r"(?<![A-Za-z<\d.])\d+(?:\.\d+)?(?![A-Za-z>\d.])"), "<num>"),
)
_SPACES = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
MAX_CHARS = 300  # messages are mined on their first line, cut to this length


def mask_message(message: str) -> str:
    """The first line of ``message`` with its variable values masked (the text Drain sees).

    Durations (``45ms``, ``1.5s``) become ``<dur>``; other numbers glued to letters
    (``http2``, ``v1``) stay as written.
    """
    first = message.strip().split("\n", 1)[0][:MAX_CHARS]
    out = first
    for pattern, repl in _MASKS:
        out = pattern.sub(repl, out)
    return _SPACES.sub(" ", out).strip()


class TemplateMiner:
    """Drain over masked messages, with a cache of message shapes already placed.

    :meth:`add` returns a cluster id; :meth:`template` the cluster's template as it is
    now (templates only generalise as more messages arrive, ids never change).
    ``sim_th`` is Drain's similarity threshold (the share of equal tokens a message
    needs to join a cluster) and ``depth`` its prefix-tree depth. Drain's cost grows
    with the number of clusters: past ``max_insertions`` mined shapes or ``max_clusters``
    clusters (logs of unbounded variety), new shapes are grouped by their masked text
    alone, so a pathological input stays bounded.
    """

    def __init__(
        self,
        *,
        sim_th: float = 0.6,
        depth: int = 4,
        max_children: int = 100,
        max_insertions: int = 20_000,
        max_clusters: int = 3_000,
    ) -> None:
        from drain3.drain import Drain

        self._drain: Any = Drain(
            sim_th=sim_th,
            depth=depth,
            max_children=max_children,
            param_str="<*>",
            parametrize_numeric_tokens=True,
        )
        self._shapes: dict[str, int] = {}
        self._clusters: dict[int, Any] = {}
        self._exact: dict[str, int] = {}  # masked text -> id, once Drain is saturated
        self._exact_text: dict[int, str] = {}
        self.max_insertions = max_insertions
        self.max_clusters = max_clusters
        self.insertions = 0  # messages that went through Drain (cache misses)

    def add(self, message: str) -> int:
        """The cluster id of ``message`` (mined on first sight of its shape)."""
        shape = _DIGITS.sub("0", message[:MAX_CHARS])
        cid = self._shapes.get(shape)
        if cid is not None:
            return cid
        masked = mask_message(message)
        if self.insertions >= self.max_insertions or len(self._clusters) >= self.max_clusters:
            cid = self._exact.get(masked)
            if cid is None:
                cid = self._exact[masked] = -(len(self._exact) + 1)
                self._exact_text[cid] = masked
        else:
            cluster, _ = self._drain.add_log_message(masked)
            self.insertions += 1
            cid = int(cluster.cluster_id)
            self._clusters[cid] = cluster
        if len(self._shapes) < 200_000:
            self._shapes[shape] = cid
        return cid

    def template(self, cid: int) -> str:
        """The template of cluster ``cid`` (``<*>`` where its messages differ)."""
        if cid < 0:
            return self._exact_text.get(cid, "")
        cluster = self._clusters.get(cid)
        return str(cluster.get_template()) if cluster is not None else ""

    def __len__(self) -> int:
        return len(self._clusters) + len(self._exact)
