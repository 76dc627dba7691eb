"use strict";
// Replacement request handlers, and the TTL sweeper that walks the account
// the handlers capture.

const fs = require("fs");
const path = require("path");
const { LIB, lib } = require("./upstream");
const { state, NOT_FOUND, PARSED_BODY, json, headerPartitionKey, isExpired, nowSeconds } = require("./common");
const { readChangeFeed } = require("./feed");
const { batchDocuments } = require("./batch");

const { parsePartitionKey } = lib("utils/get-partition-from-header");

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

  // Fix: the account advertises its region endpoints in the scheme it
  // serves; with --no-ssl the stock server still said https://.
  "read-meta": original => (account, req, res, params) => {
    const body = original(account, req, res, params);
    if (!body) return body;
    const advertise = locations =>
      (locations || []).map(l => ({
        ...l,
        databaseAccountEndpoint: String(l.databaseAccountEndpoint).replace(/^https?:/, `${state.scheme}:`)
      }));
    return { ...body, writableLocations: advertise(body.writableLocations), readableLocations: advertise(body.readableLocations) };
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

// sweepExpired removes expired items nobody looked up; an error here must
// not take the server down, so it is logged and the next pass tries again.
function sweepExpired() {
  if (!state.account) return;
  const now = nowSeconds();
  try {
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
  } catch (err) {
    console.error(`cosmos-test-server: TTL sweep: ${err.stack || err}`);
  }
}

function installHandlerPatches() {
  const handlerDir = path.join(LIB, "handler");
  const names = fs
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

module.exports = { installHandlerPatches, sweepExpired };
