#!/usr/bin/env node
// Fast path: `--version` must not pay for loading the CLI (see bench/startup).
import { VERSION } from '../dist/version.js';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(args);
}
