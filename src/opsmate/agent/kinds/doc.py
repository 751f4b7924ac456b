"""``docs/failure-modes.md``, rendered from the cards (a test keeps the file in step).

python -m opsmate.agent.kinds.doc > docs/failure-modes.md
"""

from __future__ import annotations

import sys

from opsmate.agent.kinds.card import Card, Role
from opsmate.agent.kinds.catalog import FAMILIES
from opsmate.agent.kinds.catalog.base import BASE
from opsmate.agent.kinds.registry import base

_HEAD = """# Failure modes

What opsmate knows about how systems break lives in one card per failure mode
(`src/opsmate/agent/kinds/`). A card names the fact it reads (an observation kind, and for
modes finer than the kind the reasons or words that select it), its role, the symptoms it
explains, where its evidence lives, what confirms it and what rules it out, how it is said,
the next steps, and the public catalogs that list it. The judge, the plan and the report
read cards; this page is rendered from them (`python -m opsmate.agent.kinds.doc`).

Roles: a **symptom** is what the user sees and is never a root cause; a **cause** explains
symptoms (conclusive ones are the system's own account, confirmed on their own; the others
need a second, independent piece of evidence); a cause marked *effect* is itself produced by
something deeper: the investigation does not stop on it while checks that could find the
deeper cause remain, and a deeper cause found on what it reaches takes its place; a
**change** explains what began right after it.

"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip() or "—"


def _selects(c: Card) -> str:
    parts = [f"`{c.fact.value}`"]
    if c.reasons:
        parts.append("reason " + ", ".join(f"`{r}`" for r in c.reasons))
    if c.words:
        parts.append("words `" + c.words[:60] + ("…" if len(c.words) > 60 else "") + "`")
    return "; ".join(parts)


def _role(c: Card) -> str:
    if c.role == Role.CAUSE:
        return (
            "cause"
            + (" (conclusive)" if c.conclusive else "")
            + (" (effect)" if c.needs_deeper else "")
        )
    return c.role.value


def _explains(c: Card) -> str:
    return ", ".join(sorted(k.value for k in c.explains))


def _row(c: Card) -> str:
    where = c.evidence or base(c.fact).evidence
    return (
        f"| `{c.id}` | {_cell(c.title)} | {_cell(_selects(c))} | {_role(c)} | "
        f"{_cell(_explains(c))} | {_cell(where)} | {_cell(c.confirms)} | {_cell(c.rules_out)} | "
        f"{_cell(', '.join(c.catalog))} |"
    )


_COLS = (
    "| card | failure mode | reads | role | explains | evidence lives in | confirmed by "
    "| ruled out by | catalogs |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
)


def render() -> str:
    """The whole page."""
    n = len(BASE) + sum(len(m.CARDS) for m in FAMILIES)
    out = [
        _HEAD,
        f"{n} cards: {len(BASE)} base cards (one per observation kind) and "
        f"{n - len(BASE)} failure modes in {len(FAMILIES)} families.\n\n",
    ]
    out.append("## Base cards (one per observation kind)\n\n" + _COLS)
    out += [_row(c) + "\n" for c in BASE]
    for m in FAMILIES:
        title = (m.__doc__ or m.__name__).strip().split("\n")[0].rstrip(".")
        name = m.__name__.rsplit(".", 1)[-1]
        out.append(f"\n## {name}: {title}\n\n" + _COLS)
        out += [_row(c) + "\n" for c in m.CARDS]
    return "".join(out)


if __name__ == "__main__":
    sys.stdout.write(render())
