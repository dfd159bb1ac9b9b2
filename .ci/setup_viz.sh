#!/usr/bin/env bash
# Programs the visualize tests render with: Graphviz `dot`, PlantUML, headless Chromium (+ fonts),
# and npm `mermaid` under <repo>/.cache/viz-npm. Idempotent; runs as root on a fresh Debian 12.
# mermaid has a prefix of its own: setup_tools.sh installs into .cache/npm, and an npm install
# there (e.g. run at the same time) prunes packages its package.json does not list.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
export DEBIAN_FRONTEND=noninteractive

need=()
command -v dot >/dev/null || need+=(graphviz)
command -v plantuml >/dev/null || need+=(plantuml)
command -v chromium >/dev/null || need+=(chromium)
command -v npm >/dev/null || need+=(npm)
dpkg -s fonts-dejavu-core >/dev/null 2>&1 || need+=(fonts-dejavu-core)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi

if [ ! -f "$REPO/.cache/viz-npm/node_modules/mermaid/dist/mermaid.min.js" ]; then
  mkdir -p "$REPO/.cache/viz-npm"
  npm install --prefix "$REPO/.cache/viz-npm" --no-audit --no-fund --silent mermaid@11
fi
