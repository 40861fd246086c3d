#!/usr/bin/env node
// Fast path: `--version` must not pay for loading the CLI (see bench/startup).
import { VERSION } from '../dist/version.js';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  // Under ORDERCLI_DEBUG a stack trace names the line of src/ (dist/ ships source maps); otherwise
  // Node never reads the maps, so they cost a start-up nothing.
  if (process.env.ORDERCLI_DEBUG) process.setSourceMapsEnabled(true);
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(args);
}
