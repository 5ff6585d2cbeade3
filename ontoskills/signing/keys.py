"""Maintainers' private keys: ed25519, kept OUTSIDE the registry, never committed or printed.

A keys folder holds one PEM (PKCS#8) file per key, named `<role>-<keyid prefix>.pem`, mode
0600 in a 0700 folder; retired keys move to `retired/`. Like ssh, a key file or keys folder
that other users can read (or that another user owns) is refused, never used. CI passes
keys in environment variables instead (`ONTOSKILLS_KEY_TIMESTAMP`, ... : the PEM text,
several blocks for a role with several keys), which win over files. Messages name files,
variables and key ids, never key material.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.serialization import load_pem_private_key
from securesystemslib.signer import CryptoSigner, SSlibKey

from ..errors import UsageError
from ..ownership import Keep, check_target
from ..paths import Home
from . import ROLES

ENV_KEYS_DIR = "ONTOSKILLS_KEYS_DIR"
ENV_KEY_PREFIX = "ONTOSKILLS_KEY_"  # + ROLE in capitals: ONTOSKILLS_KEY_SNAPSHOT
_PEM_BLOCK = re.compile(
    rb"-----BEGIN (?:ENCRYPTED )?PRIVATE KEY-----.+?-----END (?:ENCRYPTED )?PRIVATE KEY-----",
    re.DOTALL,
)
MAX_KEY_FILE = 64 * 1024


def env_var(role: str) -> str:
    return ENV_KEY_PREFIX + role.upper()


def default_keys_dir(name: str) -> Path:
    """`$ONTOSKILLS_HOME/keys/<registry folder name>`: in the user's home, not the registry."""
    return Home.resolve().root / "keys" / (name or "registry")


def resolve_keys_dir(explicit: Path | None, registry_root: Path, *, name: str = "") -> Path:
    """--keys, else ONTOSKILLS_KEYS_DIR, else the default for the registry's folder name
    (`name` for a remote registry cloned to a temporary folder); never inside the registry."""
    raw = explicit or (Path(os.environ[ENV_KEYS_DIR]) if os.environ.get(ENV_KEYS_DIR) else None)
    default = default_keys_dir(name or registry_root.resolve().name)
    keys = (raw or default).expanduser().absolute()
    # neither inside the registry (keys would be committed) nor around it (ownership.py)
    check_target(
        keys,
        [Keep("the registry", registry_root)],
        what="the keys folder",
        hint="private keys must never be committed: pass --keys DIR outside the registry",
    )
    return keys


def generate() -> CryptoSigner:
    return CryptoSigner.generate_ed25519()


def save(keys_dir: Path, role: str, signer: CryptoSigner) -> Path:
    """Write a new private key file, 0600, never over an existing one, in a 0700 folder."""
    keys_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    check_keys_dir(keys_dir)  # an existing folder others can read is refused, not chmod-ed
    path = keys_dir / f"{role}-{signer.public_key.keyid[:16]}.pem"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(signer.private_bytes)
    return path


def retired_dir(keys_dir: Path) -> Path:
    """`retired/` in the keys folder: a real folder (or none yet), never a link that would
    move private keys wherever it points. Checked before a rotation writes anything."""
    path = keys_dir / "retired"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(
            f"{path} is not a folder (a symlink or a file): retired keys are never moved there",
            hint=f"remove {path}; ontoskills creates it as a private folder",
        )
    return path


def retire(keys_dir: Path, role: str, keyids: Iterable[str]) -> list[Path]:
    """Move the files of replaced keys to `retired/` (kept: an old root key may be needed to
    audit history; never used again for signing)."""
    wanted = set(keyids)
    moved = []
    for path in sorted(keys_dir.glob(f"{role}-*.pem")):
        signer = _load_file(path)
        if signer.public_key.keyid in wanted:
            dest = retired_dir(keys_dir) / path.name
            dest.parent.mkdir(exist_ok=True, mode=0o700)
            os.replace(path, dest)
            moved.append(dest)
    return moved


def _signer_from_pem(pem: bytes, where: str) -> CryptoSigner:
    try:
        private = load_pem_private_key(pem, password=None)
        return CryptoSigner(private)
    except (ValueError, TypeError) as exc:
        # never echo the content: it is (or looks like) a private key
        kind = "encrypted" if b"ENCRYPTED" in pem else type(exc).__name__
        raise UsageError(
            f"{where} is not an unencrypted PEM private key ({kind})",
            hint="keys are written by `ontoskills registry init --signed` (PKCS#8 PEM)",
        ) from None


def _private(path: Path, st: os.stat_result, mode: int) -> None:
    """Refuse what others can read or write, or another user owns (POSIX; as ssh does)."""
    if os.name != "posix":
        return
    if st.st_mode & 0o077 or st.st_uid != os.getuid():
        perms = stat.filemode(st.st_mode)
        raise UsageError(
            f"{path} is accessible to other users ({perms}): private keys must be yours alone",
            hint=f"chmod {mode:o} {path} (and check who could have copied it)",
        )


def check_keys_dir(keys_dir: Path) -> None:
    """A keys folder that exists must be 0700 and ours (its listing names the key ids)."""
    try:
        st = os.stat(keys_dir)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{keys_dir} is not a folder", hint="pass --keys DIR, a folder")
    _private(keys_dir, st, 0o700)


def _load_file(path: Path) -> CryptoSigner:
    st = os.lstat(path)  # a symlink is not followed: the key must live in the keys folder
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_KEY_FILE:
        raise UsageError(f"{path} is not a key file", hint="remove it from the keys folder")
    _private(path, st, 0o600)
    return _signer_from_pem(path.read_bytes(), str(path))


@dataclass
class KeyRing:
    """The private keys we could find, by role."""

    signers: dict[str, list[CryptoSigner]] = field(default_factory=dict)

    def add(self, role: str, signer: CryptoSigner) -> None:
        have = self.signers.setdefault(role, [])
        if all(s.public_key.keyid != signer.public_key.keyid for s in have):
            have.append(signer)

    def for_keyids(self, role: str, keyids: Iterable[str]) -> list[CryptoSigner]:
        wanted = set(keyids)
        return [s for s in self.signers.get(role, []) if s.public_key.keyid in wanted]

    def require(
        self, role: str, keyids: list[str], threshold: int, where: str
    ) -> list[CryptoSigner]:
        """Signers for `role` reaching its threshold, or a usage error naming where to look."""
        found = self.for_keyids(role, keyids)
        if len(found) < threshold:
            ids = ", ".join(k[:16] for k in keyids)
            raise UsageError(
                f"signing {role} needs {threshold} of its keys ({ids}); found {len(found)} "
                f"in {where} and {env_var(role)}",
                hint=f"pass --keys DIR (the folder `registry init --signed` wrote) or set "
                f"{env_var(role)} to the key's PEM text",
            )
        return found  # every key we hold signs: more than the threshold is fine


def load(
    keys_dir: Path, roles: Iterable[str] = ROLES, environ: Mapping[str, str] | None = None
) -> KeyRing:
    """Every key of `roles` from the environment, then from `keys_dir` (when it exists)."""
    env = os.environ if environ is None else environ
    ring = KeyRing()
    for role in roles:
        raw = env.get(env_var(role), "").strip()
        if raw:
            blocks = _PEM_BLOCK.findall(raw.encode())
            if not blocks:
                raise UsageError(
                    f"{env_var(role)} holds no PEM private key block",
                    hint="set it to the content of the key file (-----BEGIN PRIVATE KEY----- ...)",
                )
            for block in blocks:
                ring.add(role, _signer_from_pem(block, env_var(role)))
        if keys_dir.is_dir():
            check_keys_dir(keys_dir)
            for path in sorted(keys_dir.glob(f"{role}-*.pem")):
                ring.add(role, _load_file(path))
    return ring


def public_key(signer: CryptoSigner) -> SSlibKey:
    return signer.public_key
