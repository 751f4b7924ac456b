"""The TUI's save flow: a name ending in .tar.gz saves the finished investigation as a
bundle (through the same Bridge the app drives), which loads and replays."""

from __future__ import annotations

from pathlib import Path

from opsmate.tools.bundle import load_bundle
from opsmate.tui.bridge import Bridge, LaunchOptions


def test_bridge_saves_a_bundle_for_a_tar_gz_name(tmp_path: Path) -> None:
    posted: list[object] = []
    bridge = Bridge(LaunchOptions(demo=True, model="none"), posted.append)
    assert bridge.open()
    bridge.ask(None)
    report = bridge.latest_report()
    assert report is not None
    (written,) = bridge.save_report(tmp_path / "incident.tar.gz")
    assert written == tmp_path / "incident.tar.gz"
    b = load_bundle(written)
    assert b.meta.question == report.question and b.objects and b.logs
    md, js = bridge.save_report(tmp_path / "incident")  # the report as before
    assert md.suffix == ".md" and js.suffix == ".json"
