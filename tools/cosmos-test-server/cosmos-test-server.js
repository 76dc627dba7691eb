#!/usr/bin/env node
// Test-only Cosmos DB compatible server for hcpops.
//
// It runs @vercel/cosmosdb-server (pinned at 1.0.1) with some of its request
// handlers replaced at load time, because the stock server gets wrong exactly
// the behaviour a Cosmos store relies on: missing-item reads (500 instead of
// 404), partition-scoped queries, numeric partition-key-range ids, atomic
// transactional batches, TTL and the incremental change feed. See
// shared/reference/cosmos-test-server.md. Never use it outside tests: it keeps
// everything in memory and ignores authentication.
//
// Usage: node cosmos-test-server.js [-p PORT] [--host HOST] [--keep-alive] [--no-ssl]
"use strict";

const path = require("path");
const { AsyncLocalStorage } = require("async_hooks");

const PINNED_VERSION = "1.0.1";
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

// The package directory, checked against the pinned version: the patches below
// depend on its internals and must be re-verified on any upgrade.
function packageDir() {
  const manifest = require.resolve("@vercel/cosmosdb-server/package.json", { paths: [__dirname] });
  const { version } = require(manifest);
  if (version !== PINNED_VERSION) {
    throw new Error(`@vercel/cosmosdb-server is ${version}, want exactly ${PINNED_VERSION} (run npm ci)`);
  }
  return path.dirname(manifest);
}

const LIB = path.join(packageDir(), "lib");
const lib = name => require(path.join(LIB, name));

// installMemoizedParser loads the query engine's PEG parser with packrat
// memoization added. Generated without it, the parser backtracks
// exponentially in parenthesis depth: ARO-HCP's active-operations query
// took seconds to parse on every new container. This must run before
// anything loads @zeit/cosmosdb-query.
function installMemoizedParser() {
  const fs = require("fs");
  const Module = require("module");
  const file = require.resolve("@zeit/cosmosdb-query/lib/parser", { paths: [LIB] });
  let rules = 0;
  let src = fs.readFileSync(file, "utf8").replace(/^( *)function peg\$parse(\w+)\(\) \{$/gm, (_, indent, name) => {
    const rule = rules;
    rules += 1;
    return [
      `${indent}function peg$parse${name}() {`,
      `${indent}  const key = peg$currPos * PEG_RULE_COUNT + ${rule};`,
      `${indent}  const hit = peg$memo.get(key);`,
      `${indent}  if (hit !== undefined) { peg$currPos = hit.end; return hit.result; }`,
      `${indent}  const result = peg$parse${name}$uncached();`,
      `${indent}  peg$memo.set(key, { end: peg$currPos, result });`,
      `${indent}  return result;`,
      `${indent}}`,
      `${indent}function peg$parse${name}$uncached() {`
    ].join("\n");
  });
  const entry = "function peg$parse(input, options) {";
  if (rules < 50 || !src.includes(entry)) {
    throw new Error(`unexpected layout of ${file} (${rules} rules): cannot memoize it`);
  }
  src = src.replace(entry, `${entry}\n  const peg$memo = new Map();`).replace(/PEG_RULE_COUNT/g, String(rules));
  const parser = new Module(file, module);
  parser.filename = file;
  parser.paths = Module._nodeModulePaths(path.dirname(file));
  parser._compile(src, file);
  parser.loaded = true;
  require.cache[file] = parser;
}
installMemoizedParser();

const jsonModule = lib("json");
const documentOperations = lib("handler/_document-operations");
const { patchOperation } = lib("handler/_patch-operations");
const { parsePartitionKey } = lib("utils/get-partition-from-header");
const Documents = lib("account/documents").default;
const builtins = require(require.resolve("@zeit/cosmosdb-query/lib/builtin-functions", { paths: [LIB] }));
const queryHelpers = require(require.resolve("@zeit/cosmosdb-query/lib/helpers", { paths: [LIB] }));

// Server-wide state, owned by this process only.
const state = {
  account: null, // captured from the first request; the TTL sweeper walks it
  lsn: 0, // last change sequence number handed out
  lsnOf: new WeakMap(), // stored document object -> the sequence number of its write
  queryScope: new AsyncLocalStorage() // partition key of the current query request
};

const NOT_FOUND = () => ({
  code: "NotFound",
  message: "Entity with the specified id does not exist in the system."
});

// headerPartitionKey returns the single partition key value the request is
// scoped to, or undefined for none ("[]", "[{}]", absent or unparsable).
function headerPartitionKey(req) {
  const raw = req.headers["x-ms-documentdb-partitionkey"];
  const header = Array.isArray(raw) ? raw[0] : raw;
  if (!header) return undefined;
  let parsed;
  try {
    parsed = JSON.parse(header);
  } catch (err) {
    return undefined;
  }
  const value = Array.isArray(parsed) ? parsed[0] : parsed;
  return ["string", "number", "boolean"].includes(typeof value) ? value : undefined;
}

function isExpired(collection, doc, nowSeconds) {
  const coll = collection.read();
  if (!coll || coll.defaultTtl === undefined || coll.defaultTtl === null) return false;
  const ttl = typeof doc.ttl === "number" ? doc.ttl : coll.defaultTtl;
  return ttl > 0 && doc._ts + ttl <= nowSeconds;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

// --- Document store patches -------------------------------------------------

// Every document write gets the next sequence number; the change feed orders
// and resumes by it. It is kept out of the document body. The body does get
// _attachments, a system field real Cosmos DB always writes.
const originalSet = Documents.prototype._set;
Documents.prototype._set = function setWithLsn(data) {
  data._attachments = "attachments/"; // eslint-disable-line no-param-reassign
  state.lsn += 1;
  state.lsnOf.set(data, state.lsn);
  return originalSet.call(this, data);
};

// A query made under a partition-key scope sees only that partition. query()
// is synchronous, so swapping _data for its duration is safe.
const originalQuery = Documents.prototype.query;
Documents.prototype.query = function scopedQuery(params, options) {
  const scope = state.queryScope.getStore();
  if (!scope || scope.partitionKey === undefined) {
    return originalQuery.call(this, params, options);
  }
  const all = this._data;
  const inPartition = new Map();
  for (const [rid, item] of all) {
    if (this._getPartition(item.read()) === scope.partitionKey) inPartition.set(rid, item);
  }
  this._data = inPartition;
  try {
    return originalQuery.call(this, params, options);
  } finally {
    this._data = all;
  }
};

// Handlers that must look at a body before the stock handler does park the
// parsed value on the request; the stock handlers read it through lib/json.
const PARSED_BODY = Symbol("parsedBody");
const originalJson = jsonModule.default;
jsonModule.default = req => (PARSED_BODY in req ? Promise.resolve(req[PARSED_BODY]) : originalJson(req));
const json = req => jsonModule.default(req);

// Compiled queries are shared by all containers (stock: one cache per
// container), so each test database does not compile the same SQL again.
const Items = lib("account/items").default;
const originalGetQuery = Items.prototype._getQuery;
const compiledQueries = new Map();
Items.prototype._getQuery = function sharedQuery(sql) {
  let query = compiledQueries.get(sql);
  if (!query) {
    query = originalGetQuery.call(this, sql);
    if (compiledQueries.size >= 1000) compiledQueries.clear();
    compiledQueries.set(sql, query);
  }
  return query;
};

// --- Query language patches ---------------------------------------------------

const typeOf = v => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

// Cosmos compares values of different types as undefined, so `c.x != 'a'`
// does not match documents where c.x is null (the engine said true).
const originalEqual = queryHelpers.equal;
queryHelpers.equal = (a, b) => {
  if (a !== undefined && b !== undefined && typeOf(a) !== typeOf(b)) return undefined;
  return originalEqual(a, b);
};

// String functions with Cosmos's optional third argument: ignore case.
function stringFunction(name, test) {
  return (...args) => {
    if (args.length < 2 || args.length > 3) {
      throw new Error(`The ${name} function requires 2 or 3 argument(s)`);
    }
    const [a, b, ignoreCase] = args;
    if (typeof a !== "string" || typeof b !== "string") return undefined;
    if (ignoreCase !== undefined && typeof ignoreCase !== "boolean") return undefined;
    return ignoreCase ? test(a.toLowerCase(), b.toLowerCase()) : test(a, b);
  };
}
builtins.STARTSWITH = stringFunction("STARTSWITH", (a, b) => a.startsWith(b));
builtins.ENDSWITH = stringFunction("ENDSWITH", (a, b) => a.endsWith(b));
builtins.CONTAINS = stringFunction("CONTAINS", (a, b) => a.includes(b));
builtins.STRINGEQUALS = stringFunction("STRINGEQUALS", (a, b) => a === b);
builtins.ARRAYCONTAINS = builtins.ARRAY_CONTAINS;

// --- Handler patches ------------------------------------------------------------

const handlerPatches = {
  // Fix: a point read of a missing (or expired) item is 404, not a 500 crash.
  "read-document": original => (account, req, res, params) => {
    const collection = account.database(params.dbId).collection(params.collId);
    if (collection.read()) {
      let partitionKey;
      try {
        partitionKey = parsePartitionKey(req.headers["x-ms-documentdb-partitionkey"], params.docId);
      } catch (err) {
        return original(account, req, res, params);
      }
      const doc = collection.document(params.docId, partitionKey).read();
      if (!doc || isExpired(collection, doc, nowSeconds())) {
        res.statusCode = 404;
        return NOT_FOUND();
      }
    }
    return original(account, req, res, params);
  },

  // Fix: partition key range ids are strings (the Go SDK refuses numbers).
  "read-partition-key-ranges": original => async (account, req, res, params) => {
    const body = await original(account, req, res, params);
    if (body && Array.isArray(body.PartitionKeyRanges)) {
      body.PartitionKeyRanges = body.PartitionKeyRanges.map(r => ({ ...r, id: String(r.id) }));
    }
    return body;
  },

  // Fix: a query sent with a partition key only sees that partition.
  "query-documents": original => (account, req, res, params) => {
    const partitionKey = headerPartitionKey(req);
    if (partitionKey !== undefined) {
      // The scope replaces the stock check that the SQL names the key.
      req.headers["x-ms-documentdb-query-enablecrosspartition"] = "true";
    }
    return state.queryScope.run({ partitionKey }, () => original(account, req, res, params));
  },

  // Fix: the document's partition key must match the request's.
  "create-document": original => withPartitionCheck(original),
  "upsert-document": original => withPartitionCheck(original),
  "replace-document": original => withPartitionCheck(original),

  // Fix: incremental change feed (A-IM) instead of a full listing then 304 forever.
  "read-documents": original => (account, req, res, params) => {
    if (!req.headers["a-im"]) return original(account, req, res, params);
    return readChangeFeed(account, req, res, params);
  },

  // Fix: atomic transactional batch with the header partition key and Patch.
  "batch-documents": () => batchDocuments
};

// withPartitionCheck buffers the body to compare the document's partition key
// with the header, then hands the parsed body to the stock handler.
function withPartitionCheck(original) {
  return async (account, req, res, params) => {
    const body = await json(req);
    const collection = account.database(params.dbId).collection(params.collId);
    const want = headerPartitionKey(req);
    if (collection.read() && want !== undefined && body && typeof body === "object") {
      const got = collection.documents._getPartition(body);
      if (got !== want) {
        res.statusCode = 400;
        return {
          code: "BadRequest",
          message: `PartitionKey extracted from document (${JSON.stringify(got)}) doesn't match the one specified in the header (${JSON.stringify(want)}).`
        };
      }
    }
    req[PARSED_BODY] = body;
    return original(account, req, res, params);
  };
}

function readChangeFeed(account, req, res, { dbId, collId }) {
  delete req.headers["a-im"]; // keeps index.js from forcing etag 1 / 304
  const collection = account.database(dbId).collection(collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return NOT_FOUND();
  }
  const ifNoneMatch = req.headers["if-none-match"];
  let position = 0;
  if (ifNoneMatch && ifNoneMatch !== "*") {
    position = Number(String(ifNoneMatch).replace(/"/g, ""));
    if (!Number.isFinite(position) || position < 0) {
      res.statusCode = 400;
      return { code: "BadRequest", message: `invalid If-None-Match continuation ${JSON.stringify(ifNoneMatch)}` };
    }
  } else if (ifNoneMatch === "*") {
    position = state.lsn; // "from now"
  }
  let since;
  const ims = req.headers["if-modified-since"];
  if (!ifNoneMatch && ims) {
    const ms = Date.parse(ims);
    if (Number.isNaN(ms)) {
      res.statusCode = 400;
      return { code: "BadRequest", message: `invalid If-Modified-Since ${JSON.stringify(ims)}` };
    }
    since = Math.floor(ms / 1000);
  }
  const partitionKey = headerPartitionKey(req);
  const docs = collection.documents;
  const now = nowSeconds();
  let changes = [];
  for (const item of docs._data.values()) {
    const doc = item.read();
    const lsn = state.lsnOf.get(doc) || 0;
    if (lsn <= position || isExpired(collection, doc, now)) continue;
    if (partitionKey !== undefined && docs._getPartition(doc) !== partitionKey) continue;
    if (since !== undefined && doc._ts < since) continue;
    changes.push({ doc, lsn });
  }
  changes.sort((a, b) => a.lsn - b.lsn);
  const max = parseInt(req.headers["x-ms-max-item-count"], 10);
  let etag = Math.max(state.lsn, position);
  if (max > 0 && changes.length > max) {
    changes = changes.slice(0, max);
    etag = changes[changes.length - 1].lsn;
  }
  res.setHeader("etag", `"${etag}"`);
  res.setHeader("x-ms-item-count", String(changes.length));
  if (changes.length === 0) {
    res.statusCode = 304;
    return undefined;
  }
  return { _rid: collection.read()._rid, Documents: changes.map(c => c.doc), _count: changes.length };
}

async function batchDocuments(account, req, res, { dbId, collId }) {
  const body = await json(req);
  const collection = account.database(dbId).collection(collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return NOT_FOUND();
  }
  if (!Array.isArray(body)) {
    res.statusCode = 400;
    return { message: "Invalid request body" };
  }
  const headerKey = req.headers["x-ms-documentdb-partitionkey"];
  const batchPartition = headerPartitionKey(req);
  const docs = collection.documents;
  const saved = { data: new Map(docs._data), index: new Map(docs._index), ridCount: docs._ridCount };
  const results = [];
  let failed = -1;
  for (let i = 0; i < body.length && failed < 0; i += 1) {
    const op = body[i] || {};
    let result;
    try {
      result = runBatchOperation(collection, op, headerKey, batchPartition);
    } catch (err) {
      result = { statusCode: 400, body: { code: "BadRequest", message: err.message } };
    }
    if (result.unsupported) {
      restore(docs, saved);
      res.statusCode = 400;
      return { code: "BadRequest", message: result.unsupported };
    }
    results.push(result);
    if (result.statusCode >= 400) failed = i;
  }
  if (failed >= 0) {
    restore(docs, saved);
    res.statusCode = 207;
    return body.map((_, i) =>
      i === failed
        ? { statusCode: results[i].statusCode, requestCharge: 0, resourceBody: results[i].body }
        : { statusCode: 424, requestCharge: 0 }
    );
  }
  return results.map(r => {
    const out = { statusCode: r.statusCode, requestCharge: 1 };
    if (r.body && r.body._etag) out.eTag = r.body._etag;
    if (r.body !== undefined) out.resourceBody = r.body;
    return out;
  });
}

function restore(docs, saved) {
  docs._data = saved.data;
  docs._index = saved.index;
  docs._ridCount = saved.ridCount;
}

function runBatchOperation(collection, op, headerKey, batchPartition) {
  const input = { ...op, partitionKey: op.partitionKey !== undefined ? op.partitionKey : headerKey };
  const resource = op.resourceBody;
  const mismatch = () => {
    if (batchPartition === undefined || !resource || typeof resource !== "object") return null;
    const got = collection.documents._getPartition(resource);
    if (got === batchPartition) return null;
    return {
      statusCode: 400,
      body: { code: "BadRequest", message: "PartitionKey extracted from document doesn't match the batch partition key." }
    };
  };
  switch (op.operationType) {
    case "Create":
      return mismatch() || documentOperations.createOperation(collection, input);
    case "Upsert":
      return mismatch() || documentOperations.upsertOperation(collection, input);
    case "Replace":
      if (op.id !== undefined && resource && resource.id !== op.id) {
        return { statusCode: 400, body: { code: "BadRequest", message: "The id in the operation and in the document differ." } };
      }
      return mismatch() || documentOperations.replaceOperation(collection, input);
    case "Read":
      return documentOperations.readOperation(collection, input);
    case "Delete":
      return documentOperations.deleteOperation(collection, input);
    case "Patch":
      return patchOperation(collection, {
        id: op.id,
        partitionKey: input.partitionKey,
        ifMatch: op.ifMatch,
        operations: resource ? resource.operations : undefined,
        condition: resource ? resource.condition : undefined
      });
    default:
      return { unsupported: `Operation type '${op.operationType}' is not supported in Batch.` };
  }
}

// --- TTL -----------------------------------------------------------------------

function sweepExpired() {
  if (!state.account) return;
  const now = nowSeconds();
  for (const database of state.account.databases._data.values()) {
    for (const collection of database.collections._data.values()) {
      const coll = collection.read();
      if (!coll || coll.defaultTtl === undefined || coll.defaultTtl === null) continue;
      const docs = collection.documents;
      for (const item of [...docs._data.values()]) {
        const doc = item.read();
        if (isExpired(collection, doc, now)) docs.delete(doc.id, docs._getPartition(doc));
      }
    }
  }
}

// --- Startup ---------------------------------------------------------------------

function installHandlerPatches() {
  const handlerDir = path.join(LIB, "handler");
  const names = require("fs")
    .readdirSync(handlerDir)
    .filter(f => f.endsWith(".js") && !f.startsWith("_"))
    .map(f => f.slice(0, -3));
  for (const name of Object.keys(handlerPatches)) {
    if (!names.includes(name)) throw new Error(`handler ${name} not found in ${handlerDir}`);
  }
  for (const name of names) {
    const mod = require(path.join(handlerDir, name));
    const patched = handlerPatches[name] ? handlerPatches[name](mod.default) : mod.default;
    // Every handler records the account so the TTL sweeper can reach it.
    mod.default = (account, ...rest) => {
      state.account = account;
      return patched(account, ...rest);
    };
  }
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
