"""Switch what is investigated: a built-in demo bundle or a bundle path.

Lists the demo bundles shipped with opsmate (title and environment from each
``bundle.yaml``) and takes any other bundle directory or ``.tar.gz`` path.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option


def demo_bundles(root: Path) -> list[tuple[Path, str]]:
    """``(path, label)`` of each bundle folder under ``root`` (label from its bundle.yaml)."""
    out: list[tuple[Path, str]] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        meta = folder / "bundle.yaml"
        if not meta.is_file():
            continue
        title, env = folder.name, ""
        for line in meta.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "title":
                title = value.strip().strip("\"'")
            elif key.strip() == "environment":
                env = value.split("#", 1)[0].strip()
        out.append((folder, f"{folder.name} · {env} · {title}"))
    return out


class BundleScreen(ModalScreen[Path | None]):
    """Pick a demo bundle or type a bundle path; dismissed with the Path (or None)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, demo_root: Path) -> None:
        super().__init__(id="bundle-screen")
        self.bundles = demo_bundles(demo_root)
        self._list = OptionList(
            *[Option(Content(label), id=str(path)) for path, label in self.bundles],
            id="bundle-list",
        )

    def compose(self) -> ComposeResult:
        with Vertical(id="bundle-dialog", classes="dialog"):
            yield Static("Open a bundle", classes="dialog-title")
            yield OptionList(
                *[Option(Content(label), id=str(path)) for path, label in self.bundles],
                id="bundle-list",
            )
            yield Static("…or a bundle directory / .tar.gz:")
            yield Input(placeholder="path/to/bundle", id="bundle-path")

    def on_mount(self) -> None:
        self.call_after_refresh(self._list.focus)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id:
            self.dismiss(Path(event.option.id))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if not value:
            return
        path = Path(value).expanduser()
        if not path.exists():
            self.notify(f"{path} does not exist", severity="error")
            return
        self.dismiss(path)

    def action_close(self) -> None:
        self.dismiss(None)
