"""Secrets out of every URL and log line we print or write: the one set of redaction rules.

A URL can carry a credential in its userinfo (`https://user:password@host/`, or a token as
the user name) or in a query parameter (`?token=`, presigned `X-Amz-Signature=`...). Registry
URLs with either are refused where they would be persisted (`registries.RegistryConfig`);
everything that shows or exports a URL goes through `redact_url`, every error message
through `redact_text` (`errors.OntoskillsError`), and `serve`'s log lines through
`LogRedactor` (query strings stripped, session ids and bearer tokens hidden). Nothing here
imports the rest of ontoskills: `errors` imports it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import logging

REDACTED = "***"

# Query (and fragment) parameter names that carry a secret, generously: a parameter is
# secret when its lower-cased name contains one of these...
_SECRET_PARTS = (
    "token",
    "secret",
    "passw",
    "pwd",
    "signature",
    "credential",
    "apikey",
    "auth",
    "session",
    "sessid",
    "private",
    "cookie",
    "jwt",
    "bearer",
    "ticket",
)
# ... or one of its words (split on anything but letters and digits) is one of these, or
# ends in "key" / "sig" (accesskey, x-goog-signature is caught above).
_SECRET_WORDS = frozenset({"key", "sig", "code", "pass", "sid", "hmac", "otp"})
_WORD = re.compile(r"[a-z0-9]+")
# Schemes whose user name alone is an account, not a secret (`ssh://git@host/...`).
_ACCOUNT_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git", "sftp"})
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>`]+")
_TRAILING = ".,;:)]}"


def is_secret_param(name: str) -> bool:
    low = name.lower().replace("author", "")  # `auth` is a secret, `author=acme` is not
    if any(part in low for part in _SECRET_PARTS):
        return True
    return any(w in _SECRET_WORDS or w.endswith(("key", "sig")) for w in _WORD.findall(low))


def _params(text: str, reasons: list[str]) -> str:
    out = []
    for item in text.split("&"):
        name, eq, value = item.partition("=")
        if eq and value and is_secret_param(name):
            reasons.append(f"query parameter {name[:40]!r}")
            item = f"{name}={REDACTED}"
        out.append(item)
    return "&".join(out)


def _scan(url: str) -> tuple[str, list[str]]:
    """(url with every credential replaced by ***, what was replaced)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url, []  # a path or an scp-style `git@host:repo` (an account, no secret)
    reasons: list[str] = []
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    if "@" in authority:
        userinfo, host = authority.rsplit("@", 1)
        if ":" in userinfo:
            reasons.append("a password in the URL")
        elif scheme.lower() not in _ACCOUNT_SCHEMES:
            reasons.append("a user name in the URL (it may be a token)")
        if reasons:
            authority = f"{REDACTED}@{host}"
    before_fragment, hashmark, fragment = tail.partition("#")
    path, qmark, query = before_fragment.partition("?")
    if qmark:
        query = _params(query, reasons)
    if hashmark and "=" in fragment:  # `#access_token=...`; a git `#ref` has no '='
        fragment = _params(fragment, reasons)
    if not reasons:
        return url, []
    return f"{scheme}://{authority}{path}{qmark}{query}{hashmark}{fragment}", reasons


def redact_url(url: str) -> str:
    """`url` with userinfo and secret query values replaced by `***`; unchanged (the same
    string) when it carries none, so clean URLs round-trip byte for byte."""
    return _scan(url)[0]


def url_secret(url: str) -> str | None:
    """What in `url` is a credential ("a password in the URL", "query parameter 'token'"),
    never the value itself; None when it carries none."""
    reasons = _scan(url)[1]
    return reasons[0] if reasons else None


def redact_text(text: str) -> str:
    """Every URL in free text (an error message, a libgit2 error) redacted."""
    if "://" not in text:
        return text

    def one(m: re.Match[str]) -> str:
        found = m.group()
        core = found.rstrip(_TRAILING)
        return redact_url(core) + found[len(core) :]

    return _URL_IN_TEXT.sub(one, text)


# Logs ----------------------------------------------------------------------------------
# Compiled on first use: only `serve` logs, and every command imports this module (errors).
@cache
def _log_patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    any_scheme = r"[A-Za-z][A-Za-z0-9+.\-]*://"
    return (
        # a request target or URL path followed by a query: the query goes (access logs)
        (re.compile(rf"((?:{any_scheme}[^\s/?#\"']*)?/[^\s?#\"']*)\?[^\s#\"']*"), r"\1"),
        # the value of the headers that carry secrets (`authorization: Bearer x`)
        (
            re.compile(
                r"(?i)\b(authorization|proxy-authorization|mcp-session-id|cookie|set-cookie)"
                r"([\"']?\s*[:=,]\s*[\"']?)(?:(?:bearer|basic)\s+)?[^\s\"',;]+"
            ),
            rf"\1\2{REDACTED}",
        ),
        # `Bearer <token>` / `Basic <credentials>`: a token-like run, not the words "basic auth"
        (re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}"), rf"\1\2{REDACTED}"),
        # `token=value` outside a query
        (
            re.compile(r"(?i)\b(\w*(?:token|secret|passw|signature|api_?key)\w*=)[^\s&\"',;]+"),
            rf"\1{REDACTED}",
        ),
        # the MCP SDK names session ids ("session ID: x", "Terminating session: x"): the rest
        # of such a line is the id
        (re.compile(r"(?i)(\bsession(?:[ _-]?id)?\s*:\s*).*"), rf"\1{REDACTED}"),
        # the SDK's own ids are uuid4 hex, wherever they appear (a sha256 is 64: not matched)
        (
            re.compile(
                r"\b(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
                r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b"
            ),
            REDACTED,
        ),
    )


def redact_log(text: str) -> str:
    """A log line with query strings, session ids, bearer tokens and URL credentials out."""
    text = redact_text(text)
    for pattern, replacement in _log_patterns():
        text = pattern.sub(replacement, text)
    return text


class LogRedactor:
    """A filter for a logging handler (`handler.addFilter`): every record it emits (ours,
    the MCP SDK's, uvicorn's access log) is rendered once and redacted (`redact_log`), its
    traceback too. Not a `logging.Filter` subclass: importing logging here would put it on
    the start-up path of every command (errors imports this module)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging itself would report it
            return True
        record.msg, record.args = redact_log(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_log(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_log(record.stack_info)
        return True


def _formatter() -> Any:
    import logging

    return logging.Formatter()
