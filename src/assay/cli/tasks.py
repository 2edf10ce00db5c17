"""``assay tasks list`` / ``assay tasks show``: the agent tasks, packaged ones included."""

from __future__ import annotations

import click

from assay.paths import shown_path
from assay.vocabulary import TIERS


@click.group("tasks")
def tasks_group() -> None:
    """The agent tasks a project can run (its own and the packaged ones)."""


@tasks_group.command("list")
@click.option(
    "-t", "--tier", "tiers", multiple=True, type=click.Choice(TIERS), help="Only these tiers."
)
def list_command(tiers: tuple[str, ...]) -> int:
    """Ids, tiers, titles and paths of the tasks."""
    from assay.agent import all_tasks
    from assay.config import load_config

    tasks = all_tasks(load_config().goldens, tiers or None)
    if not tasks:
        click.echo("no tasks")
        return 0
    width = max(len(t.golden.id) for t in tasks)
    for task in tasks:
        title = task.golden.fields.get("title") or ""
        where = "packaged: " if task.packaged else ""
        place = shown_path(task.folder or task.path)
        click.echo(f"{task.golden.id:<{width}}  {task.golden.tier:<11}  {title}  ({where}{place})")
    return 0


@tasks_group.command("show")
@click.argument("task_id")
def show_command(task_id: str) -> int:
    """One task: where it is, its instruction, verify command, signals and limits."""
    from assay.agent import find_task
    from assay.config import load_config

    task = find_task(task_id, load_config().goldens)
    golden = task.golden
    fields = golden.fields
    instruction = golden.input if isinstance(golden.input, str) else repr(golden.input)
    where = shown_path(task.folder or task.path) + (" (packaged)" if task.packaged else "")
    lines = [
        f"{golden.id}: {fields.get('title') or '(no title)'}",
        f"  tier: {golden.tier}",
        f"  path: {where}",
        f"  instruction: {instruction}",
    ]
    if fields.get("verify"):
        lines.append(f"  verify: {fields['verify']}")
    for signal in fields.get("completion_signals") or []:
        text = f"{signal['name']}: `{signal['run']}`" if isinstance(signal, dict) else signal
        lines.append(f"  signal: {text}")
    for name in ("owned_files", "expected_files_modified"):
        if fields.get(name):
            lines.append(f"  {name}: {', '.join(fields[name])}")
    for name in ("max_duration_s", "max_cost_usd"):
        if fields.get(name) is not None:
            lines.append(f"  {name}: {fields[name]:g}")
    if task.folder is not None:
        for part in ("repo", "solution.sh"):
            present = (task.folder / part).exists()
            lines.append(f"  {part}: {'yes' if present else 'missing'}")
    click.echo("\n".join(lines))
    return 0
