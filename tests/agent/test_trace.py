"""The agent's trace: ``assay.agent._trace`` (``prefix``, ``parse_line``, ``read_calls``) on real
strace output and on hand-made hex lines, and ``assay.agent._activity.write_journal`` turning the
calls into a hash-chained journal."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from assay.agent._activity import write_journal
from assay.agent._trace import SYSCALLS, Call, options, parse_line, read_calls, tracers, wait_gone
from assay.attest import Journal

STRACE = shutil.which("strace")
needs_strace = pytest.mark.skipif(STRACE is None, reason="strace is not installed")

# A file name that would break a naive parse: a space, both quotes, non-ASCII.
ODD_NAME = "a b'é\"ç.txt"
ODD_TEXT = "the fixture's text\n"
CWD = "AT_FDCWD<\\x2f\\x77>"  # the decorated cwd strace prints (-y): /w


def hexed(text: str | bytes) -> str:
    """What ``strace -xx`` prints for ``text``: every byte as ``\\xNN``."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return "".join(f"\\x{byte:02x}" for byte in data)


def events(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------------------- prefix


def test_the_tracers_options_follow_every_process_and_keep_the_kill_lines(tmp_path: Path) -> None:
    output = tmp_path / "trace"
    argv = options(output)
    for flag in ("-f", "-ff", "-ttt", "-q", "-y", "-xx"):
        assert flag in argv
    assert argv[argv.index("-o") + 1] == str(output)
    assert f"trace={SYSCALLS}" in argv
    # With signal=none strace leaves out "+++ killed by SIGKILL +++": a killed process's record
    # would look cut short.
    assert "signal=none" not in argv


# ---------------------------------------------------------------------------- parse_line


def test_an_open_for_reading_is_a_read_of_the_resolved_path() -> None:
    line = (
        f'1700000000.123456 openat({CWD}, "{hexed("x.py")}", O_RDONLY|O_CLOEXEC) '
        f"= 3<{hexed('/w/x.py')}>\n"
    )
    assert parse_line(line, 42) == Call(1700000000.123456, 42, "read", path="/w/x.py")


def test_an_open_with_o_wronly_is_a_write() -> None:
    line = (
        f'1.5 openat({CWD}, "{hexed("out.txt")}", O_WRONLY|O_CREAT|O_TRUNC, 0666) '
        f"= 3<{hexed('/w/out.txt')}>"
    )
    assert parse_line(line, 1) == Call(1.5, 1, "write", path="/w/out.txt")


def test_an_open_for_reading_and_writing_is_a_write() -> None:
    line = (
        f'1.6 openat({CWD}, "{hexed("db.sqlite")}", O_RDWR|O_CREAT, 0644) '
        f"= 3<{hexed('/w/db.sqlite')}>"
    )
    assert parse_line(line, 1) == Call(1.6, 1, "write", path="/w/db.sqlite")


def test_creat_is_a_write() -> None:
    line = f'2.0 creat("{hexed("/w/new")}", 0644) = 4<{hexed("/w/new")}>'
    assert parse_line(line, 7) == Call(2.0, 7, "write", path="/w/new")


def test_open_and_openat2_are_parsed_too() -> None:
    plain = f'3.0 open("{hexed("/etc/passwd")}", O_RDONLY) = 3<{hexed("/etc/passwd")}>'
    two = (
        f'4.0 openat2({CWD}, "{hexed("log")}", {{flags=O_WRONLY|O_APPEND, mode=0, resolve=0}}'
        f", 24) = 5<{hexed('/w/log')}>"
    )
    assert parse_line(plain, 1) == Call(3.0, 1, "read", path="/etc/passwd")
    assert parse_line(two, 1) == Call(4.0, 1, "write", path="/w/log")


def test_a_file_named_like_a_flag_cannot_fake_a_write() -> None:
    # The name is hex, so "O_WRONLY" in it is no flag.
    line = f'1.0 openat({CWD}, "{hexed("O_WRONLY")}", O_RDONLY) = 3<{hexed("/w/O_WRONLY")}>'
    assert parse_line(line, 1) == Call(1.0, 1, "read", path="/w/O_WRONLY")


def test_a_failed_open_is_nothing() -> None:
    line = (
        f'1.0 openat({CWD}, "{hexed("missing")}", O_RDONLY) = -1 ENOENT (No such file or directory)'
    )
    assert parse_line(line, 1) is None


def test_undecodable_bytes_in_a_path_become_replacement_characters() -> None:
    raw = b"/w/bad\xff.txt"
    line = f'1.0 openat({CWD}, "{hexed(raw)}", O_RDONLY) = 3<{hexed(raw)}>'
    call = parse_line(line, 1)
    assert call is not None
    assert call.path == "/w/bad\ufffd.txt"
    json.dumps(call.path, ensure_ascii=False).encode("utf-8")  # JSON- and UTF-8-safe


@pytest.mark.parametrize(
    "line",
    [
        f'1.0 openat({CWD}, "{hexed("x")}", O_RDONLY) = ?',
        f'1.0 execve("{hexed("/bin/true")}", ["{hexed("true")}"], 0x7ffd /* 3 vars */) = ?',
    ],
    ids=["openat", "execve"],
)
def test_a_call_cut_short_is_nothing(line: str) -> None:
    assert parse_line(line, 1) is None


@pytest.mark.parametrize(
    "line",
    [
        "",
        "\n",
        f'1.0 openat({CWD}, "{hexed("x")}", O_RD',  # the tracer killed mid-line
        "+++ exited with 0 +++",
        "--- SIGCHLD {si_signo=SIGCHLD} ---",
        f'1.0 read(3<{hexed("/w/x")}>, "", 4096) = 0',  # not a call of interest
    ],
    ids=["empty", "newline", "truncated", "exit", "signal", "other-call"],
)
def test_anything_else_is_nothing(line: str) -> None:
    assert parse_line(line, 1) is None


def test_a_successful_execve_decodes_path_and_argv_exactly() -> None:
    argv = ["sh", "-c", "cat 'a b' \"é\"; echo $((1+1))"]
    listed = ", ".join(f'"{hexed(a)}"' for a in argv)
    line = f'5.25 execve("{hexed("/usr/bin/sh")}", [{listed}], 0x7ffc /* 20 vars */) = 0'
    assert parse_line(line, 9) == Call(5.25, 9, "exec", path="/usr/bin/sh", argv=tuple(argv))


def test_execveat_is_an_exec() -> None:
    line = (
        f'1.0 execveat(AT_FDCWD<\\x2f>, "{hexed("/bin/ls")}", ["{hexed("ls")}"], '
        "0x7ffc /* 1 var */, 0) = 0"
    )
    assert parse_line(line, 1) == Call(1.0, 1, "exec", path="/bin/ls", argv=("ls",))


def test_a_failed_execve_is_nothing() -> None:
    # A shell trying each folder of $PATH in turn.
    line = (
        f'1.0 execve("{hexed("/usr/local/bin/cat")}", ["{hexed("cat")}"], 0x7ffc /* 3 vars */)'
        " = -1 ENOENT (No such file or directory)"
    )
    assert parse_line(line, 1) is None


def test_an_inet_connect_is_a_net_attempt_with_its_errno() -> None:
    line = (
        f"1.0 connect(3<{hexed('socket:[1]')}>, {{sa_family=AF_INET, sin_port=htons(8080), "
        f'sin_addr=inet_addr("{hexed("10.0.0.1")}")}}, 16) '
        "= -1 ENETUNREACH (Network is unreachable)"
    )
    assert parse_line(line, 3) == Call(
        1.0, 3, "net", endpoint="10.0.0.1:8080", result="ENETUNREACH"
    )


def test_an_inet6_connect_that_succeeds_is_ok() -> None:
    line = (
        f"1.0 connect(4<{hexed('socket:[2]')}>, {{sa_family=AF_INET6, sin6_port=htons(443), "
        f'sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "{hexed("2001:db8::1")}", &sin6_addr), '
        "sin6_scope_id=0}, 28) = 0"
    )
    assert parse_line(line, 3) == Call(1.0, 3, "net", endpoint="[2001:db8::1]:443", result="ok")


def test_an_af_unix_connect_is_not_the_network() -> None:
    line = (
        f"1.0 connect(3<{hexed('socket:[3]')}>, {{sa_family=AF_UNIX, "
        f'sun_path="{hexed("/run/nscd/socket")}"}}, 110) = -1 ENOENT (No such file or directory)'
    )
    assert parse_line(line, 1) is None


# ---------------------------------------------------------------------------- read_calls


def test_read_calls_merges_the_per_process_files_in_time_order(tmp_path: Path) -> None:
    output = tmp_path / "trace"
    (tmp_path / "trace.12").write_text(
        f'3.0 openat({CWD}, "{hexed("b")}", O_RDONLY) = 3<{hexed("/w/b")}>\n'
        f'1.0 openat({CWD}, "{hexed("a")}", O_RDONLY) = 3<{hexed("/w/a")}>\n'
        f'4.0 openat({CWD}, "{hexed("z")}", O_RDONLY) = -1 ENOENT (No such file or directory)\n',
        encoding="ascii",
    )
    (tmp_path / "trace.7").write_text(
        f'2.0 creat("{hexed("/w/c")}", 0644) = 3<{hexed("/w/c")}>\n'
        f'1.0 openat({CWD}, "{hexed("d")}", O_RDONLY) = 3<{hexed("/w/d")}>',  # no final newline
        encoding="ascii",
    )
    # Not the tracer's per-process files: ignored.
    (tmp_path / "trace.txt").write_text(f'9.0 creat("", 0) = 3<{hexed("/x")}>\n')
    (tmp_path / "other.5").write_text(f'9.0 creat("", 0) = 3<{hexed("/y")}>\n')
    (tmp_path / "trace").write_text(f'9.0 creat("", 0) = 3<{hexed("/z")}>\n')
    assert read_calls(output) == [
        Call(1.0, 7, "read", path="/w/d"),  # same time: by pid
        Call(1.0, 12, "read", path="/w/a"),
        Call(2.0, 7, "write", path="/w/c"),
        Call(3.0, 12, "read", path="/w/b"),
    ]


def test_read_calls_of_nothing_is_empty(tmp_path: Path) -> None:
    assert read_calls(tmp_path / "trace") == []


# ---------------------------------------------------------------------------- real strace


@dataclass(frozen=True)
class Traced:
    work: Path
    port: int
    script: str
    calls: list[Call]


def _closed_port() -> tuple[int, list[socket.socket]]:
    """A port bound on 127.0.0.1 and ::1 but listening on neither: connecting is refused."""
    for _ in range(20):
        four = socket.socket(socket.AF_INET)
        four.bind(("127.0.0.1", 0))
        port = four.getsockname()[1]
        six = socket.socket(socket.AF_INET6)
        try:
            six.bind(("::1", port))
        except OSError:
            four.close()
            six.close()
            continue
        return port, [four, six]
    pytest.skip("no port free on both 127.0.0.1 and ::1")


def run_traced(folder: Path, script: str) -> list[Call]:
    """Run ``sh -c script`` in ``folder`` under the tracer, as the runner does without a
    sandbox; its calls once the tracer is done."""
    from assay.agent._box import Limits, Unsandboxed

    assert STRACE is not None
    output = folder.parent / f"{folder.name}-trace" / "trace"
    output.parent.mkdir()
    with Unsandboxed(script, folder, dict(os.environ), Limits(120), trace_out=output) as run:
        assert run.finish().exit_code == 0
    assert wait_gone(tracers(output), 120.0)
    return read_calls(output)


CONNECT = (
    "import socket, sys\n"
    "port = int(sys.argv[1])\n"
    "for family, host in ((socket.AF_INET, '127.0.0.1'), (socket.AF_INET6, '::1')):\n"
    "    with socket.socket(family) as s:\n"
    "        print(s.connect_ex((host, port)))\n"
)


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    """One traced run: read an oddly named file, write a new one, fail to open a missing one,
    then connect to a closed port on 127.0.0.1 and on ::1."""
    if STRACE is None:
        pytest.skip("strace is not installed")
    work = Path(os.path.realpath(tmp_path_factory.mktemp("work")))
    (work / ODD_NAME).write_text(ODD_TEXT, encoding="utf-8")
    port, held = _closed_port()
    q = shlex.quote
    script = (
        f"cat {q(ODD_NAME)} >/dev/null\n"
        "printf made > made.txt\n"
        "cat missing.txt 2>/dev/null\n"
        f"{q(sys.executable)} -c {q(CONNECT)} {port}\n"
    )
    try:
        yield Traced(work, port, script, run_traced(work, script))
    finally:
        for sock in held:
            sock.close()


@needs_strace
def test_real_trace_reads_and_writes_absolute_resolved_paths(traced: Traced) -> None:
    files = [c for c in traced.calls if c.kind in ("read", "write")]
    assert files
    assert all(c.path is not None and os.path.isabs(c.path) for c in files)
    assert str(traced.work / ODD_NAME) in {c.path for c in files if c.kind == "read"}
    writes = {c.path for c in files if c.kind == "write"}
    assert str(traced.work / "made.txt") in writes
    assert "/dev/null" in writes
    assert str(traced.work / ODD_NAME) not in writes
    assert str(traced.work / "made.txt") not in {c.path for c in files if c.kind == "read"}


@needs_strace
def test_real_trace_has_no_failed_open(traced: Traced) -> None:
    paths = [c.path or "" for c in traced.calls]
    assert not [p for p in paths if p.endswith("missing.txt")]


@needs_strace
def test_real_trace_decodes_exec_argv_exactly(traced: Traced) -> None:
    execs = [c for c in traced.calls if c.kind == "exec"]
    first = execs[0]
    assert first.argv == ("sh", "-c", traced.script)
    assert first.path is not None and os.path.basename(first.path) == "sh"
    cats = [c for c in execs if c.argv[:1] == ("cat",)]
    assert [c.argv for c in cats] == [("cat", ODD_NAME), ("cat", "missing.txt")]
    assert all(c.path is not None and os.path.basename(c.path) == "cat" for c in cats)
    # Only the execs that happened: no failed attempt along $PATH.
    assert all(c.path is not None and os.path.isabs(c.path) for c in execs)
    assert len({c.pid for c in cats}) == 2


@needs_strace
def test_real_trace_names_the_endpoints_and_how_they_ended(traced: Traced) -> None:
    nets = [c for c in traced.calls if c.kind == "net"]
    assert [(c.endpoint, c.result) for c in nets] == [
        (f"127.0.0.1:{traced.port}", "ECONNREFUSED"),
        (f"[::1]:{traced.port}", "ECONNREFUSED"),
    ]


@needs_strace
def test_real_trace_is_in_time_order_across_processes(traced: Traced) -> None:
    calls = traced.calls
    assert [c.time for c in calls] == sorted(c.time for c in calls)
    assert len({c.pid for c in calls}) >= 3  # sh, two cats (and python): files merged

    def first(kind: str, test: Any) -> int:
        return next(i for i, c in enumerate(calls) if c.kind == kind and test(c))

    read_odd = first("read", lambda c: c.path == str(traced.work / ODD_NAME))
    made = first("write", lambda c: c.path == str(traced.work / "made.txt"))
    net = first("net", lambda c: True)
    assert first("exec", lambda c: c.argv[:1] == ("sh",)) < read_odd < made < net


@needs_strace
def test_real_trace_journals_with_the_fixture_content(traced: Traced, tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    fixture.mkdir()
    (fixture / ODD_NAME).write_text(ODD_TEXT, encoding="utf-8")
    journal = tmp_path / "run.journal.jsonl"
    count = write_journal(journal, traced.calls, traced.work, fixture, "0\n0\n")
    check = Journal(journal).verify()
    assert check.ok, check.reason
    assert check.events == count
    got = events(journal)
    [odd] = [e for e in got if e["kind"] == "read" and e.get("path") == ODD_NAME]
    assert odd["content"] == ODD_TEXT
    [made] = [e for e in got if e.get("path") == "made.txt"]
    assert made["kind"] == "write" and "content" not in made
    assert [e["content"] for e in got if e["kind"] == "net"] == [
        "connect ECONNREFUSED",
        "connect ECONNREFUSED",
    ]
    commands = [shlex.split(e["command"]) for e in got if e["kind"] == "exec"]
    assert ["cat", ODD_NAME] in commands  # shlex.join: the command splits back exactly
    assert got[-1] == {**got[-1], "kind": "message", "content": "0\n0\n"}


# ---------------------------------------------------------------------------- write_journal


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """A worktree and the fixture it was copied from (``src/app.py``)."""
    worktree = Path(os.path.realpath(tmp_path)) / "wt"
    fixture = tmp_path / "fixture"
    for root in (worktree, fixture):
        (root / "src").mkdir(parents=True)
        (root / "src" / "app.py").write_text("print('fixture')\n", encoding="utf-8")
    (worktree / "src" / "app.py").write_text("print('edited')\n", encoding="utf-8")
    return worktree, fixture


def test_a_worktree_read_carries_the_fixture_content(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    worktree, fixture = tree
    journal = tmp_path / "j.jsonl"
    calls = [Call(1.0, 1, "read", path=str(worktree / "src" / "app.py"))]
    assert write_journal(journal, calls, worktree, fixture, "") == 1
    [event] = events(journal)
    assert event["kind"] == "read"
    assert event["path"] == "src/app.py"
    assert event["content"] == "print('fixture')\n"  # the fixture's, not the worktree's


def test_a_file_the_agent_created_carries_no_content(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    worktree, fixture = tree
    (worktree / "notes.md").write_text("mine\n", encoding="utf-8")
    journal = tmp_path / "j.jsonl"
    calls = [
        Call(1.0, 1, "write", path=str(worktree / "notes.md")),
        Call(2.0, 1, "read", path=str(worktree / "notes.md")),
        Call(3.0, 1, "write", path=str(worktree / "src" / "app.py")),
    ]
    assert write_journal(journal, calls, worktree, fixture, "") == 3
    assert events(journal)[0]["path"] == "notes.md"
    for event in events(journal):
        assert "content" not in event  # writes never carry content; created files have none


def test_an_outside_path_stays_absolute_and_carries_no_content(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    worktree, fixture = tree
    outside = tmp_path / "secrets"
    (outside / "src").mkdir(parents=True)
    (outside / "src" / "app.py").write_text("secret\n", encoding="utf-8")
    sibling = worktree.parent / (worktree.name + "-other") / "src" / "app.py"  # prefix, not inside
    journal = tmp_path / "j.jsonl"
    calls = [
        Call(1.0, 1, "read", path=str(outside / "src" / "app.py")),
        Call(2.0, 1, "read", path=str(sibling)),
        Call(3.0, 1, "read", path="/etc/hostname"),
    ]
    write_journal(journal, calls, worktree, fixture, "")
    got = events(journal)
    assert [e["path"] for e in got] == [
        str(outside / "src" / "app.py"),
        str(sibling),
        "/etc/hostname",
    ]
    assert all("content" not in e for e in got)


def test_a_worktree_given_through_a_symlink_still_shows_relative_paths(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    worktree, fixture = tree
    link = tmp_path / "link"
    link.symlink_to(worktree)
    journal = tmp_path / "j.jsonl"
    calls = [Call(1.0, 1, "read", path=str(worktree / "src" / "app.py"))]  # strace: real paths
    write_journal(journal, calls, link, fixture, "")
    [event] = events(journal)
    assert event["path"] == "src/app.py"
    assert event["content"] == "print('fixture')\n"


def test_duplicates_are_journaled_once(tree: tuple[Path, Path], tmp_path: Path) -> None:
    worktree, fixture = tree
    app = str(worktree / "src" / "app.py")
    journal = tmp_path / "j.jsonl"
    calls = [
        Call(1.0, 1, "read", path=app),
        Call(1.1, 2, "read", path=app),
        Call(1.2, 1, "write", path=app),  # another kind: its own event
        Call(1.3, 3, "write", path=app),
        Call(2.0, 1, "exec", path="/usr/bin/cat", argv=("cat", "a b")),
        Call(2.1, 4, "exec", path="/usr/bin/cat", argv=("cat", "a b")),
        Call(2.2, 5, "exec", path="/usr/bin/cat", argv=("cat", "c")),
        Call(3.0, 1, "read", path="/etc/hostname"),
        Call(3.1, 1, "read", path="/etc/hostname"),
    ]
    assert write_journal(journal, calls, worktree, fixture, "") == 5
    got = events(journal)
    assert [(e["kind"], e.get("path"), e.get("command")) for e in got] == [
        ("read", "src/app.py", None),
        ("write", "src/app.py", None),
        ("exec", "/usr/bin/cat", "cat 'a b'"),
        ("exec", "/usr/bin/cat", "cat c"),
        ("read", "/etc/hostname", None),
    ]


def test_each_network_attempt_is_an_event(tree: tuple[Path, Path], tmp_path: Path) -> None:
    worktree, fixture = tree
    journal = tmp_path / "j.jsonl"
    calls = [
        Call(1.0, 1, "net", endpoint="127.0.0.1:9", result="ECONNREFUSED"),
        Call(2.0, 1, "net", endpoint="127.0.0.1:9", result="ECONNREFUSED"),
        Call(3.0, 1, "net", endpoint="[::1]:443", result="ok"),
    ]
    assert write_journal(journal, calls, worktree, fixture, "") == 3
    assert [(e["kind"], e["endpoint"], e["content"]) for e in events(journal)] == [
        ("net", "127.0.0.1:9", "connect ECONNREFUSED"),
        ("net", "127.0.0.1:9", "connect ECONNREFUSED"),
        ("net", "[::1]:443", "connect ok"),
    ]


def test_the_output_becomes_the_final_message_and_the_journal_verifies(
    tree: tuple[Path, Path], tmp_path: Path
) -> None:
    worktree, fixture = tree
    journal = tmp_path / "j.jsonl"
    calls = [
        Call(1.0, 1, "exec", path="/bin/sh", argv=("sh", "-c", "echo done")),
        Call(2.0, 1, "read", path=str(worktree / "src" / "app.py")),
        Call(3.0, 1, "net", endpoint="127.0.0.1:9", result="ECONNREFUSED"),
    ]
    count = write_journal(journal, calls, worktree, fixture, "done\n")
    assert count == 4
    got = events(journal)
    assert got[-1]["kind"] == "message"
    assert got[-1]["content"] == "done\n"
    assert [e["index"] for e in got] == [0, 1, 2, 3]
    check = Journal(journal).verify()
    assert check.ok, check.reason
    assert check.events == count


def test_no_output_no_message(tree: tuple[Path, Path], tmp_path: Path) -> None:
    worktree, fixture = tree
    journal = tmp_path / "j.jsonl"
    assert write_journal(journal, [], worktree, fixture, "") == 0
    assert not journal.exists() or events(journal) == []


def test_a_link_or_rename_reaches_its_source_resolved_against_the_calls_folder() -> None:
    from assay.agent._trace import cwd_of, reached

    line = (
        f"1.5 linkat(AT_FDCWD<{hexed('/g')}>, {chr(34)}{hexed('task.md')}{chr(34)}, "
        f"AT_FDCWD<{hexed('/wt')}>, {chr(34)}{hexed('t')}{chr(34)}, 0) = 0"
    )
    calls = reached(line, 7, None)
    assert [(c.kind, c.path) for c in calls] == [("read", "/g/task.md"), ("write", "/wt/t")]
    plain = f"1.6 rename({chr(34)}{hexed('a')}{chr(34)}, {chr(34)}{hexed('/wt/b')}{chr(34)}) = 0"
    assert [(c.kind, c.path) for c in reached(plain, 7, "/g")] == [
        ("read", "/g/a"),
        ("write", "/wt/b"),
    ]
    failed = line.replace(") = 0", ") = -1 EPERM (Operation not permitted)")
    assert reached(failed, 7, None) == []
    assert cwd_of(line) == "/g"


def test_an_ipv4_mapped_address_is_written_as_ipv4() -> None:
    line = (
        "1.0 connect(3<socket:[1]>, {sa_family=AF_INET6, sin6_port=htons(443), "
        f"sin6_flowinfo=htonl(0), inet_pton(AF_INET6, {chr(34)}{hexed('::ffff:10.0.0.1')}"
        f"{chr(34)}, &sin6_addr), sin6_scope_id=0}}, 28) = 0"
    )
    call = parse_line(line, 1)
    assert call is not None and call.endpoint == "10.0.0.1:443"


def test_a_fixture_file_behind_a_link_is_never_copied(tmp_path: Path) -> None:
    fixture, worktree = tmp_path / "repo", tmp_path / "wt"
    fixture.mkdir()
    worktree.mkdir()
    (tmp_path / "task.md").write_text("rubric: the secret\n")
    (fixture / "notes.md").symlink_to("../task.md")
    (fixture / "plain.md").write_text("hello\n")
    calls = [
        Call(1.0, 1, "read", path=str(worktree / "notes.md")),
        Call(2.0, 1, "read", path=str(worktree / "plain.md")),
    ]
    journal = tmp_path / "j.jsonl"
    write_journal(journal, calls, worktree, fixture, "")
    contents = {e["path"]: e.get("content") for e in events(journal)}
    assert contents == {"notes.md": None, "plain.md": "hello\n"}


def test_traced_by_skips_a_zombie_that_still_names_its_tracer(monkeypatch: Any) -> None:
    # A timed-out agent's killed child can sit as a zombie naming the tracer for a moment: it
    # has exited, so it must not be counted as a process left running (an orphan).
    from pathlib import Path as RealPath

    from assay.agent import _trace

    statuses = {
        "/proc/100/status": "Name:\tsleep\nState:\tZ (zombie)\nTracerPid:\t42\n",
        "/proc/101/status": "Name:\tsleep\nState:\tS (sleeping)\nTracerPid:\t42\n",
        "/proc/102/status": "Name:\tother\nState:\tS (sleeping)\nTracerPid:\t0\n",
    }
    monkeypatch.setattr(_trace.os, "listdir", lambda _: ["100", "101", "102", "self"])
    monkeypatch.setattr(RealPath, "read_text", lambda self, *a, **k: statuses[str(self)])
    assert _trace.traced_by([42]) == [101]
