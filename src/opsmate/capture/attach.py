"""Wiring a :class:`~opsmate.capture.recorder.Recorder` to the tools of a registry.

Apart from the recorder so that the recorder (which the hooks call) imports none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opsmate.capture.recorder import Recorder

if TYPE_CHECKING:
    from opsmate.tools.bundle import Bundle
    from opsmate.tools.registry import ToolRegistry


def attach_recorder(registry: ToolRegistry, *, bundle: Bundle | None = None) -> Recorder:
    """A recorder watching the tools of ``registry`` (a bundle's replayed tools when
    ``bundle`` is given, else the live sources'). Never raises: a tool it cannot watch is
    listed in ``skipped``, and the investigation is unaffected."""
    rec = Recorder()
    try:
        if bundle is not None:
            from opsmate.capture.replay_reads import ReplayReads

            rec.replay = ReplayReads(bundle)
            rec.replay.wrap(registry)
        else:
            from opsmate.capture.live_hooks import instrument

            instrument(registry, rec)
    except Exception as exc:  # recording is a convenience: it never stops a run
        rec.skip("recording", f"could not watch the tools: {type(exc).__name__}: {exc}")
    return rec
