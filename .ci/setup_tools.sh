#!/usr/bin/env bash
# Test servers for tests/tools and tests/mcp (idempotent; works as root on a fresh Debian 12):
#   Node.js + npm (apt), npm @modelcontextprotocol/server-everything and server-filesystem into
#   <repo>/.cache/npm, and PyPI mcp-server-time into the given venv (it is in the `dev` extra
#   too, so this is a no-op after `pip install -e ".[dev]"`).
# Usage: bash .ci/setup_tools.sh [path/to/venv]   (default: <repo>/.venv)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${1:-$REPO/.venv}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm
  else
    echo "setup_tools: node and npm are missing; install them (apt-get install nodejs npm)" >&2
    exit 1
  fi
fi

# Pinned: the tests call these servers' tools by name (echo, get-sum,
# trigger-long-running-operation, read_text_file...), and the servers have renamed tools before.
NPM_VERSION="2026.8.31"
mkdir -p "$REPO/.cache/npm"
for pkg in server-everything server-filesystem; do
  manifest="$REPO/.cache/npm/node_modules/@modelcontextprotocol/$pkg/package.json"
  if [ ! -f "$manifest" ] || ! grep -q "\"version\": \"$NPM_VERSION\"" "$manifest"; then
    npm install --prefix "$REPO/.cache/npm" --no-audit --no-fund --loglevel=error \
      "@modelcontextprotocol/$pkg@$NPM_VERSION"
  fi
done

if [ -x "$VENV/bin/python" ] && ! "$VENV/bin/python" -c "import mcp_server_time" 2>/dev/null; then
  "$VENV/bin/pip" install -q "mcp-server-time>=2026.10"
fi
echo "setup_tools: node $(node --version), MCP test servers in $REPO/.cache/npm"
