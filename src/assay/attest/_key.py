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
from assay.io import atomic_create_text, read_text

KEY_BYTES = 32


def resolve_key_path(key_file: Path | None) -> Path:
    if key_file is not None:
        return key_file
    env = os.environ.get("ASSAY_KEY_FILE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "assay" / "attest.key"


def key_id(key: bytes) -> str:
    """A public digest naming the key (never the key itself)."""
    return "sha256:" + hashlib.sha256(b"assay-attest-key-id\x00" + key).hexdigest()[:32]


def keygen(path: Path) -> str:
    """Create a new key file with mode 0600 (never overwriting one); returns its key id.

    Raises:
        ConfigError: the file exists or cannot be created.
    """
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise ConfigError(f"cannot create its folder: {exc.strerror}", source=str(path)) from None
    # Exclusive and atomic: never replaces or follows anything already at ``path`` (a dangling
    # symlink included), never leaves a half-written key, and the bytes are 0600 from the start.
    if not atomic_create_text(path, key.hex() + "\n", ConfigError, mode=0o600):
        raise ConfigError("a key file already exists; refusing to overwrite it", source=str(path))
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
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", source=str(path)) from None
    if stat.S_ISDIR(info.st_mode):  # before the mode check, whose advice would mislead
        raise ConfigError("is a folder, not a file", source=str(path))
    if stat.S_IMODE(info.st_mode) & 0o077:
        raise ConfigError(
            "the key file is readable by group or others; chmod 600 it", source=str(path)
        )
    text = read_text(path, ConfigError).strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise ConfigError("the key file does not hold a hex key", source=str(path)) from None
    if len(key) != KEY_BYTES:
        raise ConfigError(f"the key must be {KEY_BYTES} bytes", source=str(path))
    return key
