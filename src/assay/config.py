"""Project configuration: ``assay.toml`` or ``[tool.assay]`` in ``pyproject.toml``.

Every setting has a default and a rule, declared once on the dataclass it fills (see
:mod:`assay.validate`), and is validated when the file is loaded (the ``[judge]`` and ``[bench]``
blocks and the judge's provider included): a bad value is an error naming the file, the line and
the field before anything runs, and a key nobody knows is an error too, naming its near miss (a
typo must not silently change a gate).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay import validate as v
from assay.errors import ConfigError
from assay.validate import At, Key

if TYPE_CHECKING:
    from assay.models import ProviderConfig

DEFAULT_GOLDENS: Final = "goldens"
DEFAULT_BASELINE: Final = "assay-baseline.json"
# Committed with the project (not under .assay/, which is ignored): anyone may verify a record.
DEFAULT_ATTESTATIONS: Final = "assay-attestations"
DEFAULT_REGEX_TIMEOUT_S: Final = 0.1
# Saved runs kept under .assay/runs/ (the oldest go first); 0 keeps every run.
DEFAULT_KEEP_RUNS: Final = 200
_FRACTION: Final = v.Num(at_least=0, at_most=1)
_STRINGS: Final = v.List(v.Str(), message="must be a list of strings")
_TABLE: Final = v.Dict(message="must be a table")


def _endpoint(value: Any, at: At, key: Key) -> str:
    endpoint = v.Str().check(value, at, key)
    host, sep, port = endpoint.rpartition(":")
    bare_ipv6 = ":" in host and not (host.startswith("[") and host.endswith("]"))
    if not sep or not host or bare_ipv6 or not port.isdigit() or not 0 < int(port) < 65536:
        at.fail(f"{endpoint!r} is not host:port (an IPv6 address in brackets: [::1]:8080)", key)
    return endpoint


def _variable(value: Any, at: At, key: Key) -> str:
    name = v.Str().check(value, at, key)
    if not name or "=" in name or "\0" in name:
        at.fail(f"{name!r} is not a variable name", key)
    return name


def _provider(value: Any, at: At, key: Key) -> ProviderConfig:
    from assay.models import provider_config

    return provider_config(_TABLE.check(value, at, key), at.source or "", at.path(key))


@dataclass(frozen=True, slots=True)
class GateSettings:
    """The ``[gate]`` block: when a check against the baseline fails.

    Attributes:
        alpha: the significance level of the statistical comparison of random outcomes (the
            false-alarm rate the gate allows itself).
        score_tolerance: how far below its baseline score a deterministic score may fall
            before it is a regression.
        max_repeats: adaptive repeats: undecided goldens of a live run get more trials, up to
            this many in all (None: no adaptive repeats).
        max_error_rate: the fraction of results that may be errors (failed calls, judge errors)
            before the run cannot decide (exit 1).
        min_pass_rate: a run with a candidate below this pass rate fails the gate.
        min_score: an agent run whose composite score is below this fails the gate.
    """

    alpha: float = v.rule(v.Num(above=0, at_most=1), 0.05)
    score_tolerance: float = v.rule(_FRACTION, 0.0)
    max_repeats: int | None = v.rule(v.Int(at_least=1), None)
    max_error_rate: float = v.rule(_FRACTION, 0.0)
    min_pass_rate: float | None = v.rule(_FRACTION, None)
    min_score: float | None = v.rule(_FRACTION, None)


@dataclass(frozen=True, slots=True)
class AgentSettings:
    """One ``[agents.NAME]`` block: an agent command with its settings (``--agent NAME``).

    Attributes:
        command: the shell command that runs the agent in its worktree.
        journal: run it under strace and seal its journal (``--no-journal`` turns it off).
        no_network: run it in a network namespace of its own.
        allow_read: paths outside the worktree it may open (its install, its config), absolute
            or relative to the project root, ``~`` expanded.
        allow_endpoints: ``host:port`` endpoints it may connect to (its model API).
        env: names of the caller's environment variables passed on to the agent (its API key):
            the sandbox's environment holds no other variable of the caller's.
    """

    command: str = field(metadata={"rule": v.Str(required="an agent needs a command")})
    journal: bool = v.rule(v.Bool(), True)
    no_network: bool = v.rule(v.Bool(), False)
    allow_read: tuple[str, ...] = v.rule(_STRINGS, ())
    allow_endpoints: tuple[str, ...] = v.rule(
        v.List(v.Check(_endpoint), message=_STRINGS.message), ()
    )
    env: tuple[str, ...] = v.rule(v.List(v.Check(_variable), message=_STRINGS.message), ())


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """The ``[judge]`` block: the tier 3 adapter's settings.

    Attributes:
        verified: the judge runs without ``--judge`` only once this is true.
        provider: the model that grades (``[judge.provider]``), None when not configured.
        rubric_prompt: the grading prompt template, None for the built-in one.
        source: the config file the block came from (named in the judge's errors).
        structured: ask an openai-type judge for a JSON verdict through ``response_format``
            (a JSON schema the server constrains the reply to); false for a server that does
            not support it.
    """

    verified: bool = v.rule(v.Bool(), False)
    provider: ProviderConfig | None = v.rule(v.Check(_provider), None)  # noqa: RUF009 (a Field)
    rubric_prompt: str | None = v.rule(v.Str(), None)
    source: str | None = None
    structured: bool = v.rule(v.Bool(), True)


def _similarity(value: Any, at: At, key: Key) -> str:
    from assay.asserts import is_known_backend, known_backends_text

    name = v.Str().check(value, at, key)
    if not is_known_backend(name):
        at.fail(f"unknown similarity backend {name!r} (use {known_backends_text()})", key)
    return name


def _attestations(value: Any, at: At, key: Key) -> str:
    """The attestation store folder, relative to the project root."""
    folder = v.Str().check(value, at, key)
    # Empty would store records among the project's own files; NUL is no path at all.
    if not folder.strip() or "\0" in folder:
        at.fail("must name a folder (default: assay-attestations)", key)
    return folder


def _schemas(value: Any, at: At, key: Key) -> dict[str, str]:
    """``[schemas]``: absolute URI -> file (relative to the project root)."""
    out: dict[str, str] = {}
    for uri, path in _TABLE.check(value, at, key).items():
        where = f'{key}."{uri}"'
        scheme, sep, rest = uri.partition("://")
        if not sep or not scheme.isalpha() or not rest:
            at.fail("a registered schema's key must be an absolute URI (https://...)", where)
        out[uri.rstrip("#")] = v.Str().check(path, at, where)
    return out


_AGENT: Final = v.Table.of(AgentSettings)


def _agents(value: Any, at: At, key: Key) -> dict[str, AgentSettings]:
    inner = at.sub(key)
    out: dict[str, AgentSettings] = {}
    for name, raw in _TABLE.check(value, at, key).items():
        if name in ("oracle", "noop"):
            inner.fail(f"{name!r} is a built-in agent; name yours otherwise", name)
        out[name] = AgentSettings(**_AGENT.check(raw, inner, name))
    return out


_BENCH: Final = v.Table(
    {"cost_baseline_usd": v.Num(above=0), "duration_baseline_s": v.Num(above=0)}
)


def _block(settings: type[Any]) -> v.Check:
    """A ``[block]`` of the fields ``settings`` declares, read into a ``settings``."""
    table = v.Table.of(settings)
    return v.Check(lambda value, at, key: settings(**table.check(value, at, key)))


@dataclass(frozen=True, slots=True)
class Config:
    """Resolved, validated settings.

    Attributes:
        root: the project root (where the config file is, else the working directory).
        goldens: the project's goldens folder.
        baseline: the committed baseline file.
        attestations: the committed folder ``assay attest seal`` and ``--agent`` runs store
            attestation records (and their lineage and audit log) in, and ``verify`` reads.
        keep_runs: how many saved runs ``.assay/runs/`` keeps (the oldest are removed after
            each save); 0 keeps them all.
        keep_outputs: whether saved gate and eval runs keep each result's output (and its
            failing repeats' answers) for ``assay view``; off by default, as an output may
            quote the expected answer.
        similarity: the tier 2 backend name.
        regex_timeout_s: time budget of one regex search.
        min_pass_rate: when set, a run whose pass rate is below it fails the gate (exit 2);
            the same as ``gate.min_pass_rate``.
        gate: the validated [gate] block.
        schemas: remote JSON Schema URIs a ``$ref`` may name, each served from a local file
            (``[schemas]``; nothing is ever fetched).
        strict: every unknown golden frontmatter key is an error (by default only near misses
            of a known field are; other keys are kept as metadata).
        judge: the validated [judge] block.
        bench: the validated [bench] block (agent benchmark baselines; only the keys given).
        agents: the named agent commands of ``[agents.NAME]`` blocks.
        source: the file the settings came from, if any.
    """

    root: Path
    goldens: Path = field(metadata={"rule": v.Str()})
    baseline: Path = field(metadata={"rule": v.Str()})
    attestations: Path = field(metadata={"rule": v.Check(_attestations)})
    keep_runs: int = v.rule(v.Int(at_least=0), DEFAULT_KEEP_RUNS)
    keep_outputs: bool = v.rule(v.Bool(), False)
    similarity: str = v.rule(v.Check(_similarity), "none")
    regex_timeout_s: float = v.rule(v.Num(above=0), DEFAULT_REGEX_TIMEOUT_S)
    min_pass_rate: float | None = v.rule(_FRACTION, None)
    gate: GateSettings = v.rule(_block(GateSettings), factory=GateSettings)  # noqa: RUF009
    strict: bool = v.rule(v.Bool(), False)
    schemas: Mapping[str, Path] = v.rule(v.Check(_schemas), factory=dict)
    judge: JudgeSettings = v.rule(_block(JudgeSettings), factory=JudgeSettings)  # noqa: RUF009
    bench: Mapping[str, float] = v.rule(_BENCH, factory=dict)
    agents: Mapping[str, AgentSettings] = v.rule(v.Check(_agents), factory=dict)
    source: str | None = None


# Every key of the settings block: the fields of Config that have a rule.
_SETTINGS: Final = v.Table.of(Config)


def _read_toml(path: Path) -> tuple[dict[str, Any], str]:
    import tomllib

    from assay.io import read_text

    text = read_text(path, ConfigError)  # UTF-8, a leading BOM dropped, as every file assay reads
    try:
        return tomllib.loads(text), text
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", source=str(path)) from None


def _read_path(raw: str, root: Path, at: At, key: str) -> str:
    if "\0" in raw:
        at.fail("a path cannot hold a NUL byte", key)
    try:
        return str(root / Path(raw).expanduser())
    except RuntimeError:  # ~user of no such user, or no home at all
        at.fail(f"cannot expand {raw!r}: no such home folder", key)


def _settings(raw: Mapping[str, Any], source: str, root: Path) -> dict[str, Any]:
    """Every key of the block, validated and converted; the paths an agent may read resolved
    against the project root."""
    at = At(source)
    out = _SETTINGS.check(raw, at)
    gate = out.get("gate")
    if "min_pass_rate" in out and gate is not None and gate.min_pass_rate is not None:
        at.fail(
            "give min_pass_rate once: at the top level or in [gate], not both", "gate.min_pass_rate"
        )
    for name, agent in out.get("agents", {}).items():
        where = at.sub(f"agents.{name}")
        reads = tuple(_read_path(r, root, where, "allow_read") for r in agent.allow_read)
        out["agents"][name] = replace(agent, allow_read=reads)
    return out


def _find(root: Path) -> tuple[dict[str, Any], str | None, str, str]:
    """The raw settings block, the name of where it came from, the file's text and the table
    the block is in (for the line of a field in an error)."""
    toml = root / "assay.toml"
    pyproject = root / "pyproject.toml"
    if toml.is_file():
        data, text = _read_toml(toml)
        return data, str(toml), text, ""
    if not pyproject.is_file():
        return {}, None, "", ""
    data, text = _read_toml(pyproject)
    at = At(str(pyproject))
    tool = v.Dict(message="[tool] must be a table").check(data.get("tool", {}), at, "tool")
    if tool.get("assay") is None:
        return {}, None, "", ""
    block = v.Dict(message="[tool.assay] must be a table").check(tool["assay"], at)
    return block, f"{pyproject} [tool.assay]", text, "tool.assay"


def load_config(root: Path | None = None) -> Config:
    """Read and validate the configuration of the project at ``root`` (default: the cwd).

    Raises:
        ConfigError: unreadable or invalid TOML, an unknown key (with its near miss), a bad
            value (naming the file, the line and the field).
    """
    root = Path.cwd() if root is None else root
    raw, source, text, prefix = _find(root)
    try:
        settings = _settings(raw, source, root) if source is not None else {}
    except ConfigError as exc:
        raise v.located(exc, v.toml_line(text, exc.field, prefix)) from None
    gate = settings.get("gate", GateSettings())
    min_pass_rate = settings.get("min_pass_rate", gate.min_pass_rate)
    paths = (
        ("goldens", DEFAULT_GOLDENS),
        ("baseline", DEFAULT_BASELINE),
        ("attestations", DEFAULT_ATTESTATIONS),
    )
    settings |= {name: root / settings.get(name, default) for name, default in paths}
    settings["schemas"] = {uri: root / p for uri, p in settings.get("schemas", {}).items()}
    settings["judge"] = replace(settings.get("judge", JudgeSettings()), source=source)
    gate = replace(gate, min_pass_rate=min_pass_rate)
    return Config(root, **{**settings, "min_pass_rate": min_pass_rate, "gate": gate}, source=source)
