"""``assay attest keygen|seal|verify``: clean-run attestation commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.cli._options import json_option, key_file_option, path_option
from assay.views import dump_json

if TYPE_CHECKING:
    from assay.attest import Verification


@click.group("attest")
def attest_group() -> None:
    """Clean-run attestation: prove the agent never saw the answer."""


@attest_group.command("keygen")
@key_file_option()
def keygen_command(key_file: Path | None) -> int:
    """Create a new 32-byte HMAC key (mode 0600); never overwrites one."""
    from assay.attest import keygen, resolve_key_path

    path = resolve_key_path(key_file)
    kid = keygen(path)
    click.echo(f"key written to {path} (key id {kid})")
    return 0


@attest_group.command("seal")
@click.argument("goldens", type=click.Path(path_type=Path), required=False)
@click.option(
    "--task",
    "task_id",
    required=True,
    help="The task id (a golden under GOLDENS, else the project's or a packaged task).",
)
@path_option("--journal", required=True, help="The run's hash-chained journal (JSONL).")
@path_option(
    "--worktree", required=True, help="The agent's worktree (paths outside it are out of scope)."
)
@click.option("--allow-endpoint", "allow", multiple=True, help="An allowed host:port.")
@click.option("--run-id", help="The run id to record.")
@key_file_option()
@json_option()
def seal_command(
    goldens: Path | None,
    task_id: str,
    journal: Path,
    worktree: Path,
    allow: tuple[str, ...],
    run_id: str | None,
    key_file: Path | None,
    as_json: bool,
) -> int:
    """Seal a CLEAN or DIRTY verdict for one task's run (exit 0 whatever the verdict)."""
    from assay.attest import load_key, resolve_key_path, seal
    from assay.config import load_config
    from assay.goldens import iter_goldens, packaged_root

    key = load_key(resolve_key_path(key_file))
    config = load_config()  # the store folder (``attestations``), and the goldens below
    tasks = list(iter_goldens(goldens)) if goldens is not None else []
    if goldens is None or not any(t.id == task_id for t in tasks):
        # Not under GOLDENS (or none given): the project's tasks, then the packaged ones.
        from assay.agent import find_task

        project = goldens or config.goldens
        entry = find_task(task_id, project)
        tasks, goldens = [entry.golden], packaged_root() if entry.packaged else project
    sealed = seal(
        Path.cwd(),
        tasks,
        goldens,
        task_id,
        journal,
        worktree,
        list(allow),
        run_id,
        key,
        folder=config.attestations,
    )
    if as_json:
        document = {name: getattr(sealed, name) for name in ("id", "verdict", "events", "matches")}
        click.echo(dump_json(document), nl=False)
    else:
        click.echo(
            f"{sealed.id} {sealed.verdict} ({sealed.events} events, "
            f"{len(sealed.matches)} match(es))"
        )
        for match in sealed.matches:
            click.echo(f"  event {match['event']}: {match['class']}")
    return 0


@attest_group.command("verify")
@click.argument("attestation_id")
@path_option(
    "--journal", help="Also check the journal chains to the recorded head and matches the record."
)
@key_file_option()
@json_option("Print {ok, reason, id, verdict, isolation, evidence, notes}.")
def verify_command(
    attestation_id: str, journal: Path | None, key_file: Path | None, as_json: bool
) -> int:
    """Re-verify an attestation offline (exit 0 valid, 1 invalid).

    ATTESTATION_ID is sha256:<64 hex> as seal prints it, or the 64 hex digits alone.
    """
    from assay.attest import load_key, parse_id, resolve_key_path, verify
    from assay.config import load_config
    from assay.errors import AssayError

    # A malformed id is a usage error, not a verdict on some record: one line, exit 1.
    if parse_id(attestation_id) is None:
        raise AssayError(
            f"not an attestation id: {attestation_id!r} (sha256:<64 hex digits>, or the hex alone)"
        )
    key = load_key(resolve_key_path(key_file))
    config = load_config()
    result = verify(config.root, attestation_id, key, journal, folder=config.attestations)
    if as_json:
        click.echo(dump_json(result.to_dict()), nl=False)
    else:
        for line in verification_lines(result):
            click.echo(line)
    return 0 if result.ok else 1


def verification_lines(result: Verification) -> list[str]:
    """The text of ``attest verify``: the verdict; for a valid record what it states of its
    isolation and where each match was seen; then any note of damage after its entries."""
    if not result.ok:
        lines = [f"invalid: {result.id}: {result.reason}"]
    else:
        lines = [f"valid: {result.id} {result.verdict}", f"isolation: {_isolation(result)}"]
        lines += [f"  event {e['event']}: {e['class']}: {e['where']}" for e in result.evidence]
    return lines + [f"note: {note}" for note in result.notes]


def _isolation(result: Verification) -> str:
    """``bubblewrap (not mounted: /a, /b)``; ``not recorded`` for a record that states none."""
    if result.isolation is None:
        return "not recorded"
    kind, hidden = result.isolation["kind"], result.isolation["not_mounted"]
    return f"{kind} (not mounted: {', '.join(hidden)})" if hidden else str(kind)
