#!/usr/bin/env bash
# Runs a command beside the project's Cosmos-compatible test server:
# installs the server (npm ci) on first use, starts it on loopback over
# https with a certificate made at start and a local managed-identity
# endpoint, exports what any Azure client needs to use it unchanged —
# IDENTITY_ENDPOINT and IDENTITY_HEADER (azidentity's App Service managed
# identity, which DefaultAzureCredential reads), COSMOS_CA_FILE (the CA it
# made) — and hcpops's settings for it (CosmosDB__accountEndpoint,
# CosmosDB__credential=managedidentity, COSMOS_DATABASE), and stops the
# server when the command ends. A CosmosDB connection string in the
# environment is unset: it would win over the identity. With
# COSMOS_ENV_FILE set, the environment a client beside it needs (the
# frontend's own binary: docs/beside-a-frontend.md) is written there.
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
node "$dir/cosmos-test-server.js" -p "$port" --host 127.0.0.1 --keep-alive --identity-port 0 >"$log" 2>&1 &
server=$!
env_file=
stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -f "$log"
  if [ -n "$env_file" ]; then rm -f "$env_file"; fi
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

ca=$(sed -n 's/^cosmos-test-server ready at .* ca=\(.*\)$/\1/p' "$log")
identity=$(sed -n 's/^cosmos-test-server identity endpoint at \([^ ]*\) header=.*$/\1/p' "$log")
header=$(sed -n 's/^cosmos-test-server identity endpoint at [^ ]* header=\(.*\)$/\1/p' "$log")
if [ -z "$ca" ] || [ -z "$identity" ] || [ -z "$header" ]; then
  echo "with-server: the server named no CA file or identity endpoint:" >&2
  cat "$log" >&2
  exit 1
fi

# What App Service gives a process with a managed identity; azidentity's
# ManagedIdentityCredential and DefaultAzureCredential read these.
export IDENTITY_ENDPOINT="$identity" IDENTITY_HEADER="$header"
export COSMOS_CA_FILE="$ca"
unset CosmosDB
export CosmosDB__accountEndpoint="$endpoint" CosmosDB__credential=managedidentity
export COSMOS_DATABASE="${COSMOS_DATABASE:-hcpops}"
echo "with-server: Cosmos-compatible server at ${endpoint} (in memory: every start is an empty account), database ${COSMOS_DATABASE}"
echo "with-server: managed identity at IDENTITY_ENDPOINT=${identity}; certificate CA at COSMOS_CA_FILE=${ca}"
# For a client beside it (the frontend's own binary): the same identity
# and CA, as a file to source; it holds IDENTITY_HEADER, so only its owner
# may read it, and it goes when the server does.
if [ -n "${COSMOS_ENV_FILE:-}" ]; then
  (
    umask 077
    {
      printf 'export IDENTITY_ENDPOINT=%q IDENTITY_HEADER=%q\n' "$identity" "$header"
      printf 'export SSL_CERT_FILE=%q COSMOS_CA_FILE=%q\n' "$ca" "$ca"
      printf 'export AZURE_TOKEN_CREDENTIALS=ManagedIdentityCredential\n'
      printf 'export DB_URL=%q DB_NAME=%q\n' "$endpoint" "$COSMOS_DATABASE"
      printf 'export CosmosDB__accountEndpoint=%q CosmosDB__credential=managedidentity COSMOS_DATABASE=%q\n' "$endpoint" "$COSMOS_DATABASE"
    } >"$COSMOS_ENV_FILE"
  )
  env_file=$COSMOS_ENV_FILE
  echo "with-server: the environment for a client beside it is in ${COSMOS_ENV_FILE} (source it)"
fi
set +e
"$@"
status=$?
set -e
exit "$status"
