#!/usr/bin/env sh
# Run the whole test suite from a fresh clone: makes .venv, installs the project with its
# test extras, checks style and types (ruff; mypy over ontoskills/), runs pytest in parallel
# (pytest-xdist: many tests wait on subprocesses, sockets and git, so workers overlap well
# even on 2 cores). Extra arguments go to pytest (`-n 0` runs serially; PYTEST_WORKERS sets
# the worker count).
set -eu
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import ontoskills, pytest, pytest_httpserver, onnx, xdist, mypy" 2>/dev/null \
   || [ pyproject.toml -nt .venv/.installed ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -e '.[test]'
  touch .venv/.installed
fi
.venv/bin/python -m ruff check ontoskills tests benchmarks
.venv/bin/python -m mypy  # files and settings: [tool.mypy] in pyproject.toml
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-auto}" "$@"
