"use strict";
// Patches to the server's document store and query engine.

const { lib, queryModule } = require("./upstream");
const { state, isExpired, nowSeconds } = require("./common");

const Documents = lib("account/documents").default;
const Items = lib("account/items").default;
const builtins = queryModule("builtin-functions");
const queryHelpers = queryModule("helpers");

function installEnginePatches() {
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

  // An expired item is gone the moment its ttl runs out, as in Cosmos DB,
  // not when the sweeper next passes: a lookup by id purges it first, so its
  // id is free again at once. delete() looks items up itself, so lookups
  // inside it must not purge.
  const originalItem = Documents.prototype._item;
  const originalDelete = Documents.prototype.delete;
  const deleting = Symbol("deleting");
  Documents.prototype.delete = function deleteItem(id, partition) {
    const outer = this[deleting];
    this[deleting] = true;
    try {
      return originalDelete.call(this, id, partition);
    } finally {
      this[deleting] = outer;
    }
  };
  Documents.prototype._item = function itemUnlessExpired(keyPath, value, partition) {
    const item = originalItem.call(this, keyPath, value, partition);
    const doc = item.read();
    if (!doc || this[deleting] || !isExpired(this._parent, doc, nowSeconds())) return item;
    this.delete(doc.id, this._getPartition(doc));
    return originalItem.call(this, keyPath, value, partition);
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

  // REPLACE replaces every occurrence, as in Cosmos DB (the engine used
  // String.prototype.replace, which replaces only the first).
  builtins.REPLACE = (...args) => {
    if (args.length !== 3) throw new Error("The REPLACE function requires 3 argument(s)");
    const [a, b, c] = args;
    if (typeof a !== "string" || typeof b !== "string" || typeof c !== "string") return undefined;
    return b === "" ? a : a.split(b).join(c);
  };
}

module.exports = { installEnginePatches };
