"""The ``[agents.NAME]`` blocks of the configuration (``assay.config``: ``_agents``,
``AgentSettings``, ``load_config``): named agent commands, their sandbox settings, and every
bad value an error naming the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay import validate as v
from assay.config import AgentSettings, load_config
from assay.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_a_full_block_is_validated_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(
        tmp_path / "assay.toml",
        "[agents.mine]\n"
        "command = \"my-agent --model x 'a b'\"\n"
        "journal = false\n"
        "no_network = true\n"
        'allow_read = ["tools/bin", "~/.config/my-agent", "/opt/agent"]\n'
        'allow_endpoints = ["api.example.com:443", "127.0.0.1:8080", "[::1]:11434"]\n',
    )
    config = load_config(tmp_path)
    assert dict(config.agents) == {
        "mine": AgentSettings(
            command="my-agent --model x 'a b'",
            journal=False,
            no_network=True,
            allow_read=(
                str(tmp_path / "tools" / "bin"),  # relative: against the project root
                str(home / ".config" / "my-agent"),  # ~ expanded
                "/opt/agent",  # absolute: as given
            ),
            allow_endpoints=("api.example.com:443", "127.0.0.1:8080", "[::1]:11434"),
        )
    }


def test_only_a_command_takes_the_defaults(tmp_path: Path) -> None:
    write(
        tmp_path / "assay.toml",
        '[agents.a]\ncommand = "agent-a"\n\n[agents.b]\ncommand = "agent-b"\njournal = true\n',
    )
    config = load_config(tmp_path)
    assert dict(config.agents) == {
        "a": AgentSettings("agent-a"),
        "b": AgentSettings("agent-b"),
    }
    settings = config.agents["a"]
    assert settings.journal is True
    assert settings.no_network is False
    assert settings.allow_read == ()
    assert settings.allow_endpoints == ()


def test_no_agents_block_is_no_agents(tmp_path: Path) -> None:
    write(tmp_path / "assay.toml", 'goldens = "cases"\n')
    assert dict(load_config(tmp_path).agents) == {}


def test_the_block_works_in_pyproject_too(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[tool.assay.agents.mine]\ncommand = "run-it"\nallow_read = ["vendor"]\n',
    )
    config = load_config(tmp_path)
    assert config.agents["mine"] == AgentSettings("run-it", allow_read=(str(tmp_path / "vendor"),))


def test_the_known_keys_are_the_settings() -> None:
    assert tuple(v.Table.of(AgentSettings).fields) == (
        "command",
        "journal",
        "no_network",
        "allow_read",
        "allow_endpoints",
        "env",
    )


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (
            "[agents.mine]\ncommand = 'x'\ntimeout = 5\n",
            "agents.mine.timeout",
            "unknown setting (known: allow_endpoints, allow_read, command, env, journal, "
            "no_network)",
        ),
        (
            "[agents.mine]\njournal = false\n",
            "agents.mine.command",
            "an agent needs a command",
        ),
        ("[agents.mine]\ncommand = ['x']\n", "agents.mine.command", "must be a string"),
        (
            "[agents.mine]\ncommand = 'x'\njournal = 'no'\n",
            "agents.mine.journal",
            "must be true or false",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nno_network = 1\n",
            "agents.mine.no_network",
            "must be true or false",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_read = '/opt'\n",
            "agents.mine.allow_read",
            "must be a list of strings",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_read = ['/opt', 3]\n",
            "agents.mine.allow_read",
            "must be a string",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = 'api:443'\n",
            "agents.mine.allow_endpoints",
            "must be a list of strings",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = ['api.example.com']\n",
            "agents.mine.allow_endpoints",
            "'api.example.com' is not host:port (an IPv6 address in brackets: [::1]:8080)",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = ['api.example.com:']\n",
            "agents.mine.allow_endpoints",
            "'api.example.com:' is not host:port (an IPv6 address in brackets: [::1]:8080)",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = [':443']\n",
            "agents.mine.allow_endpoints",
            "':443' is not host:port (an IPv6 address in brackets: [::1]:8080)",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = ['api:https']\n",
            "agents.mine.allow_endpoints",
            "'api:https' is not host:port (an IPv6 address in brackets: [::1]:8080)",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = ['::1']\n",
            "agents.mine.allow_endpoints",
            "'::1' is not host:port (an IPv6 address in brackets: [::1]:8080)",
        ),
        (
            "[agents.mine]\ncommand = 'x'\nallow_endpoints = ['h:99999']\n",
            "agents.mine.allow_endpoints",
            "'h:99999' is not host:port (an IPv6 address in brackets: [::1]:8080)",
        ),
        (
            "[agents.oracle]\ncommand = 'x'\n",
            "agents.oracle",
            "'oracle' is a built-in agent; name yours otherwise",
        ),
        (
            "[agents.noop]\ncommand = 'x'\n",
            "agents.noop",
            "'noop' is a built-in agent; name yours otherwise",
        ),
        ("agents = 1\n", "agents", "must be a table"),
        ("[agents]\nmine = 'my-agent'\n", "agents.mine", "must be a table"),
    ],
    ids=[
        "unknown-key",
        "missing-command",
        "command-not-string",
        "journal-not-bool",
        "no-network-not-bool",
        "allow-read-not-list",
        "allow-read-not-strings",
        "allow-endpoints-not-list",
        "endpoint-without-port",
        "endpoint-empty-port",
        "endpoint-without-host",
        "endpoint-port-not-number",
        "endpoint-bare-ipv6",
        "endpoint-port-out-of-range",
        "oracle",
        "noop",
        "agents-not-table",
        "agent-not-table",
    ],
)
def test_a_bad_block_names_the_file_and_the_field(
    tmp_path: Path, text: str, field: str, message: str
) -> None:
    path = write(tmp_path / "assay.toml", text)
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == field
    assert excinfo.value.message == message
    assert excinfo.value.source == str(path)
    assert str(excinfo.value) == f"{path}:{excinfo.value.line}: field '{field}': {message}"


def test_the_bad_agent_is_named_among_good_ones(tmp_path: Path) -> None:
    write(
        tmp_path / "assay.toml",
        "[agents.good]\ncommand = 'ok'\n\n[agents.bad]\ncommand = 'x'\nallow_reed = []\n",
    )
    with pytest.raises(ConfigError) as excinfo:
        load_config(tmp_path)
    assert excinfo.value.field == "agents.bad.allow_reed"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "~no-such-user-anywhere/x",
            "cannot expand '~no-such-user-anywhere/x': no such home folder",
        ),
        ("a\\u0000b", "a path cannot hold a NUL byte"),
    ],
)
def test_an_allow_read_path_that_cannot_be_one_is_a_config_error(
    tmp_path: Path, entry: str, message: str
) -> None:
    write(tmp_path / "assay.toml", f'[agents.mine]\ncommand = "x"\nallow_read = ["{entry}"]\n')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert info.value.field == "agents.mine.allow_read"
    assert message in str(info.value)
