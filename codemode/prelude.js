// The script's world. Evaluated once per run, before the script, as
// (PRELUDE)(globalThis, code, inputJSON, maxResult, maxArg, maxLog). It takes the host
// functions the Go side registered (__hub_*) off the global object, keeps
// them in this closure, defines callTool, searchTools, log, sleep and input,
// disables eval and every Function constructor, compiles the script as the
// body of an async function and starts it. The outcome reaches Go through
// done(status, text) exactly once (1: the result's
// JSON, 0: why it failed, 2: the length of a result over maxResult, 3:
// null was thrown, 4: it returned undefined), or never (a promise that
// never settles).
(function (g, code, inputJSON, maxResult, maxArg, maxLog) {
  'use strict';
  const rawCall = g.__hub_call, rawSearch = g.__hub_search, rawLog = g.__hub_log,
    rawSleep = g.__hub_sleep, rawDone = g.__hub_done;
  for (const k of ['__hub_call', '__hub_search', '__hub_log', '__hub_sleep', '__hub_done']) {
    delete g[k];
  }
  const parse = JSON.parse, stringify = JSON.stringify, define = Object.defineProperty,
    freeze = Object.freeze, isArray = Array.isArray, toStr = String, toNum = Number,
    ErrorCtor = Error, TypeErrorCtor = TypeError, then = Promise.prototype.then,
    apply = Reflect.apply, map = Array.prototype.map, join = Array.prototype.join,
    slice = String.prototype.slice;
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
      const json = stringify(args); // a toJSON of the script's may make it anything
      if (typeof json !== 'string' || json[0] !== '{') {
        throw new TypeErrorCtor('callTool(server, tool, args): args must be an object (its JSON is not one)');
      }
      // More UTF-16 units than maxArg is more bytes still: refused before a
      // copy crosses to the host, which counts the bytes of the rest.
      if (json.length > maxArg) {
        throw new ErrorCtor('code mode: the arguments of this call are over the ' + maxArg +
          ' bytes of JSON one message may carry (maxMessageBytes); nothing was sent');
      }
      return unwrap(rawCall(server, tool, json));
    },
    searchTools: function searchTools(query, limit) {
      return unwrap(rawSearch(query === undefined || query === null ? '' : toStr(query),
        limit === undefined || limit === null ? 0 : toNum(limit)));
    },
    log: function log(...args) {
      const line = toStr(apply(join, apply(map, args, [text]), [' ']));
      // A line over what the log keeps is dropped by the host: only enough
      // of it to tell crosses.
      rawLog(line.length > maxLog ? apply(slice, line, [0, maxLog + 1]) : line);
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

  // Compile after locking down: the engine's function constructor pastes
  // the body into a source text it evaluates as a whole, so a body that
  // closes the function early ("}); ...; (async function () {") runs its
  // middle at compile time, as global code. Locked down first, that code
  // finds no eval or Function constructor to keep for later, and can do
  // nothing the script itself could not. The AsyncFunction constructor,
  // kept in this closure, is the only compiler, and only for the script.
  let fn;
  try {
    fn = new AsyncFunction('input', code);
  } catch (e) {
    rawDone(0, describe(e));
    return;
  }

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
    if (s === undefined) {
      rawDone(4, 'null'); // nothing returned (or a value JSON has no form for)
      return;
    }
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
