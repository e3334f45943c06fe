#!/usr/bin/env bash
# Install the third-party MCP servers used by the integration tests.
#
#   bash plugins/mcp_bridge/tests/install_test_servers.sh CACHE_DIR
#
# Installs @modelcontextprotocol/server-everything, server-filesystem, server-memory and @playwright/mcp
# from npm with `npm install --prefix CACHE_DIR`
# (skipped when already there) and prints the line that points the tests at it:
#   export MYCODE_TEST_EVERYTHING_DIR=CACHE_DIR
# (mcp-server-time and mcp-server-git come from PyPI as dev dependencies of the workspace.)
set -euo pipefail

cache="${1:?usage: install_test_servers.sh CACHE_DIR}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"
target="$cache"
entry="$target/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "install_test_servers.sh: node and npm are required" >&2
    exit 1
fi

filesystem="$target/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
playwright="$target/node_modules/@playwright/mcp/cli.js"
memory="$target/node_modules/@modelcontextprotocol/server-memory/dist/index.js"
if [ ! -f "$entry" ] || [ ! -f "$filesystem" ] || [ ! -f "$playwright" ] || [ ! -f "$memory" ]; then
    npm install --prefix "$target" --no-audit --no-fund --loglevel=error \
        @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem \
        @modelcontextprotocol/server-memory@2026.8.31 @playwright/mcp >&2
fi
test -f "$entry" && test -f "$filesystem" && test -f "$playwright" && test -f "$memory"
echo "export MYCODE_TEST_EVERYTHING_DIR=$target"
