"use strict";
// Atomic transactional batch: all steps or none, 207 with 424s on failure.

const { lib } = require("./upstream");
const { NOT_FOUND, json, headerPartitionKey } = require("./common");

const documentOperations = lib("handler/_document-operations");
const { patchOperation } = lib("handler/_patch-operations");

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

module.exports = { batchDocuments };
