#!/usr/bin/env node
// Fast path: `--version` must not pay for loading the CLI (see bench/startup).
import { VERSION } from '../dist/version.js';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  // A signal while the CLI loads ends it as one later would (exit 130, nothing started), not by
  // the signal's default action. These listeners stay until main has put its own in place (it
  // removes those marked `ordercliEarly`): a moment without any would let a signal kill it.
  const signals = ['SIGINT', 'SIGTERM', ...(process.platform === 'win32' ? [] : ['SIGHUP', 'SIGQUIT'])];
  let early;
  const onEarly = (signal) => {
    early ??= signal;
  };
  onEarly.ordercliEarly = true;
  for (const signal of signals) process.on(signal, onEarly);
  // Under ORDERCLI_DEBUG a stack trace names the line of src/ (dist/ ships source maps); otherwise
  // Node never reads the maps, so they cost a start-up nothing.
  if (process.env.ORDERCLI_DEBUG) process.setSourceMapsEnabled(true);
  const { main } = await import('../dist/cli/main.js');
  if (early === undefined) process.exitCode = await main(args);
  else {
    for (const signal of signals) process.off(signal, onEarly);
    process.stderr.write(`Interrupted (${early}) while starting: nothing was done.\n`);
    process.exitCode = 130;
  }
}
