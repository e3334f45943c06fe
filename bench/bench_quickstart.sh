#!/usr/bin/env bash
# The README's Quickstart demo command on a fresh clone: wall time and installed size.
# Usage: bash bench/bench_quickstart.sh [PYTHON_DIR]   (default /usr/bin: Debian's PEP 668 python3)
# Reads the command from the README, runs it in a clone of HEAD under a temp folder, prints
# the wall time, the size of .venv and its number of top-level site-packages entries.
set -euo pipefail
cd "$(dirname "$0")/.."
python_dir="${1:-/usr/bin}"
command="$(awk '/^## Quickstart/{q=1} q&&/^```sh/{getline; print; exit}' README.md)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git clone -q . "$tmp/clone"
cd "$tmp/clone"
start=$(date +%s.%N)
PATH="$python_dir:/usr/bin:/bin" bash -c "$command" >/dev/null 2>&1
end=$(date +%s.%N)
echo "command: $command"
echo "wall: $(echo "$end - $start" | bc) s"
echo "installed: $(du -sh .venv | cut -f1) ($(ls .venv/lib/python3*/site-packages | wc -l) site-packages entries)"
