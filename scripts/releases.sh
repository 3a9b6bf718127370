#!/usr/bin/env bash
# The release matrix: every corpus entry's repro script under each supported torch,
# each verdict recorded in the entry's `versions` (docs/triage.md, "Every release").
#
#   scripts/releases.sh [CORPUS] [RELEASES...]     # default: corpus/ and 2.11.0 2.12.1 2.13.0 2.14.1
#   ENVS=/some/folder scripts/releases.sh          # where the environments live (default: .dcefuzz/envs)
#
# Each release gets a virtual environment of its own under $ENVS (created once, then
# reused): torch at that version, and numpy (the scripts need nothing else). 2.11, 2.12
# and 2.14.1 are CUDA builds of some 5.5 GB that run on the CPU; never run this in CI.
# Then `dcefuzz replay --python <that env's python> CORPUS` runs every entry's script
# there and writes the verdict under that torch's version. Run it from a checkout
# where dcefuzz is installed (its `python -m fuzzer` renders the scripts).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${1:-corpus}"
shift || true
RELEASES=("$@")
[[ ${#RELEASES[@]} -eq 0 ]] && RELEASES=(2.11.0 2.12.1 2.13.0 2.14.1)
ENVS="${ENVS:-.dcefuzz/envs}"
PY="${PYTHON:-python3}"
mkdir -p "$ENVS"
for release in "${RELEASES[@]}"; do
  env="$ENVS/torch-$release"
  if ! "$env/bin/python" -c "import torch, numpy" 2>/dev/null; then
    echo "== creating $env (torch $release)"
    "$PY" -m venv "$env"
    "$env/bin/pip" install -q "torch==$release" numpy
  fi
  version=$("$env/bin/python" -c "import torch; print(torch.__version__)")
  echo "== $CORPUS under torch $version"
  # exit 1 means some entry reproduces there: the verdicts are the output, not a failure
  "$PY" -m fuzzer replay --python "$env/bin/python" "$CORPUS" || true
done
"$PY" -m fuzzer bugs "$CORPUS" | grep -E "^bug-|history" || true
