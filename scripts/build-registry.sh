#!/bin/sh
# Build the bundled registry (registry/index.json + registry/packages/) from registry/src/
# with the project's own commands: pack --from-skill-md, registry init, publish --trust official.
# Deterministic: running it twice gives the same bytes; tests/publish/test_bundled_registry.py
# checks that the committed registry/ is exactly what this script produces.
#
# Usage: scripts/build-registry.sh [OUT]   (OUT defaults to registry/; only index.json and
#        packages/ are replaced there, README.md and src/ are left alone)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-"$ROOT/registry"}
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  if [ -x "$ROOT/.venv/bin/python" ]; then PY="$ROOT/.venv/bin/python"; else PY=python3; fi
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM
# This checkout's code, an isolated home, no colours, no network.
run() {
  PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" ONTOSKILLS_HOME="$TMP/home" \
    ONTOSKILLS_OFFLINE=1 NO_COLOR=1 "$PY" -m ontoskills "$@"
}

run registry init --no-git --quiet "$TMP/registry"
for src in "$ROOT"/registry/src/*/; do
  name=$(basename "$src")
  run pack --from-skill-md "$src" --out "$TMP/pkg/$name" --quiet
  run publish "$TMP/pkg/$name" --registry "$TMP/registry" --trust official --quiet
done
run registry verify "$TMP/registry" --quiet

mkdir -p "$OUT"
rm -rf "$OUT/packages"
cp -R "$TMP/registry/packages" "$OUT/packages"
cp "$TMP/registry/index.json" "$OUT/index.json"
echo "built $OUT from registry/src/"
