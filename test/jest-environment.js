// A jest environment whose tests run in Node's own global context instead of a separate vm
// context. Why: values made outside jest's context (rows from the native SQLite binding, fetch's
// `json()`, messages from worker threads) otherwise carry another realm's prototypes, and
// node:assert's deepStrictEqual — and `instanceof` in libraries — then reject equal values.
// Each test file still gets a fresh module registry; only the globals are shared. The idea is
// that of jest-environment-node-single-context (Klaus Reimer), written here for jest 30.
'use strict';
const vm = require('node:vm');
const { TestEnvironment: NodeEnvironment } = require('jest-environment-node');

/** Contexts whose code runs in this context instead (see the patched vm functions below). */
const singleContexts = new WeakSet();
const runInContext = vm.Script.prototype.runInContext;
vm.Script.prototype.runInContext = function (context, options) {
  return singleContexts.has(context) ? this.runInThisContext(options) : runInContext.call(this, context, options);
};
// jest 30 compiles each CommonJS module with vm.compileFunction({ parsingContext }).
const compileFunction = vm.compileFunction;
vm.compileFunction = function (code, params, options = {}) {
  if (options.parsingContext && singleContexts.has(options.parsingContext)) {
    const { parsingContext: _ignored, ...rest } = options;
    return compileFunction.call(this, code, params, rest);
  }
  return compileFunction.call(this, code, params, options);
};

class SingleContextEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global = globalThis;
    this.context = vm.createContext(globalThis);
    singleContexts.add(this.context);
  }
}

module.exports = SingleContextEnvironment;
