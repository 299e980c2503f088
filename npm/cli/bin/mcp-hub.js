#!/usr/bin/env node
// The launcher of @mcp-hub/cli. npm installs the prebuilt mcp-hub binary of
// this platform as an optional dependency (@mcp-hub/linux-x64, …: each
// package names its os and cpu, so npm installs only the matching one, with
// no postinstall script and no download beyond the registry). This runs it
// with this process's arguments, environment and standard streams (the
// binary reads and writes them itself: stdout is the MCP channel, and this
// launcher never writes to it), passes on the signals it gets, and exits as
// the binary did.
'use strict';

const { spawn } = require('child_process');
const os = require('os');

const packages = {
  'darwin-arm64': '@mcp-hub/darwin-arm64',
  'darwin-x64': '@mcp-hub/darwin-x64',
  'linux-arm64': '@mcp-hub/linux-arm64',
  'linux-x64': '@mcp-hub/linux-x64',
  'win32-x64': '@mcp-hub/win32-x64',
};

function fail(msg) {
  process.stderr.write(`mcp-hub: ${msg}\n`);
  process.exit(1);
}

function binaryPath() {
  const platform = `${process.platform}-${process.arch}`;
  const pkg = packages[platform];
  if (!pkg) {
    fail(`no prebuilt binary for ${platform}; build it with Go: ` +
      'CGO_ENABLED=1 go install github.com/mcp-hub/mcp-hub/cmd/mcp-hub@latest');
  }
  const exe = process.platform === 'win32' ? 'mcp-hub.exe' : 'mcp-hub';
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (err) {
    fail(`the binary package ${pkg} is not installed: npm installs it with @mcp-hub/cli ` +
      'unless optional dependencies are left out (--omit=optional, --no-optional); ' +
      `install it again without that, or install ${pkg} itself`);
  }
}

// The binary names itself in the commands its hints show as argv[0] says:
// how the person ran this launcher, npx or an installed mcp-hub.
const argv0 = process.env.npm_command === 'exec' ? `npx -y ${require('../package.json').name}` : 'mcp-hub';

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit', windowsHide: true, argv0 });

// Signals this process gets go on to the binary, which shuts down (and stops
// its upstream servers) on SIGINT and SIGTERM; this process waits for it.
const signals = process.platform === 'win32'
  ? ['SIGINT', 'SIGBREAK', 'SIGHUP']
  : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2'];
const forward = {};
for (const sig of signals) {
  forward[sig] = () => {
    try {
      child.kill(sig);
    } catch (_) {
      // The binary has exited; its exit event follows.
    }
  };
  process.on(sig, forward[sig]);
}

child.on('error', (err) => fail(`cannot run ${child.spawnfile}: ${err.message}`));
child.on('exit', (code, signal) => {
  if (signal === null) {
    process.exit(code);
  }
  // The binary died of a signal: die of the same one, so that whoever
  // started this process sees what happened.
  for (const sig of signals) {
    process.removeListener(sig, forward[sig]);
  }
  try {
    process.kill(process.pid, signal);
  } catch (_) {
    // Not a signal this platform can send itself.
  }
  process.exit(128 + (os.constants.signals[signal] || 0));
});
