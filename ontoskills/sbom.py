"""The lock as a CycloneDX SBOM (`ontoskills lock export --format cyclonedx`).

One component per locked package (group = author, name, version, a `pkg:generic` purl naming
its registry), each with one `file` sub-component per installed file and its SHA-256; the
registry, commit, trust tier, integrity digest and (signed registries) root key ids as
`ontoskills:*` properties; the embedding model as a machine-learning-model component. The
serial number is derived from the lock's bytes, so the same lock gives the same document
except for its timestamp. cyclonedx-python-lib builds it and validates it against the
bundled CycloneDX 1.6 JSON schema before it is written.
"""

from __future__ import annotations

import dataclasses
import re
import string
import uuid
import warnings
from pathlib import Path

from cyclonedx.model import (
    ExternalReference,
    ExternalReferenceType,
    HashAlgorithm,
    HashType,
    Property,
    XsUri,
)
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.dependency import Dependency
from cyclonedx.model.tool import Tool
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

from . import __version__
from .errors import LockFormatError
from .lockfile import (
    LockedFile,
    LockedPackage,
    LockedRegistry,
    Lockfile,
    is_local_url,
    read_lock_bytes,
)
from .redact import redact_url
from .sources import source_class


def _files(owner: str, files: list[LockedFile]) -> list[Component]:
    return [
        Component(
            type=ComponentType.FILE,
            name=f.path,
            bom_ref=f"{owner}#{f.path}",
            hashes=[HashType(alg=HashAlgorithm.SHA_256, content=f.sha256)],
            properties=[
                Property(name="ontoskills:size", value=str(f.size)),
                *([Property(name="ontoskills:executable", value="true")] if f.executable else []),
            ],
        )
        for f in sorted(files, key=lambda f: f.path)
    ]


# Lock URLs as CycloneDX `iri-reference`s (RFC 3987). A lock may hold what git or an HTTP
# client takes but an IRI does not: the scp form `git@host:org/repo.git` that `registry add`
# accepts (it made the whole lock unexportable), `|`, `^`, a backslash, a stray `%`, a second
# `#`. Each becomes the equivalent reference (the lock itself keeps what the user wrote).
_SCP = re.compile(r"([\w.-]+)@([\w.-]+):(.*)", re.DOTALL)  # lockfile.is_local_url's scp form
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_IRI_ASCII = frozenset(string.ascii_letters + string.digits + "-._~:/?@!$&'()*+,;=")
_HEX = frozenset(string.hexdigits)


def _ucschar(c: str) -> bool:
    """RFC 3987 ucschar: the non-ASCII characters an IRI may hold as they are."""
    cp = ord(c)
    if cp < 0x10000:
        return 0xA0 <= cp <= 0xD7FF or 0xF900 <= cp <= 0xFDCF or 0xFDF0 <= cp <= 0xFFEF
    plane, low = cp >> 16, cp & 0xFFFF
    return low <= 0xFFFD and (plane <= 13 or (plane == 14 and low >= 0x1000))


def _kept(c: str, in_host: bool) -> bool:
    if c in "[]":
        return in_host  # an IPv6 literal's brackets; anywhere else they are encoded
    if c.isascii():
        return c in _IRI_ASCII  # '#' is kept once, by _encode
    return c.isprintable() and _ucschar(c)  # never a bidi control or an invisible space


def _encode(url: str, start: int) -> str:
    """url (its scheme ends at `start`) with what an IRI cannot hold percent-encoded."""
    host_end = -1  # brackets are allowed in the authority only (an IPv6 literal)
    if url.startswith("//", start):
        ends = [i for i in (url.find(c, start + 2) for c in "/?#") if i != -1]
        host_end = min(ends, default=len(url))
    out, fragment = [url[:start]], False
    for i in range(start, len(url)):
        c = url[i]
        if c == "%" and url[i + 1 : i + 3] and set(url[i + 1 : i + 3]) <= _HEX:
            out.append(c)
        elif c == "#" and not fragment:
            fragment = True
            out.append(c)
        elif _kept(c, in_host=i < host_end):
            out.append(c)
        else:
            out.append("".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")))
    return "".join(out)


def _reference(reg: LockedRegistry | None) -> str | None:
    """The registry's URL as a reference another machine can follow, or None (a path)."""
    if reg is None or is_local_url(reg.url):
        return None
    url = reg.url
    scp = _SCP.fullmatch(url)
    if scp is not None:  # git's own equivalent: ssh://[user@]host/path (git-clone(1) URLS)
        user, host, path = scp.groups()
        url = f"ssh://{user}@{host}/{path.lstrip('/')}"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in url):
        raise LockFormatError(
            f"the lock cannot be exported as CycloneDX 1.6: registry {reg.name!r} has a "
            "control character in its URL",
            hint="restore the lock from version control, or regenerate it with "
            "`ontoskills install`",
        )
    scheme = _SCHEME.match(url)
    return None if scheme is None else _encode(url, scheme.end())


def _registry_refs(reg: LockedRegistry | None) -> list[ExternalReference]:
    url = _reference(reg)
    # A local path is not a URI another machine could follow. An IPv6 host ([::1]) is valid
    # RFC 3987, but the bundled validator (rfc3987-syntax) refuses every IPv6 literal: the
    # purl's repository_url still names it.
    if reg is None or url is None or "[" in url:
        return []
    vcs = source_class(reg.kind).vcs  # the lock's kind was checked when it was read
    kind = ExternalReferenceType.VCS if vcs else ExternalReferenceType.DISTRIBUTION
    return [ExternalReference(type=kind, url=XsUri(url))]


def _package(pkg: LockedPackage, reg: LockedRegistry | None) -> Component:
    author, name = pkg.id.split("/", 1)
    qualifiers = {"registry": pkg.registry}
    url = _reference(reg)
    if url is not None:
        qualifiers["repository_url"] = url  # packageurl percent-encodes it for the purl
    props = {
        "ontoskills:registry": pkg.registry,
        "ontoskills:trust_tier": pkg.trust_tier,
        "ontoskills:integrity": pkg.integrity,
        "ontoskills:root": pkg.root,
        "ontoskills:with_embeddings": str(pkg.with_embeddings).lower(),
    }
    commit = pkg.commit or (reg.commit if reg else None)
    if commit:
        props["ontoskills:commit"] = commit
    if reg is not None and reg.index_sha256:
        props["ontoskills:index_sha256"] = reg.index_sha256
    if reg is not None and reg.signed:
        props["ontoskills:signed"] = "true"
        props["ontoskills:root_keys"] = " ".join(reg.root_keys)
    for skill, enabled in sorted(pkg.skills.items()):
        props[f"ontoskills:skill:{skill}"] = "enabled" if enabled else "disabled"
    return Component(
        type=ComponentType.LIBRARY,
        name=name,
        group=author,
        version=pkg.version or "0",
        bom_ref=pkg.id,
        purl=PackageURL("generic", author, name, pkg.version or None, qualifiers),
        external_references=_registry_refs(reg),
        properties=[Property(name=k, value=v) for k, v in props.items()],
        components=_files(pkg.id, pkg.files),
    )


def build(lock: Lockfile, lock_bytes: bytes, subject: str) -> Bom:
    root = Component(type=ComponentType.APPLICATION, name=subject, bom_ref="ontoskills-home")
    meta = BomMetaData(component=root)
    meta.tools.tools.add(Tool(vendor="ontoskills", name="ontoskills", version=__version__))
    components = [
        _package(p, _shown(lock.registries.get(p.registry)))
        for _, p in sorted(lock.packages.items())
    ]
    if lock.embeddings is not None:
        m = lock.embeddings
        components.append(
            Component(
                type=ComponentType.MACHINE_LEARNING_MODEL,
                name=m.model,
                version=m.revision,
                bom_ref="embeddings",
                properties=[
                    Property(name="ontoskills:dimension", value=str(m.dimension)),
                    Property(name="ontoskills:source", value=redact_url(m.source)),
                ],
                components=_files("embeddings", m.files),
            )
        )
    bom = Bom(
        components=components,
        metadata=meta,
        serial_number=uuid.uuid5(uuid.NAMESPACE_URL, "ontoskills-lock:" + _sha(lock_bytes)),
    )
    bom.dependencies.add(
        Dependency(ref=root.bom_ref, dependencies=[Dependency(ref=c.bom_ref) for c in components])
    )
    for c in components:
        bom.dependencies.add(Dependency(ref=c.bom_ref))
    return bom


def _shown(reg: LockedRegistry | None) -> LockedRegistry | None:
    """The registry as the SBOM names it: a hand-edited lock's `user:password@` or
    `?token=` never reaches the document (redact.redact_url; the host and path stay)."""
    return None if reg is None else dataclasses.replace(reg, url=redact_url(reg.url))


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def to_json(bom: Bom) -> str:
    """Serialized and validated against the CycloneDX 1.6 schema (bundled: offline)."""
    text = JsonV1Dot6(bom).output_as_string(indent=2)
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        # A lock we wrote always exports; one edited by hand can hold what the schema
        # refuses (a 500 KB version, control characters in a URL). One line, escaped: the
        # validator's message is a multi-line dump that repeats the value.
        first = (str(error).strip().splitlines() or ["?"])[0][:200]
        shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in first)
        where = getattr(error.data, "json_path", None)  # jsonschema's, e.g. $.components[0]
        at = f" at {where}" if isinstance(where, str) else ""
        raise LockFormatError(
            f"the lock cannot be exported as CycloneDX 1.6{at}: {shown}",
            hint="a value in the lock is not one CycloneDX accepts (edited by hand?): restore "
            "the lock from version control, or regenerate it with `ontoskills install`",
        )
    return text + "\n"


def export(lock: Lockfile, lock_path: Path) -> str:
    data = read_lock_bytes(lock_path) or b""
    with warnings.catch_warnings():
        # cyclonedx-python-lib warns (on stderr) about values past the schema's limits; the
        # validation in to_json reports them once, as an error.
        warnings.simplefilter("ignore", UserWarning)
        return to_json(build(lock, data, subject=f"ontoskills lock {lock_path.name}"))
