#!/usr/bin/env bash
# The separate environment of one evaluation harness (its pins clash with ours), idempotently:
#   bash scripts/harness_env.sh NAME   ->  .harnesses/NAME, a venv with requirements/harness-NAME.txt installed.
# The identity tests (tests/test_harness_*.py) run the harness from there; .ci/run calls this for each, then runs them (pytest -m harness).
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: scripts/harness_env.sh NAME}
req=requirements/harness-$name.txt
[ -f "$req" ] || { echo "harness_env.sh: no $req" >&2; exit 2; }
env=.harnesses/$name
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$env/bin/python" -m pip --version >/dev/null 2>&1; then  # also repairs a venv left half-made
  rm -rf "$env"
  "$PYTHON" -m venv "$env"
fi
# reinstall only when the requirements changed since the last complete install
if ! cmp -s "$req" "$env/.installed-requirements"; then
  "$env/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  cp "$req" "$env/.installed-requirements"
fi
echo "harness_env.sh: ready ($env)"
