"""The attestation key: 32 random bytes, hex in a file only its owner can read.

Only ``assay attest keygen`` creates a key. Every other command reads ``--key-file``, else
``$ASSAY_KEY_FILE``, else the default file in the user's config folder, and refuses a key file
that group or others can read.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from pathlib import Path

from assay.errors import ConfigError

KEY_BYTES = 32


def default_key_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "assay" / "attest.key"


def resolve_key_path(key_file: Path | None) -> Path:
    if key_file is not None:
        return key_file
    env = os.environ.get("ASSAY_KEY_FILE")
    return Path(env) if env else default_key_path()


def key_id(key: bytes) -> str:
    """A public digest naming the key (never the key itself)."""
    return "sha256:" + hashlib.sha256(b"assay-attest-key-id\x00" + key).hexdigest()[:32]


def keygen(path: Path) -> str:
    """Create a new key file with mode 0600 (never overwriting one); returns its key id.

    Raises:
        ConfigError: the file exists or cannot be created.
    """
    key = secrets.token_bytes(KEY_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise ConfigError(
            "a key file already exists; refusing to overwrite it", source=str(path)
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot create the key file: {exc.strerror}", source=str(path)) from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key.hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, 0o600)
    return key_id(key)


def load_key(path: Path) -> bytes:
    """Read a key file.

    Raises:
        ConfigError: missing (never created here), readable by group/others, or malformed.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ConfigError(
            "no attestation key; create one with `assay attest keygen`", source=str(path)
        ) from None
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise ConfigError(
            "the key file is readable by group or others; chmod 600 it", source=str(path)
        )
    text = path.read_text(encoding="ascii", errors="replace").strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError("the key file does not hold a hex key", source=str(path)) from None
    if len(key) != KEY_BYTES:
        raise ConfigError(f"the key must be {KEY_BYTES} bytes", source=str(path))
    return key
