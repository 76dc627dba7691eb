#!/usr/bin/env node
// Test-only Cosmos DB compatible server for hcpops.
//
// It runs @vercel/cosmosdb-server (pinned at 1.0.1) with some of its request
// handlers replaced at load time, because the stock server gets wrong exactly
// the behaviour a Cosmos store relies on: missing-item reads (500 instead of
// 404), partition-scoped queries, numeric partition-key-range ids, atomic
// transactional batches, TTL, the incremental change feed, REPLACE of every
// occurrence and the scheme of the advertised region endpoints. See
// shared/reference/cosmos-test-server.md. Never use it outside tests: it keeps
// everything in memory and ignores authentication.
//
// Over https (the default) it serves a certificate made at start, signed by
// a CA of this run whose file it names (lib/tls.js). With --identity-port it
// also runs a local managed-identity endpoint in App Service's shape and
// accepts the AAD tokens it mints, and no others (lib/identity.js).
//
// Usage: node cosmos-test-server.js [-p PORT] [--host HOST] [--keep-alive] [--no-ssl]
//          [--tls-dir DIR] [--identity-port PORT]
"use strict";

// Loaded first: it checks the pinned version and memoizes the query parser
// before anything else loads the query engine.
require("./lib/upstream");

const { installEnginePatches } = require("./lib/engine");
const { installHandlerPatches, sweepExpired } = require("./lib/handlers");
const { lib } = require("./lib/upstream");
const { state } = require("./lib/common");
const { makeCertificates } = require("./lib/tls");
const { Identity, authFailure } = require("./lib/identity");

const SWEEP_INTERVAL_MS = 250;

function parseArgs(argv) {
  const args = { port: 8081, host: "127.0.0.1", keepAlive: false, ssl: true, tlsDir: "", identityPort: -1 };
  const portValue = (flag, value) => {
    const port = Number(value);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new Error(`invalid ${flag} ${JSON.stringify(value)}: want an integer 0-65535`);
    }
    return port;
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    switch (arg) {
      case "-p":
      case "--port": {
        const value = argv[(i += 1)];
        const port = Number(value);
        if (!Number.isInteger(port) || port < 0 || port > 65535) {
          throw new Error(`invalid --port ${JSON.stringify(value)}: want an integer 0-65535`);
        }
        args.port = port;
        break;
      }
      case "--host":
        args.host = argv[(i += 1)];
        if (!args.host) throw new Error("--host needs a value");
        break;
      case "--keep-alive":
        args.keepAlive = true;
        break;
      case "--no-ssl":
        args.ssl = false;
        break;
      case "--tls-dir":
        args.tlsDir = argv[(i += 1)];
        if (!args.tlsDir) throw new Error("--tls-dir needs a value");
        break;
      case "--identity-port":
        args.identityPort = portValue(arg, argv[(i += 1)]);
        break;
      case "-h":
      case "--help":
        args.help = true;
        break;
      default:
        throw new Error(`unknown argument ${JSON.stringify(arg)}`);
    }
  }
  return args;
}

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`cosmos-test-server: ${err.message}`);
    process.exit(2);
  }
  if (args.help) {
    console.log("Usage: node cosmos-test-server.js [-p PORT] [--host HOST] [--keep-alive] [--no-ssl] [--tls-dir DIR] [--identity-port PORT]");
    return;
  }
  if (args.identityPort >= 0 && !args.ssl) {
    // azcore sends a bearer token over https only.
    console.error("cosmos-test-server: --identity-port needs https: drop --no-ssl");
    process.exit(2);
  }
  state.scheme = args.ssl ? "https" : "http";
  installEnginePatches();
  installHandlerPatches(); // before lib/index.js loads the router
  const { createHttpServer, createHttpsServer } = lib("index");
  let tls = null;
  if (args.ssl) {
    try {
      tls = makeCertificates(args.tlsDir);
    } catch (err) {
      console.error(`cosmos-test-server: ${err.message}`);
      process.exit(1);
    }
  }
  const server = args.ssl
    ? createHttpsServer({ keepAlive: args.keepAlive, cert: tls.cert, key: tls.key })
    : createHttpServer({ keepAlive: args.keepAlive });
  const identity = args.identityPort >= 0 ? new Identity() : null;
  guardRequests(server, identity);
  server.on("error", err => {
    console.error(`cosmos-test-server: ${err.message}`);
    process.exit(1);
  });
  const listen = () =>
    server.listen(args.port, args.host, () => {
      const { port } = server.address();
      const scheme = args.ssl ? "https" : "http";
      const ca = tls ? ` ca=${tls.caFile}` : "";
      console.log(`cosmos-test-server ready at ${scheme}://${args.host}:${port}/ keepAlive=${args.keepAlive}${ca}`);
    });
  if (identity) {
    // Printed before the ready line, so whoever waits for that has both.
    identity.listen(args.identityPort, args.host, url => {
      console.log(`cosmos-test-server identity endpoint at ${url} header=${identity.header}`);
      listen();
    });
  } else {
    listen();
  }
  setInterval(sweepExpired, SWEEP_INTERVAL_MS);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
}

// guardRequests refuses a request whose AAD token this process did not
// mint (401, as Cosmos DB answers one), before any handler sees it.
function guardRequests(server, identity) {
  const handlers = server.listeners("request");
  server.removeAllListeners("request");
  server.on("request", (req, res) => {
    const why = authFailure(req, identity);
    if (why) {
      res.statusCode = 401;
      res.setHeader("content-type", "application/json");
      res.setHeader("x-ms-activity-id", require("crypto").randomUUID());
      res.end(JSON.stringify({ code: "Unauthorized", message: `The input authorization token can't serve the request: ${why}.` }));
      return;
    }
    for (const h of handlers) h.call(server, req, res);
  });
}

main();
