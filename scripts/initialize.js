// Runs a program as a stdio MCP server and checks that it answers
// initialize:
//
//   node scripts/initialize.js COMMAND [ARGS...]
//
// Sends initialize, prints the first line the program writes to stdout,
// closes its stdin (which stops it) and exits 0 when that line is the
// result of the initialize, 1 otherwise or when none comes within 60 s.
// scripts/release-check.sh and the release workflow run it (on Windows
// too, where there is no bash to do it).
'use strict';
const { spawn } = require('child_process');

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], windowsHide: true });
let out = '';
let done = false;
function finish(ok, msg) {
  if (done) return;
  done = true;
  if (msg) process.stderr.write(`initialize: ${msg}\n`);
  process.exitCode = ok ? 0 : 1;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.stdin.end();
  setTimeout(() => process.exit(), 10000).unref();
}
child.stdin.on('error', () => {}); // it exited: its exit says so
child.on('error', (err) => {
  process.stderr.write(`initialize: cannot run ${command}: ${err.message}\n`);
  process.exit(1);
});
child.stdout.on('data', (d) => {
  out += d;
  const nl = out.indexOf('\n');
  if (nl < 0) return;
  const line = out.slice(0, nl);
  process.stdout.write(line + '\n');
  let m;
  try {
    m = JSON.parse(line);
  } catch (err) {
    return finish(false, `stdout is not JSON-RPC: ${err.message}`);
  }
  const ok = m.id === 1 && m.result && typeof m.result.protocolVersion === 'string';
  finish(ok, ok ? '' : 'the first line is not the result of initialize');
});
child.on('exit', (code) => finish(false, `exited (${code}) before answering initialize`));
setTimeout(() => finish(false, 'no answer within 60 s'), 60000).unref();
child.stdin.write(JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'release-check', version: '1' } },
}) + '\n');
