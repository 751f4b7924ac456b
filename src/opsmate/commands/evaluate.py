"""``opsmate eval``: run scenario bundles that carry ``expected.yaml`` and score them.

- ``SCENARIO...``: bundles (directories or ``.tar.gz``) or folders of them; default:
  the built-in demo bundles plus ``evals/scenarios/`` of the checkout (the demo bundles
  alone when the package is installed without the repository; a note says so).
- ``--model SPEC``: as for ``diagnose`` (``scripted:DIR`` picks ``DIR/<id>.yaml`` per
  scenario, see :mod:`opsmate.evaluation.runner`); the configured model when absent.
- Output: a table (scenario, each check ✓/✗, steps, seconds, status) and the reasons
  for every failure; ``--json``: ``{"model", "scenarios": [{id, passed, checks, status,
  steps, seconds, failures, ...}], "passed", "failed", "pass_rate"}`` on stdout.
- Exit code 0 when every scenario passes, 1 when any fails, 2 for bad input (a folder
  with no bundles, a named bundle without ``expected.yaml``, a bad model spec).
"""

from __future__ import annotations

import sys
from pathlib import Path

from opsmate.config import load_settings
from opsmate.errors import ExitCode, ModelError
from opsmate.evaluation.runner import (
    ScenarioResult,
    default_scenario_paths,
    discover,
    dumps,
    run_suite,
    suite_json,
)
from opsmate.evaluation.scoring import CHECKS

SHORT = {  # column headers; the legend under the table spells them out
    "root_cause_found": "RC",
    "runbook_cited": "RB",
    "no_forbidden_env": "ENV",
    "citations_valid": "CIT",
    "no_secret_leak": "SEC",
    "steps_within_max": "MAX",
    "status_as_expected": "ST",
    "must_not_mention": "NM",
}


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def check_model_spec(spec: str) -> None:
    """Fail early (exit 2) for a spec that could not load for any scenario."""
    from opsmate.llm.base import parse_model_spec

    ms = parse_model_spec(spec)
    if ms.kind in ("scripted", "gguf") and ms.path is not None and not ms.path.exists():
        raise ModelError(
            f"{ms.kind} model not found: {ms.path}",
            hint="opsmate never downloads models; --model none runs without one",
        )
    if ms.kind == "gguf" and ms.path is not None and ms.path.is_dir():
        raise ModelError(f"gguf model path is a directory: {ms.path}")


def render_table(results: list[ScenarioResult], model: str) -> None:
    """The rich table of results, then each failure's reason."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console() if sys.stdout.isatty() else Console(width=160)
    table = Table(title=f"opsmate eval · model {model}", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("scenario", no_wrap=True, overflow="ellipsis")
    for name in CHECKS:
        table.add_column(SHORT[name], justify="center", no_wrap=True)
    table.add_column("steps", justify="right")
    table.add_column("seconds", justify="right")
    table.add_column("status")
    for r in results:
        flags = r.score.as_flags()
        marks = ["[green]✓[/]" if flags.get(n) else "[red]✗[/]" for n in CHECKS]
        name = f"[green]{r.scenario.id}[/]" if r.passed else f"[red]{r.scenario.id}[/]"
        table.add_row(name, *marks, str(r.steps), f"{r.seconds:.2f}", r.status)
    console.print(table)
    legend = " · ".join(f"{SHORT[n]} {n}" for n in CHECKS)
    console.print(legend, style="dim", highlight=False)
    failing = [r for r in results if not r.passed]
    for r in failing:
        console.print(f"[bold red]✗ {r.scenario.id}[/]")
        reasons = ([f"error: {r.error}"] if r.error else []) + r.score.failures
        for reason in reasons:
            console.print(f"    {reason}", markup=False, highlight=False)
    passed = len(results) - len(failing)
    rate = passed / len(results) if results else 0.0
    wrong = sum(1 for r in failing if r.confidently_wrong)
    console.print(
        f"{passed}/{len(results)} scenarios passed ({rate:.0%}); {wrong} of the failures "
        "said complete with a wrong root cause (confidently wrong)"
    )


def run_eval(
    *,
    scenarios: list[Path],
    model: str | None,
    json_out: bool,
    config_path: Path | None,
) -> None:
    """Run and score the scenarios; exit 1 when any scenario fails."""
    import typer

    settings = load_settings(config_path)
    spec = (model if model is not None else settings.model) or "none"
    check_model_spec(spec)
    paths = list(scenarios)
    if not paths:
        paths, note = default_scenario_paths()
        if note:
            _err(f"note: {note}")
    found, warnings = discover(paths)
    for w in warnings:
        _err(f"warning: {w}")
    total = len(found)
    counter = [0]

    def progress(result: ScenarioResult) -> None:
        for w in result.warnings:
            _err(f"warning: {result.scenario.id}: {w}")
        counter[0] += 1
        mark = "✓" if result.passed else "✗"
        _err(
            f"[{counter[0]}/{total}] {mark} {result.scenario.id} "
            f"({result.status}, {result.steps} steps, {result.seconds:.2f} s)"
        )

    results = run_suite(found, spec, settings, on_result=progress)
    if json_out:
        sys.stdout.write(dumps(suite_json(results, spec)) + "\n")
        sys.stdout.flush()
    else:
        render_table(results, spec)
    if any(not r.passed for r in results):
        raise typer.Exit(int(ExitCode.PARTIAL))
