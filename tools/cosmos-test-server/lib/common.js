"use strict";
// State and helpers shared by the patches.

const { AsyncLocalStorage } = require("async_hooks");
const { lib } = require("./upstream");

const jsonModule = lib("json");

// Server-wide state, owned by this process only.
const state = {
  account: null, // captured from the first request; the TTL sweeper walks it
  lsn: 0, // last change sequence number handed out
  lsnOf: new WeakMap(), // stored document object -> the sequence number of its write
  queryScope: new AsyncLocalStorage(), // partition key of the current query request
  scheme: "https" // what the server listens on; "http" with --no-ssl
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

function isExpired(collection, doc, now) {
  const coll = collection.read();
  if (!coll || coll.defaultTtl === undefined || coll.defaultTtl === null) return false;
  const ttl = typeof doc.ttl === "number" ? doc.ttl : coll.defaultTtl;
  return ttl > 0 && doc._ts + ttl <= now;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

// Handlers that must look at a body before the stock handler does park the
// parsed value on the request; the stock handlers read it through lib/json.
const PARSED_BODY = Symbol("parsedBody");
const originalJson = jsonModule.default;
jsonModule.default = req => (PARSED_BODY in req ? Promise.resolve(req[PARSED_BODY]) : originalJson(req));
const json = req => jsonModule.default(req);

module.exports = { state, NOT_FOUND, PARSED_BODY, json, headerPartitionKey, isExpired, nowSeconds };
