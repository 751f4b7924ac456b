"""``opsmate auth set|delete`` and credential lookup (keyring first, env vars as fallback)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError

from opsmate.cli import main
from opsmate.credentials import Credential, get_credential

SECRET = "s3cr3t-value-never-printed"


class MemoryKeyring(KeyringBackend):
    """An in-process keyring backend for tests."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise PasswordDeleteError(username)
        del self.store[(service, username)]


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def run_cli(
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stdin: str = "",
) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out + err


def test_set_reads_and_stores_without_printing(
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, text = run_cli(
        ["auth", "set", "prometheus", "--env", "test"], capsys, monkeypatch, SECRET + "\n"
    )
    assert code == 0 and SECRET not in text and "prometheus:test" in text
    assert memory_keyring.store[("opsmate", "prometheus:test")] == SECRET
    cred = get_credential("prometheus", "test")
    assert cred is not None and cred.token == SECRET and cred.origin == "keyring"
    assert cred.headers() == {"Authorization": f"Bearer {SECRET}"}
    assert SECRET not in repr(cred) and SECRET not in cred.describe()
    assert get_credential("prometheus", "prod") is None  # per environment


def test_basic_auth_and_default_environment(
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, _ = run_cli(
        ["auth", "set", "elasticsearch", "--username", "reader"], capsys, monkeypatch, SECRET
    )
    assert code == 0
    assert memory_keyring.store[("opsmate", "elasticsearch:default:username")] == "reader"
    cred = get_credential("elasticsearch", "prod")  # "default" serves every environment
    assert cred is not None and cred.basic_auth() == ("reader", SECRET)
    assert cred.headers()["Authorization"].startswith("Basic ")
    code, text = run_cli(["auth", "delete", "elasticsearch"], capsys, monkeypatch)
    assert code == 0 and "removed" in text
    assert get_credential("elasticsearch", "prod") is None
    code, text = run_cli(["auth", "delete", "elasticsearch"], capsys, monkeypatch)
    assert code == 0 and "no elasticsearch credential" in text


def test_env_var_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_credential("prometheus", "test") is None
    monkeypatch.setenv("OPSMATE_PROMETHEUS_TOKEN", "from-env")
    cred = get_credential("prometheus", "test")
    assert cred == Credential("prometheus", "test", "env", token="from-env")
    monkeypatch.setenv("OPSMATE_ELASTICSEARCH_API_KEY", "key-1")
    es = get_credential("elasticsearch", None)
    assert es is not None and es.headers() == {"Authorization": "ApiKey key-1"}
    monkeypatch.delenv("OPSMATE_ELASTICSEARCH_API_KEY")
    monkeypatch.setenv("OPSMATE_ELASTICSEARCH_USERNAME", "u")
    monkeypatch.setenv("OPSMATE_ELASTICSEARCH_PASSWORD", "p")
    es = get_credential("elasticsearch", "test")
    assert es is not None and es.basic_auth() == ("u", "p")


def test_keyring_wins_over_env(
    memory_keyring: MemoryKeyring, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPSMATE_PROMETHEUS_TOKEN", "from-env")
    memory_keyring.store[("opsmate", "prometheus:test")] = "from-keyring"
    cred = get_credential("prometheus", "test")
    assert cred is not None and cred.token == "from-keyring"


def test_no_keyring_backend_says_to_use_env_vars(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the tests' default backend is keyring's null backend: nothing can be stored
    code, text = run_cli(["auth", "set", "prometheus"], capsys, monkeypatch, SECRET)
    assert code == 2
    assert "no system keyring" in text and "OPSMATE_PROMETHEUS_TOKEN" in text
    assert SECRET not in text


def test_bad_source_and_empty_secret(
    memory_keyring: MemoryKeyring,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code, text = run_cli(["auth", "set", "grafana"], capsys, monkeypatch, SECRET)
    assert code == 2 and "prometheus, elasticsearch" in text
    code, text = run_cli(["auth", "set", "prometheus"], capsys, monkeypatch, "\n")
    assert code == 2 and "nothing stored" in text
    assert memory_keyring.store == {}
