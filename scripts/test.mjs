#!/usr/bin/env node
// `npm test`: runs the package.json scripts named as arguments (build, typecheck, lint, vitest, the
// other Nodes), each one even when an earlier one failed, so that one failure does not hide the
// others; exits 1 when any failed. Each script's output streams as it comes; at the end a short
// table gives each one's result and time, with vitest's closing lines (counts, duration), then
// every `SKIPPED:` line once (a part that did not run says so there, e.g. the inspector's browser
// test without a Chromium, and how to run it: nothing is skipped silently).
//
//   node scripts/test.mjs build typecheck+lint test:vitest test:other-nodes    (npm test)
//
// Scripts joined by `+` run at the same time (typecheck and lint each use one core); the output of
// each is printed whole when it ends, in the order given, so that they never interleave.
//   ORDERCLI_SKIP_OTHER_NODES=1 npm test      # without Node 22/24 (says so)
//   ORDERCLI_TEST_SET=smoke npm test          # every stage, vitest on test/smoke.ts only (says so)
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const scripts = process.argv.slice(2);
if (scripts.length === 0) {
  process.stderr.write(
    'usage: node scripts/test.mjs <npm script>... (see the "test" script in package.json)\n',
  );
  process.exit(2);
}

/** Vitest's closing lines and test-other-nodes' verdicts, without colours. */
const CLOSING = /^\s*(Test Files|Tests|Errors|Duration|== Node \d+:)/;
/** A part of the suite that did not run, said by a test or a script (see the top of this file). */
const SKIPPED = /^\s*SKIPPED:/;
const ANSI = /\x1b\[[0-9;]*m/g;

/** Every SKIPPED line seen, once each (the end-to-end tests repeat them under each Node). */
const skipped = new Set();
if (process.env.ORDERCLI_TEST_SET === 'smoke') {
  skipped.add(
    'SKIPPED: every test file outside the smoke set of test/smoke.ts (ORDERCLI_TEST_SET=smoke); npm test without it runs them all.',
  );
}

/**
 * Runs `npm run <script>` with its output streamed through (or, `buffered`, kept and printed whole
 * by the caller as `output`); resolves with its exit code and closing lines.
 */
function runScript(script, buffered = false) {
  const started = Date.now();
  return new Promise((resolve) => {
    const env = { ...process.env };
    // Piped output loses the terminal's colours unless asked for.
    if (process.stdout.isTTY && env.NO_COLOR === undefined) env.FORCE_COLOR ??= '1';
    const child = spawn(npm, ['run', '--silent', script], {
      cwd: root,
      env,
      stdio: ['inherit', 'pipe', 'pipe'],
    });
    const closing = [];
    let partial = '';
    let output = '';
    const pass = (stream) => (chunk) => {
      if (buffered) output += chunk;
      else stream.write(chunk);
    };
    const out = pass(process.stdout);
    const err = pass(process.stderr);
    child.stdout.on('data', (chunk) => {
      out(chunk);
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const plain = line.replace(ANSI, '');
        if (CLOSING.test(plain)) closing.push(plain.trim());
        else if (SKIPPED.test(plain)) skipped.add(plain.trim());
      }
    });
    child.stderr.on('data', err);
    const finish = (code) =>
      resolve({
        code,
        seconds: Math.round((Date.now() - started) / 1000),
        closing: closing.slice(-8),
        output,
      });
    child.on('error', (error) => {
      process.stderr.write(`npm test: cannot start npm run ${script}: ${error.message}\n`);
      finish(1);
    });
    child.on('close', (code, signal) => finish(code ?? `signal ${signal}`));
  });
}

const results = [];
for (const group of scripts) {
  const together = group.split('+');
  if (together.length === 1) {
    process.stdout.write(`\n== npm test: npm run ${group}\n`);
    results.push({ script: group, ...(await runScript(group)) });
    continue;
  }
  process.stdout.write(
    `\n== npm test: ${together.map((script) => `npm run ${script}`).join(' and ')}, at the same time\n`,
  );
  const ran = await Promise.all(together.map((script) => runScript(script, true)));
  together.forEach((script, i) => {
    process.stdout.write(`\n== npm test: npm run ${script}\n${ran[i].output}`);
    results.push({ script, ...ran[i] });
  });
}

const failed = results.filter((result) => result.code !== 0);
const lines = ['', '== npm test: summary'];
for (const { script, code, seconds, closing } of results) {
  const outcome = code === 0 ? 'passed' : `FAILED (exit ${code})`;
  lines.push(`  ${script.padEnd(18)} ${outcome.padEnd(18)} ${String(seconds).padStart(4)} s`);
  for (const line of closing) lines.push(`      ${line}`);
}
for (const line of skipped) lines.push(`  ${line}`);
lines.push(
  failed.length === 0
    ? `  all passed${skipped.size === 0 ? '' : ` (what did not run is named by the SKIPPED line${skipped.size === 1 ? '' : 's'} above)`}`
    : `  FAILED: ${failed.map((result) => result.script).join(', ')} (the others ran; see their output above)`,
);
process.stdout.write(`${lines.join('\n')}\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
