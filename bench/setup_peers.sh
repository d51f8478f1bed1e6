#!/usr/bin/env bash
# Create bench/.peers/venv (gitignored) with the peer libraries the benchmark compares against.
# Usage: bash bench/setup_peers.sh [python]   (default: python3.11, else python3)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.peers/venv"
py="${1:-$(command -v python3.11 || command -v python3)}"
mkdir -p "$here/.peers"
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "agent-framework-core==1.23.0" "langchain-core"
"$venv/bin/python" - <<'PY'
from importlib.metadata import version
for name in ("agent-framework-core", "langchain-core"):
    print(f"{name}=={version(name)}")
PY
