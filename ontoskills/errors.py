"""One exception hierarchy for the whole tool.

Every error carries the exit code the CLI returns for it and an optional hint that tells the
user the next step. Domain code raises these; only the CLI layer turns them into output.
The codes are part of the public contract (docs/CLI.md) and are tested one by one.
"""

from __future__ import annotations

import errno

from .redact import redact_text

EXIT_OK = 0
EXIT_OTHER = 1
EXIT_USAGE = 2
EXIT_LOCK = 3
EXIT_INTEGRITY = 4
EXIT_NETWORK = 5
EXIT_AUTH = 6
EXIT_NOT_FOUND = 7
EXIT_SIGNATURE = 8  # signed metadata refused: an attack is likely, do not retry
EXIT_EXPIRED = 9  # signed metadata expired (freeze): retry later, maintainers must re-sign
EXIT_UNSIGNED = 10  # an unsigned registry refused by require_signed: a policy decision
EXIT_INTERRUPTED = 130


class OntoskillsError(Exception):
    """Base class: a failure the user can act on."""

    exit_code: int = EXIT_OTHER

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        # Every error reaches a terminal, a --json document or an MCP reply: a URL in it
        # (a registry's, a redirect target, libgit2's text) loses its credentials here.
        message = redact_text(message)
        super().__init__(message)
        self.message = message
        self.hint = None if hint is None else redact_text(hint)

    def __str__(self) -> str:
        return self.message


class UsageError(OntoskillsError):
    """Bad arguments or bad configuration supplied by the user."""

    exit_code = EXIT_USAGE


class ConfigError(UsageError):
    """The config file is malformed or names something that does not exist."""


class LockError(OntoskillsError):
    """The lockfile is missing, unreadable or would change under --locked."""

    exit_code = EXIT_LOCK


class LockMissingError(LockError):
    pass


class LockOutdatedError(LockError):
    pass


class LockFormatError(LockError):
    """Malformed TOML, merge-conflict markers or an unknown lock_version."""


class IntegrityError(OntoskillsError):
    """Content does not match its recorded or published hash, or is malformed."""

    exit_code = EXIT_INTEGRITY


class FormatError(IntegrityError):
    """A registry file (index, manifest, intents.json, Turtle) is malformed."""


class UnsafePathError(IntegrityError):
    """A path or name from untrusted input would escape its root or is not allowed."""


class LimitExceededError(IntegrityError):
    """A size or count limit was exceeded (file too big, too many files, ...)."""


class TrustError(IntegrityError):
    """A trust policy refused the operation (--min-trust, tier downgrade)."""


class NetworkError(OntoskillsError):
    exit_code = EXIT_NETWORK


class AuthError(OntoskillsError):
    exit_code = EXIT_AUTH


class NotFoundError(OntoskillsError):
    exit_code = EXIT_NOT_FOUND


class LocalChangesError(OntoskillsError):
    """Installed files were edited by the user; we will not overwrite them silently."""

    exit_code = EXIT_OTHER


class BusyError(OntoskillsError):
    """Another ontoskills process holds the home lock and we may not wait."""

    exit_code = EXIT_OTHER


class RegistryChangedError(OntoskillsError):
    """A git registry's branch moved while a command built its commit on it (another commit
    landed): nothing was written; the same command run again builds on the new HEAD."""

    exit_code = EXIT_OTHER


class VersionConflictError(UsageError):
    """A publish would overwrite or go below an already published version (immutable)."""


class ConfusableNameError(TrustError):
    """A new package name is too close to an existing one (typosquatting guard)."""


class TargetMismatchError(IntegrityError):
    """A file of a signed registry is not the signed target (tampered, or not signed at all)."""


# Signed registries (TUF, docs/SECURITY.md): the registry's signed metadata was refused.
# One class (and message) per attack class; the exit code says what the user does next:
# 8 an attack is likely (tell the maintainers, do not retry), 9 expired metadata (retry
# later; the maintainers refresh the timestamp), 10 the user's own policy refused an unsigned
# registry. A file that is not its signed target stays exit 4, as any tampered file.
class SignatureError(OntoskillsError):
    """Signed metadata failed verification: bad or too few signatures, or a broken chain."""

    exit_code = EXIT_SIGNATURE


class ThresholdError(SignatureError):
    """Metadata lacks the threshold of valid signatures of its role's keys."""


class RollbackError(SignatureError):
    """Metadata older than what this machine already trusts (rollback / stale mirror)."""


class FreezeError(SignatureError):
    """Expired metadata: the registry stopped refreshing it, or old metadata is replayed."""

    exit_code = EXIT_EXPIRED


class MixAndMatchError(SignatureError):
    """Metadata files from different states of the registry served together."""


class MetadataLimitError(SignatureError):
    """A metadata file larger than its bound (endless-data attack)."""


class RootChainError(SignatureError):
    """The registry's root does not chain to the root we trust (configured, or in the lock)."""


class DowngradeError(SignatureError):
    """A registry known to be signed (trusted root, or the lock) now serves no metadata."""


class UnsignedRegistryError(SignatureError):
    """An unsigned registry where the user requires signed ones (require_signed)."""

    exit_code = EXIT_UNSIGNED


# Every error gets a hint line (docs/CLI.md): this one for a path of the wrong kind and the rest.
_OS_HINT = "check that path and its permissions (--home, --lockfile, ONTOSKILLS_CACHE_DIR)"
_OS_HINTS = {
    errno.ENOSPC: "free some disk space (`ontoskills cache clean` helps) and run the command again",
    errno.EROFS: "the home is on a read-only filesystem; use a writable --home",
    errno.EACCES: "check the permissions of the home (or pass a writable --home)",
    errno.EDQUOT: "you are over your disk quota; free some space and run the command again",
    errno.EFBIG: "a file is larger than this process may write (ulimit -f); raise the limit",
}


def from_os_error(exc: OSError) -> OntoskillsError:
    """A filesystem failure (disk full, read-only, permissions) as a one-line error."""
    where = f": {exc.filename}" if exc.filename else ""
    reason = exc.strerror or type(exc).__name__
    return OntoskillsError(f"{reason}{where}", hint=_OS_HINTS.get(exc.errno or 0, _OS_HINT))
