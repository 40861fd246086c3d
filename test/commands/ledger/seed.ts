/**
 * What the `ledger` tests share: one machine (its config folder, so its default ledger, and a
 * working folder), and a ledger seeded through the real commands with every status a key can
 * have: an import of 6 orders where the sandbox creates the first and breaks the connection
 * unanswered (in doubt), refuses the second (failed), does as the first with the third, which is
 * then resolved as not created; the other three are created.
 */
import { expect } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/server.js';
import { type CliResult, type RunOptions, runCli, tempDir } from '../../support/cli.js';
import { externalId, orders, writeNdjson } from '../../support/orders.js';

export const ORDERS_PATH = '/api/v1/orders';

export interface Machine {
  env: Record<string, string>;
  configDir: string;
  cwd: string;
  /** Runs ordercli on this machine (its config folder, its working folder). */
  run(
    args: string[],
    options?: Omit<RunOptions, 'env' | 'cwd'> & { env?: Record<string, string> },
  ): Promise<CliResult>;
}

export function machine(): Machine {
  const configDir = tempDir('ordercli-config-');
  const cwd = tempDir();
  const env = { ORDERCLI_CONFIG_DIR: configDir };
  return {
    env,
    configDir,
    cwd,
    run: (args, options = {}) => runCli(args, { ...options, cwd, env: { ...env, ...options.env } }),
  };
}

/** `--base-url <sandbox> --token <partner>`: the service the keys are sent to. */
export function at(sandbox: Pick<Sandbox, 'url' | 'tokens'>): string[] {
  return ['--base-url', sandbox.url, '--token', sandbox.tokens.partner];
}

export const IN_DOUBT = externalId(1);
export const FAILED = externalId(2);
export const NOT_CREATED = externalId(3);
export const CREATED = [externalId(4), externalId(5), externalId(6)];

/** Seeds the machine's ledger (the one its settings name) with every status, from `orders.ndjson`. */
export async function seedEveryStatus(sandbox: Sandbox, on: Machine, ledger: string[] = []): Promise<void> {
  writeNdjson(on.cwd, 'orders.ndjson', orders(6));
  sandbox.scriptFaults([
    { method: 'POST', path: ORDERS_PATH, kind: 'reset-after' },
    { method: 'POST', path: ORDERS_PATH, kind: 'status', status: 422 },
    { method: 'POST', path: ORDERS_PATH, kind: 'reset-after' },
  ]);
  const imported = await on.run([
    ...at(sandbox),
    ...ledger,
    'orders',
    'import',
    'orders.ndjson',
    '--concurrency',
    '1',
  ]);
  expect(imported.code, imported.stderr).toBe(4);
  const resolved = await on.run([
    ...at(sandbox),
    ...ledger,
    'orders',
    'resolve',
    'orders.ndjson',
    '--not-created',
    NOT_CREATED,
  ]);
  expect(resolved.code, resolved.stderr).toBe(0);
}

/** The POSTs of orders the sandbox received. */
export function posts(sandbox: Sandbox): number {
  return sandbox.requests.filter((request) => request.method === 'POST' && request.path === ORDERS_PATH)
    .length;
}
