"use strict";
// The incremental change feed (A-IM), latest-version mode.

const { state, NOT_FOUND, headerPartitionKey, isExpired, nowSeconds } = require("./common");

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

module.exports = { readChangeFeed };
