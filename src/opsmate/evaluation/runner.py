"""Finding evaluation scenarios, running the engine on each, and scoring the reports.

A scenario is an incident bundle (directory or ``.tar.gz``, contracts section 2) that
carries ``expected.yaml``. :func:`discover` accepts bundles and folders of bundles;
with nothing named, :func:`default_scenario_paths` gives the built-in demo bundles
plus the repository's ``evals/scenarios/`` when it can be found (running from a
checkout); an installed package without the repository falls back to the demo
bundles only and says so.

Model specs are those of ``--model``. ``scripted:DIR`` (a folder rather than a file)
is an evaluation convenience: each scenario uses ``DIR/<scenario id>.yaml`` when it
exists, else ``DIR/default.yaml``; a scenario with neither runs with no model.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opsmate.errors import InputError
from opsmate.evaluation.scoring import ScenarioScore, failed_score, score_report
from opsmate.paths import demo_dir
from opsmate.tools.bundle.archive import is_archive

if TYPE_CHECKING:
    from opsmate.config import Settings
    from opsmate.tools.bundle import Bundle

# (bundle, model spec, settings) -> (report as contract JSON, full printed text)
Investigator = Callable[["Bundle", str, "Settings | None"], tuple[dict[str, Any], str]]


@dataclass(frozen=True)
class Scenario:
    """One scenario bundle to run; ``id`` is its directory (or archive) name."""

    id: str
    path: Path


@dataclass
class ScenarioResult:
    """A scenario's score plus what the run cost."""

    scenario: Scenario
    score: ScenarioScore
    status: str = "error"
    steps: int = 0
    seconds: float = 0.0
    tokens: int = 0
    stopped_by: str = ""
    model: str = "none"
    error: str | None = None
    report: dict[str, Any] | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)  # e.g. unknown answer-key keys

    @property
    def passed(self) -> bool:
        return self.error is None and self.score.passed

    @property
    def confidently_wrong(self) -> bool:
        """Said ``complete`` but its root cause misses what the answer key requires: worse
        than an honest ``partial``."""
        rc = self.score.checks.get("root_cause_found")
        return self.status == "complete" and rc is not None and not rc.passed

    def to_json(self) -> dict[str, Any]:
        """The per-scenario object of ``opsmate eval --json``."""
        return {
            "id": self.scenario.id,
            "path": str(self.scenario.path),
            "passed": self.passed,
            "checks": self.score.as_flags(),
            "details": {n: c.detail for n, c in self.score.checks.items()},
            "status": self.status,
            "steps": self.steps,
            "seconds": round(self.seconds, 3),
            "tokens": self.tokens,
            "stopped_by": self.stopped_by,
            "failures": ([f"error: {self.error}"] if self.error else []) + self.score.failures,
            "warnings": list(self.warnings),
            "confidently_wrong": self.confidently_wrong,
        }


# ----------------------------------------------------------------------------- discovery


def _is_bundle(path: Path) -> bool:
    return (path.is_dir() and (path / "bundle.yaml").is_file()) or is_archive(path)


def _scenario_id(path: Path) -> str:
    name = path.name
    for suffix in (".tar.gz", ".tgz", ".tar"):
        name = name.removesuffix(suffix)
    return name


def _has_expected(path: Path) -> bool:
    """Whether a bundle carries an answer key (archives are opened to look)."""
    if path.is_dir():
        return (path / "expected.yaml").is_file()
    import tarfile

    def parts(name: str) -> list[str]:
        return [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]

    try:
        with tarfile.open(path) as tar:
            # bundle.yaml sits at the top of the archive or in its one top folder
            return any(
                m.isfile() and parts(m.name)[-1:] == ["expected.yaml"] and len(parts(m.name)) <= 2
                for m in tar.getmembers()
            )
    except (tarfile.TarError, OSError) as exc:
        raise InputError(f"{path}: cannot read the archive: {exc}") from exc


def repo_scenarios_dir() -> Path | None:
    """``evals/scenarios`` of the checkout this package runs from (or the current dir)."""
    import opsmate

    here = Path(opsmate.__file__).resolve().parent  # <repo>/src/opsmate
    for base in (here.parent.parent, Path.cwd()):
        candidate = base / "evals" / "scenarios"
        if candidate.is_dir():
            return candidate
    return None


def default_scenario_paths() -> tuple[list[Path], str | None]:
    """The default suite and, when the repository's scenarios are absent, a note saying so."""
    paths = [demo_dir()]
    evals = repo_scenarios_dir()
    if evals is None:
        return paths, (
            "evals/scenarios not found (installed package, not a checkout): "
            "running the built-in demo bundles only"
        )
    return [*paths, evals], None


def discover(paths: Sequence[Path]) -> tuple[list[Scenario], list[str]]:
    """Scenarios named by ``paths`` (bundles or folders of them) and warnings.

    A bundle named directly must carry ``expected.yaml``; in a folder, bundles without
    one are skipped with a warning. Raises :class:`InputError` (exit 2) for a path that
    does not exist, a folder with no bundles, or when nothing is left to run.
    """
    found: list[Scenario] = []
    warnings: list[str] = []
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            raise InputError(f"{path}: no such scenario bundle or folder")
        if _is_bundle(path):
            if not _has_expected(path):
                raise InputError(
                    f"{path}: the bundle has no expected.yaml, so it cannot be scored",
                    hint="add an answer key (contracts section 2) or run it with opsmate diagnose",
                )
            found.append(Scenario(_scenario_id(path), path))
            continue
        if not path.is_dir():
            raise InputError(f"{path}: not a bundle (a directory with bundle.yaml or a .tar.gz)")
        children = sorted(p for p in path.iterdir() if _is_bundle(p))
        if not children:
            raise InputError(f"{path}: no scenario bundles found in this folder")
        for child in children:
            if _has_expected(child):
                found.append(Scenario(_scenario_id(child), child))
            else:
                warnings.append(f"{child}: skipped, no expected.yaml")
    if not found:
        raise InputError("no scenario with an expected.yaml to run")
    return _unique_ids(found), warnings


def _unique_ids(items: list[Scenario]) -> list[Scenario]:
    seen: dict[str, int] = {}
    out: list[Scenario] = []
    for s in items:
        n = seen.get(s.id, 0)
        seen[s.id] = n + 1
        out.append(s if n == 0 else Scenario(f"{s.id}#{n + 1}", s.path))
    return out


# ----------------------------------------------------------------------------- running


def model_for(spec: str, scenario_id: str) -> str:
    """Resolve ``scripted:DIR`` to the scenario's script (see the module docstring)."""
    kind, sep, rest = spec.partition(":")
    if kind.strip().lower() != "scripted" or not sep:
        return spec
    folder = Path(rest.strip()).expanduser()
    if not folder.is_dir():
        return spec
    for name in (f"{scenario_id}.yaml", f"{scenario_id}.json", "default.yaml", "default.json"):
        if (folder / name).is_file():
            return f"scripted:{folder / name}"
    return "none"


def engine_investigate(
    bundle: Bundle, model: str, settings: Settings | None = None
) -> tuple[dict[str, Any], str]:
    """One investigation through the engine's public API (:class:`~opsmate.agent.session.session.
    Session`), as ``opsmate diagnose --bundle`` runs it.

    The question and the environment constraint are the answer key's (``expected.yaml``
    ``question`` / ``env``), falling back to the bundle's. Budgets are the configured ones:
    ``max_steps`` of the answer key is checked, not imposed. Returns the report as the
    contract's JSON and the text a person or a script would see (JSON and Markdown).
    """
    from opsmate.agent.report.model import render_markdown
    from opsmate.agent.session.session import Session

    key = bundle.expected
    env = key.env if key is not None else None
    question = (key.question if key is not None else None) or bundle.question
    session = Session.open(settings=settings, bundle=bundle.source, model=model, env=env)
    try:
        report = session.ask(question)
    finally:
        _close(session)
    data = report.to_json()
    text = json.dumps(data, ensure_ascii=False, indent=2) + "\n" + render_markdown(report)
    return data, text


def _close(session: Any) -> None:
    for obj in (session, getattr(session, "model", None)):
        closer = getattr(obj, "close", None)
        if callable(closer):
            closer()
            return


def run_scenario(
    scenario: Scenario,
    model: str,
    settings: Settings | None = None,
    investigator: Investigator | None = None,
) -> ScenarioResult:
    """Run the engine on one scenario and score the report (never raises for a bad run)."""
    from opsmate.errors import OpsmateError
    from opsmate.tools.bundle import load_bundle

    spec = model_for(model, scenario.id)
    started = time.perf_counter()
    try:
        bundle = load_bundle(scenario.path)
        expected = bundle.expected
    except OpsmateError as exc:
        return ScenarioResult(scenario, failed_score(scenario.id, str(exc)), error=str(exc))
    if expected is None:  # checked by discover(); a bundle edited meanwhile
        msg = "no expected.yaml"
        return ScenarioResult(scenario, failed_score(scenario.id, msg), error=msg)
    warnings = [f"expected.yaml: unknown key '{key}' (ignored)" for key in expected.unknown_keys()]
    run = investigator or engine_investigate
    try:
        report, text = run(bundle, spec, settings)
    except Exception as exc:  # one broken scenario must not stop the suite
        seconds = time.perf_counter() - started
        msg = f"{type(exc).__name__}: {exc}"
        return ScenarioResult(
            scenario,
            failed_score(scenario.id, msg),
            seconds=seconds,
            model=spec,
            error=msg,
            warnings=warnings,
        )
    seconds = time.perf_counter() - started
    score = score_report(
        expected, report, text, scenario=scenario.id, runbooks_dir=bundle.runbooks_dir
    )
    budget = report.get("budget") or {}
    return ScenarioResult(
        scenario,
        score,
        status=str(report.get("status") or "error"),
        steps=int(budget.get("steps") or 0),
        seconds=seconds,
        tokens=int(budget.get("tokens") or 0),
        stopped_by=str(budget.get("stopped_by") or ""),
        model=spec,
        report=report,
        warnings=warnings,
    )


def run_suite(
    scenarios: Sequence[Scenario],
    model: str,
    settings: Settings | None = None,
    *,
    investigator: Investigator | None = None,
    on_result: Callable[[ScenarioResult], None] | None = None,
) -> list[ScenarioResult]:
    """Run every scenario in order; ``on_result`` sees each result as it is scored."""
    results = []
    for scenario in scenarios:
        result = run_scenario(scenario, model, settings, investigator)
        if on_result is not None:
            on_result(result)
        results.append(result)
    return results


def suite_json(results: Sequence[ScenarioResult], model: str) -> dict[str, Any]:
    """``opsmate eval --json``: ``{"model", "scenarios": [...], "passed", "failed",
    "pass_rate", "confidently_wrong", "partial_failures"}`` — a failure that says
    ``complete`` with a wrong root cause is counted apart from an honest partial one."""
    passed = sum(1 for r in results if r.passed)
    total = len(results)
    wrong = sum(1 for r in results if not r.passed and r.confidently_wrong)
    return {
        "model": model,
        "scenarios": [r.to_json() for r in results],
        "passed": passed,
        "failed": total - passed,
        "pass_rate": round(passed / total, 4) if total else 0.0,
        "confidently_wrong": wrong,
        "partial_failures": sum(1 for r in results if not r.passed and r.status != "complete"),
    }


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)
