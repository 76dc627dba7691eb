"use strict";
// The pinned @vercel/cosmosdb-server and the internals the patches rely on.
// Requiring this module first also installs the memoized query parser, which
// must happen before anything loads @zeit/cosmosdb-query.

const path = require("path");

const PINNED_VERSION = "1.0.1";

// The package directory, checked against the pinned version: the patches
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


// queryModule loads a module of the query engine the server uses.
const queryModule = name => require(require.resolve(`@zeit/cosmosdb-query/lib/${name}`, { paths: [LIB] }));

module.exports = { LIB, lib, queryModule };
