#!/usr/bin/env node
// Fast path: `--version` must not pay for loading the CLI (see bench/startup).
import { setFlagsFromString } from 'node:v8';
import { VERSION } from '../dist/version.js';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${VERSION}\n`);
} else {
  // undici parses HTTP with a WebAssembly module; V8's background optimisation of it outlives a
  // short command by ~150 ms at exit (bench/startup). The baseline compiler alone is plenty here.
  setFlagsFromString('--liftoff-only');
  const { main } = await import('../dist/cli/main.js');
  process.exitCode = await main(args);
}
