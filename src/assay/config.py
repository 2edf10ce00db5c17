"""Project configuration: ``assay.toml`` or ``[tool.assay]`` in ``pyproject.toml``.

Every setting has a default, and every setting is validated here, once, when the file is loaded
(the ``[judge]`` and ``[bench]`` blocks and the judge's provider included): a typo or a bad value
is an error naming the file and the field before anything runs, and a key nobody knows is an
error too (a typo must not silently change a gate).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from assay import validate
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.models import ProviderConfig

DEFAULT_GOLDENS: Final = "goldens"
DEFAULT_BASELINE: Final = "assay-baseline.json"
# Committed with the project (not under .assay/, which is ignored): anyone may verify a record.
DEFAULT_ATTESTATIONS: Final = "assay-attestations"
DEFAULT_REGEX_TIMEOUT_S: Final = 0.1
# Saved runs kept under .assay/runs/ (the oldest go first); 0 keeps every run.
DEFAULT_KEEP_RUNS: Final = 200

_TOP_KEYS: Final = (
    "goldens",
    "baseline",
    "attestations",
    "keep_runs",
    "similarity",
    "regex_timeout_s",
    "min_pass_rate",
    "strict",
    "schemas",
    "gate",
    "judge",
    "bench",
    "agents",
)
AGENT_KEYS: Final = ("command", "journal", "no_network", "allow_read", "allow_endpoints", "env")
_JUDGE_KEYS: Final = ("verified", "provider", "rubric_prompt", "structured")
BENCH_KEYS: Final = ("cost_baseline_usd", "duration_baseline_s")
GATE_KEYS: Final = (
    "alpha",
    "score_tolerance",
    "max_repeats",
    "max_error_rate",
    "min_pass_rate",
    "min_score",
)


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

    alpha: float = 0.05
    score_tolerance: float = 0.0
    max_repeats: int | None = None
    max_error_rate: float = 0.0
    min_pass_rate: float | None = None
    min_score: float | None = None


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

    command: str
    journal: bool = True
    no_network: bool = False
    allow_read: tuple[str, ...] = ()
    allow_endpoints: tuple[str, ...] = ()
    env: tuple[str, ...] = ()


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

    verified: bool = False
    provider: ProviderConfig | None = None
    rubric_prompt: str | None = None
    source: str | None = None
    structured: bool = True


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
    goldens: Path
    baseline: Path
    attestations: Path
    keep_runs: int = DEFAULT_KEEP_RUNS
    similarity: str = "none"
    regex_timeout_s: float = DEFAULT_REGEX_TIMEOUT_S
    min_pass_rate: float | None = None
    gate: GateSettings = field(default_factory=GateSettings)
    strict: bool = False
    schemas: Mapping[str, Path] = field(default_factory=dict)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    bench: Mapping[str, float] = field(default_factory=dict)
    agents: Mapping[str, AgentSettings] = field(default_factory=dict)
    source: str | None = None


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    from assay.io import read_bytes

    data = read_bytes(path, ConfigError)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not valid UTF-8 (bad byte at offset {exc.start})", source=str(path)
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", source=str(path)) from None


def _similarity(value: Any, source: str) -> str:
    from assay.asserts._similarity import is_known_backend, known_backends_text

    name = validate.string(value, source=source, field="similarity")
    if not is_known_backend(name):
        raise ConfigError(
            f"unknown similarity backend {name!r} (use {known_backends_text()})",
            source=source,
            field="similarity",
        )
    return name


def _judge(value: Any, source: str) -> JudgeSettings:
    block = validate.table(value, source=source, field="judge")
    validate.known_keys(block, _JUDGE_KEYS, source=source, prefix="judge.")
    verified = block.get("verified", False)
    validate.boolean(verified, source=source, field="judge.verified")
    structured = block.get("structured", True)
    validate.boolean(structured, source=source, field="judge.structured")
    prompt = block.get("rubric_prompt")
    if prompt is not None:
        validate.string(prompt, source=source, field="judge.rubric_prompt")
    provider = None
    if "provider" in block:
        from assay.models import provider_config

        raw = validate.table(block["provider"], source=source, field="judge.provider")
        provider = provider_config(raw, source, "judge.provider")
    return JudgeSettings(verified, provider, prompt, source, structured)


def _bench(value: Any, source: str) -> dict[str, float]:
    block = validate.table(value, source=source, field="bench")
    validate.known_keys(block, BENCH_KEYS, source=source, prefix="bench.")
    return {
        key: validate.number(raw, source=source, field=f"bench.{key}", above=0)
        for key, raw in block.items()
    }


def _strings(value: Any, source: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError("must be a list of strings", source=source, field=field)
    return tuple(validate.string(v, source=source, field=field) for v in value)


def _read_path(raw: str, root: Path, source: str, field: str) -> str:
    if "\0" in raw:
        raise ConfigError("a path cannot hold a NUL byte", source=source, field=field)
    try:
        return str(root / Path(raw).expanduser())
    except RuntimeError:  # ~user of no such user, or no home at all
        raise ConfigError(
            f"cannot expand {raw!r}: no such home folder", source=source, field=field
        ) from None


def _agents(value: Any, source: str, root: Path) -> dict[str, AgentSettings]:
    block = validate.table(value, source=source, field="agents")
    out: dict[str, AgentSettings] = {}
    for name, raw in block.items():
        where = f"agents.{name}"
        if name in ("oracle", "noop"):
            raise ConfigError(
                f"{name!r} is a built-in agent; name yours otherwise", source=source, field=where
            )
        table = validate.table(raw, source=source, field=where)
        validate.known_keys(table, AGENT_KEYS, source=source, prefix=f"{where}.")
        if "command" not in table:
            raise ConfigError("an agent needs a command", source=source, field=f"{where}.command")
        command = validate.string(table["command"], source=source, field=f"{where}.command")
        flags = {
            key: validate.boolean(table[key], source=source, field=f"{where}.{key}")
            for key in ("journal", "no_network")
            if key in table
        }
        reads = _strings(table.get("allow_read", []), source, f"{where}.allow_read")
        endpoints = _strings(table.get("allow_endpoints", []), source, f"{where}.allow_endpoints")
        for endpoint in endpoints:
            host, sep, port = endpoint.rpartition(":")
            bare_ipv6 = ":" in host and not (host.startswith("[") and host.endswith("]"))
            if not sep or not host or bare_ipv6 or not port.isdigit() or not 0 < int(port) < 65536:
                raise ConfigError(
                    f"{endpoint!r} is not host:port (an IPv6 address in brackets: [::1]:8080)",
                    source=source,
                    field=f"{where}.allow_endpoints",
                )
        names = _strings(table.get("env", []), source, f"{where}.env")
        for variable in names:
            if not variable or "=" in variable or "\0" in variable:
                raise ConfigError(
                    f"{variable!r} is not a variable name", source=source, field=f"{where}.env"
                )
        out[name] = AgentSettings(
            command,
            flags.get("journal", True),
            flags.get("no_network", False),
            tuple(_read_path(r, root, source, f"{where}.allow_read") for r in reads),
            endpoints,
            names,
        )
    return out


def _gate(value: Any, source: str) -> GateSettings:
    block = validate.table(value, source=source, field="gate")
    validate.known_keys(block, GATE_KEYS, source=source, prefix="gate.")

    def fraction(key: str, above: float | None = None) -> float | None:
        """A number between 0 and 1 (``above`` 0 for alpha, which must leave room to fail)."""
        if key not in block:
            return None
        lowest = None if above is not None else 0.0
        return validate.number(
            block[key], source=source, field=f"gate.{key}", above=above, at_least=lowest, at_most=1
        )

    alpha = fraction("alpha", above=0)
    tolerance = fraction("score_tolerance")
    error_rate = fraction("max_error_rate")
    max_repeats = None
    if "max_repeats" in block:
        max_repeats = validate.integer(
            block["max_repeats"], source=source, field="gate.max_repeats", at_least=1
        )
    return GateSettings(
        alpha=0.05 if alpha is None else alpha,
        score_tolerance=0.0 if tolerance is None else tolerance,
        max_repeats=max_repeats,
        max_error_rate=0.0 if error_rate is None else error_rate,
        min_pass_rate=fraction("min_pass_rate"),
        min_score=fraction("min_score"),
    )


def _schemas(value: Any, source: str) -> dict[str, str]:
    """``[schemas]``: absolute URI -> file (relative to the project root)."""
    block = validate.table(value, source=source, field="schemas")
    out: dict[str, str] = {}
    for uri, path in block.items():
        field_name = f'schemas."{uri}"'
        scheme, sep, rest = uri.partition("://")
        if not sep or not scheme.isalpha() or not rest:
            raise ConfigError(
                "a registered schema's key must be an absolute URI (https://...)",
                source=source,
                field=field_name,
            )
        out[uri.rstrip("#")] = validate.string(path, source=source, field=field_name)
    return out


def _attestations(value: Any, source: str) -> str:
    """The attestation store folder, relative to the project root."""
    folder = validate.string(value, source=source, field="attestations")
    # Empty would store records among the project's own files; NUL is no path at all.
    if not folder.strip() or "\0" in folder:
        raise ConfigError(
            "must name a folder (default: assay-attestations)", source=source, field="attestations"
        )
    return folder


def _settings(raw: Mapping[str, Any], source: str, root: Path) -> dict[str, Any]:
    """Every key of the block, validated and converted."""
    validate.known_keys(dict(raw), _TOP_KEYS, source=source)
    out: dict[str, Any] = {}
    for key in ("goldens", "baseline"):
        if key in raw:
            out[key] = validate.string(raw[key], source=source, field=key)
    if "attestations" in raw:
        out["attestations"] = _attestations(raw["attestations"], source)
    if "keep_runs" in raw:
        out["keep_runs"] = validate.integer(
            raw["keep_runs"], source=source, field="keep_runs", at_least=0
        )
    if "similarity" in raw:
        out["similarity"] = _similarity(raw["similarity"], source)
    if "regex_timeout_s" in raw:
        out["regex_timeout_s"] = validate.number(
            raw["regex_timeout_s"], source=source, field="regex_timeout_s", above=0
        )
    if "min_pass_rate" in raw:
        out["min_pass_rate"] = validate.number(
            raw["min_pass_rate"], source=source, field="min_pass_rate", at_least=0, at_most=1
        )
    if "strict" in raw:
        out["strict"] = validate.boolean(raw["strict"], source=source, field="strict")
    if "gate" in raw:
        out["gate"] = _gate(raw["gate"], source)
        alias = out.get("min_pass_rate")
        if alias is not None and out["gate"].min_pass_rate is not None:
            raise ConfigError(
                "give min_pass_rate once: at the top level or in [gate], not both",
                source=source,
                field="gate.min_pass_rate",
            )
    if "schemas" in raw:
        out["schemas"] = _schemas(raw["schemas"], source)
    if "judge" in raw:
        out["judge"] = _judge(raw["judge"], source)
    if "bench" in raw:
        out["bench"] = _bench(raw["bench"], source)
    if "agents" in raw:
        out["agents"] = _agents(raw["agents"], source, root)
    return out


def _find(root: Path) -> tuple[dict[str, Any], str | None]:
    """The raw settings block and the name of where it came from."""
    toml = root / "assay.toml"
    pyproject = root / "pyproject.toml"
    if toml.is_file():
        return _read_toml(toml), str(toml)
    if not pyproject.is_file():
        return {}, None
    tool = _read_toml(pyproject).get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError("[tool] must be a table", source=str(pyproject), field="tool")
    block = tool.get("assay")
    if block is None:
        return {}, None
    if not isinstance(block, dict):
        raise ConfigError("[tool.assay] must be a table", source=str(pyproject))
    return block, f"{pyproject} [tool.assay]"


def load_config(root: Path | None = None) -> Config:
    """Read and validate the configuration of the project at ``root`` (default: the cwd).

    Raises:
        ConfigError: unreadable or invalid TOML, an unknown key, a bad value (naming the file
            and the field).
    """
    root = Path.cwd() if root is None else root
    raw, source = _find(root)
    settings = _settings(raw, source, root) if source is not None else {}
    gate = settings.get("gate", GateSettings())
    min_pass_rate = settings.get("min_pass_rate", gate.min_pass_rate)
    return Config(
        root=root,
        goldens=root / settings.get("goldens", DEFAULT_GOLDENS),
        baseline=root / settings.get("baseline", DEFAULT_BASELINE),
        attestations=root / settings.get("attestations", DEFAULT_ATTESTATIONS),
        keep_runs=settings.get("keep_runs", DEFAULT_KEEP_RUNS),
        similarity=settings.get("similarity", "none"),
        regex_timeout_s=settings.get("regex_timeout_s", DEFAULT_REGEX_TIMEOUT_S),
        min_pass_rate=min_pass_rate,
        gate=replace(gate, min_pass_rate=min_pass_rate),
        strict=settings.get("strict", False),
        schemas={uri: root / p for uri, p in settings.get("schemas", {}).items()},
        judge=settings.get("judge", JudgeSettings(source=source)),
        bench=settings.get("bench", {}),
        agents=settings.get("agents", {}),
        source=source,
    )
