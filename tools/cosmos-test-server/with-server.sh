#!/usr/bin/env bash
# Runs a command beside the project's Cosmos-compatible test server:
# installs the server (npm ci) on first use, starts it on loopback over
# plain http, exports the settings hcpops reads for it (CosmosDB,
# COSMOS_DATABASE) and stops the server when the command ends.
#
# Usage: with-server.sh PORT COMMAND [ARGS...]   (PORT 0 picks a free one)
# make run-cosmos runs `bin/hcpopsctl dev` this way.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 PORT COMMAND [ARGS...]" >&2
  exit 2
fi
port=$1
shift
dir=$(cd "$(dirname "$0")" && pwd)

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "with-server: $tool is not installed: the Cosmos-compatible server needs node >= 20 and npm" >&2
    exit 1
  fi
done
if [ ! -f "$dir/node_modules/@vercel/cosmosdb-server/package.json" ]; then
  echo "with-server: installing the Cosmos-compatible server (npm ci, once)"
  (cd "$dir" && npm ci --no-audit --no-fund >/dev/null)
fi

log=$(mktemp -t cosmos-test-server.XXXXXX.log)
node "$dir/cosmos-test-server.js" -p "$port" --host 127.0.0.1 --keep-alive --no-ssl >"$log" 2>&1 &
server=$!
stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -f "$log"
}
trap stop EXIT
trap 'exit 130' INT TERM

# The server prints its address once it listens (the real port when PORT is 0).
endpoint=
for _ in $(seq 1 300); do
  endpoint=$(sed -n 's/^cosmos-test-server ready at \([^ ]*\) .*/\1/p' "$log")
  [ -n "$endpoint" ] && break
  if ! kill -0 "$server" 2>/dev/null; then
    echo "with-server: the Cosmos-compatible server exited:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.1
done
if [ -z "$endpoint" ]; then
  echo "with-server: the Cosmos-compatible server did not start within 30 s:" >&2
  cat "$log" >&2
  exit 1
fi

# The emulator's published key: the server checks no signature.
export CosmosDB="AccountEndpoint=${endpoint};AccountKey=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==;"
export COSMOS_DATABASE="${COSMOS_DATABASE:-hcpops}"
echo "with-server: Cosmos-compatible server at ${endpoint} (in memory: every start is an empty account), database ${COSMOS_DATABASE}"
set +e
"$@"
status=$?
set -e
exit "$status"
