"""The sandbox's seccomp filter: the system calls an agent is refused (``EPERM``).

Each closes a way around the sandbox or the tracer, not a way to do the task:

- io_uring (``IORING_OP_OPENAT`` opens files without an ``open`` call the tracer sees);
- handle-based opens (``open_by_handle_at`` reaches a file by inode, past the mount fence);
- ptrace and process-memory access (another process's memory may hold what it must not see);
- bpf and perf (kernel programs and counters that observe other processes);
- mounting, and every new-mount-API call (a mount could bring a hidden place back into view);
- namespaces (``setns``, ``unshare``), keyrings, kernel modules, kexec, and ``clone3`` (its flags
  sit in memory a filter cannot read: refused with ``ENOSYS``, libc falls back to ``clone``,
  whose flags the filter does read, and a new user namespace is refused there).

A system call of another architecture (a 32-bit binary on x86_64) kills the process: the
filter names the native one only. The program is compiled by libseccomp (``pyseccomp``).
"""

from __future__ import annotations

import errno
import os
import tempfile
from functools import cache
from typing import Final

from assay.errors import AssayError

# Grouped as the docstring lists them (and, last, administering the machine).
REFUSED: Final = tuple(
    """
    io_uring_setup io_uring_enter io_uring_register
    open_by_handle_at name_to_handle_at
    ptrace process_vm_readv process_vm_writev process_madvise pidfd_getfd kcmp
    bpf perf_event_open userfaultfd
    mount umount2 pivot_root chroot move_mount open_tree fsopen fsconfig fsmount fspick
    mount_setattr
    setns unshare
    add_key keyctl request_key
    init_module finit_module delete_module kexec_load kexec_file_load
    quotactl swapon swapoff acct reboot
    """.split()
)
_CLONE_NEWUSER: Final = 0x10000000


@cache
def program() -> bytes:
    """The compiled BPF program bubblewrap loads (``--seccomp FD``)."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so.2 is not installed
        raise AssayError(
            f"the agent's sandbox needs libseccomp (Debian: libseccomp2) and pyseccomp: {exc}"
        ) from None
    refuse = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    for name in REFUSED:
        try:
            rules.add_rule(refuse, name)
        except (ValueError, RuntimeError, OSError):
            continue  # a call this architecture does not have
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    with tempfile.TemporaryFile() as handle:
        rules.export_bpf(handle)
        handle.seek(0)
        return handle.read()


def program_fd() -> int:
    """A file descriptor to read the program from (the caller passes it to bwrap and closes it):
    a pipe, filled before bwrap reads it (the program is a few hundred bytes, well under a
    pipe's buffer)."""
    data = program()
    read, write = os.pipe()
    try:
        os.write(write, data)
    finally:
        os.close(write)
    return read
