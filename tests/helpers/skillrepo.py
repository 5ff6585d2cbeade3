"""Synthetic Agent Skills repositories (a folder per skill with a SKILL.md) for the `skills`
registry kind: written from a dict of path -> text, optionally committed with pygit2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.registry import commit_all


def skill_md(name: str, description: str, body: str = "", **extra: str) -> str:
    head = "".join(f"{k}: {v}\n" for k, v in extra.items())
    return f"---\nname: {name}\ndescription: {description}\n{head}---\n\n{body}"


BASIC = {
    "README.md": "# A repository of skills\n",
    "skills/pdf-tools/SKILL.md": skill_md(
        "pdf-tools",
        "Fill and merge PDF forms. Use when the user asks to fill a PDF form.",
        "# PDF tools\n\nRead FORMS.md first.\n\n## Rules\n\n- Never flatten a form before "
        "checking its fields.\n- Always keep the original file.\n\n```bash\npython "
        "scripts/fill.py in.pdf\n```\n",
    ),
    "skills/pdf-tools/scripts/fill.py": "print('fill')\n",
    "skills/pdf-tools/FORMS.md": "# Forms\n\nHow to fill forms.\n",
    "skills/git-helper/SKILL.md": skill_md(
        "git-helper", "Rebase and bisect git histories.", "# Git\n\nUse `git bisect`.\n"
    ),
    "template/SKILL.md": skill_md("template-skill", "Replace with a description."),
}


def write_repo(root: Path, files: dict[str, str | bytes], *, git: bool = False) -> Path:
    """Write `files` under root (created); with git=True commit them (returns root)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        if rel.endswith(".py") or rel.endswith(".sh"):
            path.chmod(0o755)
    if git:
        commit_all(root, "skills")
    return root


def github_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, Path, str]]:
    """A fixture body: BASIC committed as `acme/skills` on a loopback git HTTP server that
    `github:` points at (ONTOSKILLS_GITHUB_URL); yields (work tree, bare repo, base URL).
    Skips without the git binary."""
    from tests.helpers.githttp import GitHttpServer, bare_copy, git_cli

    try:
        git_cli()
    except Exception:  # pragma: no cover - the git binary is missing
        pytest.skip("needs the git binary")
    work = write_repo(tmp_path / "work", dict(BASIC), git=True)
    (tmp_path / "srv" / "acme").mkdir(parents=True)
    bare = bare_copy(work, tmp_path / "srv" / "acme" / "skills")
    with GitHttpServer(tmp_path / "srv") as srv:
        base = srv.url_for("").rstrip("/")
        monkeypatch.setenv("ONTOSKILLS_GITHUB_URL", base)
        yield work, bare, base
