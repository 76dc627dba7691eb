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
// Usage: node cosmos-test-server.js [-p PORT] [--host HOST] [--keep-alive] [--no-ssl]
"use strict";

// Loaded first: it checks the pinned version and memoizes the query parser
// before anything else loads the query engine.
require("./lib/upstream");

const { installEnginePatches } = require("./lib/engine");
const { installHandlerPatches, sweepExpired } = require("./lib/handlers");
const { lib } = require("./lib/upstream");
const { state } = require("./lib/common");

const SWEEP_INTERVAL_MS = 250;

function parseArgs(argv) {
  const args = { port: 8081, host: "127.0.0.1", keepAlive: false, ssl: true };
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
    console.log("Usage: node cosmos-test-server.js [-p PORT] [--host HOST] [--keep-alive] [--no-ssl]");
    return;
  }
  state.scheme = args.ssl ? "https" : "http";
  installEnginePatches();
  installHandlerPatches(); // before lib/index.js loads the router
  const { createHttpServer, createHttpsServer } = lib("index");
  const create = args.ssl ? createHttpsServer : createHttpServer;
  const server = create({ keepAlive: args.keepAlive });
  server.on("error", err => {
    console.error(`cosmos-test-server: ${err.message}`);
    process.exit(1);
  });
  server.listen(args.port, args.host, () => {
    const { port } = server.address();
    const scheme = args.ssl ? "https" : "http";
    console.log(`cosmos-test-server ready at ${scheme}://${args.host}:${port}/ keepAlive=${args.keepAlive}`);
  });
  setInterval(sweepExpired, SWEEP_INTERVAL_MS);
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
}

main();
