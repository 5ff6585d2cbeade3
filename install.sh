#!/usr/bin/env sh
# Install the `ontoskills` command from this checkout. Idempotent: re-running upgrades in place.
#   - uses `uv tool` or `pipx` when present (their own isolated environments),
#   - otherwise creates a private venv with python3 (>= 3.10) and links the command,
#   - puts the command in ~/.local/bin (ONTOSKILLS_BIN_DIR overrides) and says what it did.
set -eu
REPO="$(cd "$(dirname "$0")" && pwd)"
BIN_DIR="${ONTOSKILLS_BIN_DIR:-$HOME/.local/bin}"
VENV="${ONTOSKILLS_VENV:-${XDG_DATA_HOME:-$HOME/.local/share}/ontoskills/venv}"
say() { printf 'install.sh: %s\n' "$*" >&2; }

mkdir -p "$BIN_DIR"
if [ -z "${ONTOSKILLS_FORCE_VENV:-}" ] && command -v uv >/dev/null 2>&1; then
  say "using uv: uv tool install $REPO"
  UV_TOOL_BIN_DIR="$BIN_DIR" uv tool install --quiet --force --reinstall "$REPO"
  how="uv tool (uninstall: uv tool uninstall ontoskills)"
elif [ -z "${ONTOSKILLS_FORCE_VENV:-}" ] && command -v pipx >/dev/null 2>&1; then
  say "using pipx: pipx install $REPO"
  PIPX_BIN_DIR="$BIN_DIR" pipx install --force "$REPO" >/dev/null
  how="pipx (uninstall: pipx uninstall ontoskills)"
else
  PY="${PYTHON:-python3}"
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    say "error: ontoskills needs Python >= 3.10 (found: $("$PY" --version 2>&1 || echo none))"
    exit 1
  fi
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating virtual environment $VENV"
    "$PY" -m venv "$VENV"
  fi
  say "installing ontoskills and its dependencies into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade "$REPO"
  ln -sf "$VENV/bin/ontoskills" "$BIN_DIR/ontoskills"
  how="venv $VENV (uninstall: rm -r $VENV $BIN_DIR/ontoskills)"
fi

"$BIN_DIR/ontoskills" --version >/dev/null
say "installed $("$BIN_DIR/ontoskills" --version) -> $BIN_DIR/ontoskills via $how"
case ":$PATH:" in
  *":$BIN_DIR:"*) ;;
  *)
    line="export PATH=\"$BIN_DIR:\$PATH\"  # added by ontoskills install.sh"
    for rc in "$HOME/.profile" "$HOME/.bashrc"; do
      if [ -f "$rc" ] || [ "$rc" = "$HOME/.profile" ]; then
        grep -qs "added by ontoskills install.sh" "$rc" || printf '\n%s\n' "$line" >> "$rc"
      fi
    done
    say "$BIN_DIR was not on PATH: added it to ~/.profile and ~/.bashrc (new shells);"
    say "for this shell run: export PATH=\"$BIN_DIR:\$PATH\""
    ;;
esac
