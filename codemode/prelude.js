// The script's world. Evaluated once per run, before the script, as
// (PRELUDE)(globalThis, code, inputJSON, maxResult). It takes the host
// functions the Go side registered (__hub_*) off the global object, keeps
// them in this closure, defines callTool, searchTools, log, sleep and input,
// disables eval and every Function constructor, compiles the script as the
// body of an async function and starts it. The outcome reaches Go through
// done(status, text) exactly once (1: the result's
// JSON, 0: why it failed, 2: the length of a result over maxResult, 3:
// null was thrown), or never (a promise that never settles).
(function (g, code, inputJSON, maxResult) {
  'use strict';
  const rawCall = g.__hub_call, rawSearch = g.__hub_search, rawLog = g.__hub_log,
    rawSleep = g.__hub_sleep, rawDone = g.__hub_done;
  for (const k of ['__hub_call', '__hub_search', '__hub_log', '__hub_sleep', '__hub_done']) {
    delete g[k];
  }
  const parse = JSON.parse, stringify = JSON.stringify, define = Object.defineProperty,
    freeze = Object.freeze, isArray = Array.isArray, toStr = String, toNum = Number,
    ErrorCtor = Error, TypeErrorCtor = TypeError, then = Promise.prototype.then;
  const AsyncFunction = (async function () {}).constructor;

  // unwrap turns a host answer ({"ok": value} or {"error": {...}}) into the
  // value, or throws an Error carrying the error's message and code.
  const unwrap = function (text) {
    const r = parse(text);
    if (r.error !== undefined) {
      const e = new ErrorCtor(r.error.message);
      if (r.error.code !== undefined) e.code = r.error.code;
      if (r.error.data !== undefined) e.data = r.error.data;
      throw e;
    }
    return r.ok;
  };
  const text = function (v) {
    if (typeof v === 'string') return v;
    if (v instanceof ErrorCtor) return v.name + ': ' + v.message;
    try {
      const s = stringify(v);
      return s === undefined ? toStr(v) : s;
    } catch (e) {
      return toStr(v);
    }
  };
  const describe = function (e) {
    if (e instanceof ErrorCtor) {
      let s = e.name + ': ' + e.message;
      // The compiled body starts on line 3 of what the engine calls <input>.
      const at = typeof e.stack === 'string' ? /<input>:(\d+):(\d+)/.exec(e.stack) : null;
      if (at !== null) s += ' (line ' + (toNum(at[1]) - 2) + ', column ' + at[2] + ')';
      return s;
    }
    return 'the script threw ' + text(e);
  };

  const api = {
    callTool: function callTool(server, tool, args) {
      if (typeof server !== 'string' || typeof tool !== 'string') {
        throw new TypeErrorCtor('callTool(server, tool, args): server and tool must be strings');
      }
      if (args === undefined || args === null) args = {};
      if (typeof args !== 'object' || isArray(args)) {
        throw new TypeErrorCtor('callTool(server, tool, args): args must be an object');
      }
      return unwrap(rawCall(server, tool, stringify(args)));
    },
    searchTools: function searchTools(query, limit) {
      return unwrap(rawSearch(query === undefined || query === null ? '' : toStr(query),
        limit === undefined || limit === null ? 0 : toNum(limit)));
    },
    log: function log(...args) {
      rawLog(args.map(text).join(' '));
    },
    sleep: function sleep(ms) {
      unwrap(rawSleep(toNum(ms)));
    },
  };
  for (const k in api) {
    define(g, k, { value: freeze(api[k]), writable: false, configurable: false, enumerable: false });
  }
  const input = parse(inputJSON);
  define(g, 'input', { value: input, writable: false, configurable: false, enumerable: false });

  // Compile before locking down: the AsyncFunction constructor is the only
  // compiler the script gets, and only for its own text.
  let fn;
  try {
    fn = new AsyncFunction('input', code);
  } catch (e) {
    rawDone(0, describe(e));
    return;
  }

  // No eval, no Function constructor of any kind: code fetched by a tool
  // call stays data.
  const blocked = function () {
    throw new EvalError('code mode: eval and the Function constructor are disabled');
  };
  delete g.eval;
  for (const F of [Function, AsyncFunction, (function* () {}).constructor, (async function* () {}).constructor]) {
    define(F.prototype, 'constructor', { value: blocked, writable: false, configurable: false });
  }
  define(g, 'Function', { value: blocked, writable: false, configurable: false, enumerable: false });

  let p;
  try {
    p = fn(input);
  } catch (e) {
    rawDone(0, describe(e));
    return;
  }
  then.call(p, function (v) {
    if (typeof v === 'string' && v.length > maxResult) {
      rawDone(2, toStr(v.length + 2)); // before a copy of it is made
      return;
    }
    let s;
    try {
      s = stringify(v);
    } catch (e) {
      rawDone(0, 'the script returned a value that is not JSON: ' + describe(e));
      return;
    }
    if (s === undefined) s = 'null';
    if (s.length > maxResult) {
      rawDone(2, toStr(s.length));
      return;
    }
    rawDone(1, s);
  }, function (e) {
    // null is also what the engine throws when the memory limit leaves no
    // room for an error object.
    rawDone(e === null ? 3 : 0, describe(e));
  });
})
