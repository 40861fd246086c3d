// The import pipeline without its command line: what runImport returns, and the hooks it calls.
import { appendFileSync, existsSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient, type ApiClientOptions } from '../../src/api/client.js';
import { CancelledError } from '../../src/core/errors.js';
import { Redactor } from '../../src/core/redact.js';
import { DEFAULT_LIMITS } from '../../src/import/read/limits.js';
import type { ImportCounts } from '../../src/import/report/report.js';
import {
  type DryRunResult,
  type ImportEnvironment,
  type ImportRequest,
  type ImportResult,
  runImport,
} from '../../src/import/run-import.js';
import { tempDir, testEnv } from '../support/cli.js';
import { createdCounts, externalId, order, orders, postsTo, writeNdjson } from '../support/orders.js';
import { useSandbox } from '../support/sandbox.js';

const sandbox = useSandbox({ validationDelayMs: 10 });
const closers: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** One config folder (and so one order ledger) per working directory, as one user has. */
const envs = new Map<string, NodeJS.ProcessEnv>();

/** What a command's context gives the pipeline, built by hand: a real client of the sandbox. */
function environment(cwd: string, signal = new AbortController().signal): ImportEnvironment {
  let env = envs.get(cwd);
  if (env === undefined) {
    env = testEnv();
    envs.set(cwd, env);
  }
  return {
    cwd,
    env,
    signal,
    io: { stdin: Readable.from([]) },
    settings: async () => ({ baseUrl: sandbox.url }),
    api: async (overrides = {}) => {
      const options: ApiClientOptions = {
        baseUrl: sandbox.url,
        token: sandbox.tokens.partner,
        timeoutMs: 5_000,
        userAgent: 'run-import.test',
        redactor: new Redactor(),
        ...overrides,
      };
      const client = new ApiClient(options);
      closers.push(() => client.close());
      return client;
    },
    onClose: (fn) => closers.push(fn),
  };
}

function request(input: string, extra: Partial<ImportRequest> = {}): ImportRequest {
  return {
    input,
    limits: DEFAULT_LIMITS,
    concurrency: 4,
    dryRun: false,
    skipInvalid: false,
    checkRefs: false,
    retryUnknown: false,
    keepRecordResults: false,
    ...extra,
  };
}

const AT = '2026-11-20T10:00:00.000Z';

/**
 * The lines of a journal as ordercli 0.1 wrote it beside an input: order 1 created (id 77), order
 * 2 sent with no answer (the run was killed), order 3 refused by the service.
 */
function oldJournal(baseUrl: string): string[] {
  const sent = (i: number) => ({ externalId: externalId(i), baseUrl, at: AT, bodyHash: 'x', line: i });
  return [
    { event: 'run', baseUrl, input: 'orders.ndjson', at: AT },
    { event: 'sending', ...sent(1) },
    { event: 'created', externalId: externalId(1), baseUrl, at: AT, httpStatus: 201, id: 77, code: 'SO-77' },
    { event: 'sending', ...sent(2) },
    { event: 'sending', ...sent(3) },
    { event: 'failed', externalId: externalId(3), baseUrl, at: AT, httpStatus: 422, message: 'invalid' },
  ].map((line) => JSON.stringify(line));
}

/** Five valid orders and, third, one whose item has a quantity of zero. */
function inputWithOneInvalid(dir: string): string {
  const list = orders(5);
  list.splice(2, 0, { ...order(6), items: [{ internalReferenceId: 401, orderedQuantity: 0 }] });
  return writeNdjson(dir, 'orders.ndjson', list);
}

describe('runImport', () => {
  it('returns the counts, each result in input order, the orders not created and exit 4', async () => {
    const dir = tempDir();
    inputWithOneInvalid(dir);
    const sending: { counts: Readonly<ImportCounts>; ended: boolean }[] = [];
    const result = (await runImport(
      request('orders.ndjson', { skipInvalid: true, keepRecordResults: true }),
      environment(dir),
      {
        onSendingStart: (counts) => {
          const call = { counts, ended: false };
          sending.push(call);
          return () => {
            call.ended = true;
          };
        },
      },
    )) as ImportResult;
    expect(result).toMatchObject({
      dryRun: false,
      input: 'orders.ndjson',
      baseUrl: sandbox.url,
      journal: 'orders.ndjson',
      stopped: undefined,
      failure: undefined,
      exitCode: 4,
      sent: 5,
      retries: 0,
    });
    expect(result.counts).toEqual({
      total: 6,
      created: 5,
      failed: 0,
      skipped: 0,
      invalid: 1,
      unknown: 0,
      exists: 0,
      notSent: 0,
    });
    expect(result.records.map((o) => [o.key, o.status, o.location.line])).toEqual([
      [externalId(1), 'created', 1],
      [externalId(2), 'created', 2],
      [externalId(6), 'invalid', 3],
      [externalId(3), 'created', 4],
      [externalId(4), 'created', 5],
      [externalId(5), 'created', 6],
    ]);
    expect(result.notCreated.map((o) => o.key)).toEqual([externalId(6)]);
    expect(result.notCreated[0]?.message).toContain('orderedQuantity');
    // The progress hook saw the live counts, and was told when sending ended.
    expect(sending).toHaveLength(1);
    expect(sending[0]?.counts).toBe(result.counts);
    expect(sending[0]?.ended).toBe(true);
    expect(sandbox.orders()).toHaveLength(5);
  });

  it('keeps no per-order results unless asked, and a re-run skips every order (exit 0)', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(3));
    const first = (await runImport(request('orders.ndjson'), environment(dir))) as ImportResult;
    expect(first.records).toEqual([]);
    expect(first.exitCode).toBe(0);
    const again = (await runImport(request('orders.ndjson'), environment(dir))) as ImportResult;
    expect(again.counts).toMatchObject({ total: 3, skipped: 3, created: 0 });
    expect(again).toMatchObject({ sent: 0, exitCode: 0, failure: undefined });
    expect(postsTo(sandbox)).toBe(3);
    // Nothing beside the input: the ledger is the only record.
    expect(readdirSync(dir)).toEqual(['orders.ndjson']);
  });

  it('names the history --journal gives, relative to the working directory, and writes no file there', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(2));
    const result = (await runImport(
      request('orders.ndjson', { journal: `${dir}/history/orders.journal.ndjson` }),
      environment(dir),
    )) as ImportResult;
    expect(result).toMatchObject({ journal: 'history/orders.journal.ndjson', exitCode: 0 });
    expect(readdirSync(dir)).toEqual(['orders.ndjson']);
  });

  it('a dry run sends nothing and says what the ledger holds of the input', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(4));
    const before = (await runImport(
      request('orders.ndjson', { dryRun: true }),
      environment(dir),
    )) as DryRunResult;
    expect(before).toMatchObject({
      dryRun: true,
      input: 'orders.ndjson',
      counts: { total: 4, valid: 4, invalid: 0 },
      ledger: { created: 0, inDoubt: 0 },
      problems: [],
    });
    expect(before).not.toHaveProperty('journal');
    expect(postsTo(sandbox)).toBe(0);
    await runImport(request('orders.ndjson'), environment(dir));
    const after = (await runImport(
      request('orders.ndjson', { dryRun: true }),
      environment(dir),
    )) as DryRunResult;
    expect(after.ledger).toEqual({ created: 4, inDoubt: 0 });
    expect(postsTo(sandbox)).toBe(4);
    expect(readdirSync(dir)).toEqual(['orders.ndjson']);
  });

  it('an interrupt once sending starts returns the orders as not sent and a CancelledError to throw', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(3));
    const interrupt = new AbortController();
    const result = (await runImport(request('orders.ndjson'), environment(dir, interrupt.signal), {
      onSendingStart: () => {
        interrupt.abort(new CancelledError('interrupted'));
        return () => undefined;
      },
    })) as ImportResult;
    expect(result.stopped?.kind).toBe('interrupted');
    expect(result.counts).toMatchObject({ total: 3, created: 0, notSent: 3 });
    expect(result.failure).toBeInstanceOf(CancelledError);
    expect(result.failure?.message).toBe(
      'Interrupted: 0 orders created, 3 not sent; the order ledger holds every outcome: run the same command again to send the rest.',
    );
    expect(postsTo(sandbox)).toBe(0);
  });

  it('counts the records read for onReadingStart, and ends that phase before sending starts', async () => {
    const dir = tempDir();
    const list = orders(5);
    (list[3] as { items: unknown[] }).items = [];
    writeNdjson(dir, 'orders.ndjson', list);
    const events: string[] = [];
    let read: Readonly<{ read: number; invalid: number }> | undefined;
    const result = (await runImport(request('orders.ndjson', { skipInvalid: true }), environment(dir), {
      onReadingStart: (counts) => {
        read = counts;
        events.push('reading');
        return () => events.push(`read ${counts.read}, ${counts.invalid} invalid`);
      },
      onSendingStart: () => {
        events.push('sending');
        return () => events.push('sent');
      },
    })) as ImportResult;
    expect(events).toEqual(['reading', 'read 5, 1 invalid', 'sending', 'sent']);
    expect(read).toEqual({ read: 5, invalid: 1 });
    expect(result.counts).toMatchObject({ total: 5, created: 4, invalid: 1, notSent: 0 });
  });

  it('an interrupt while sending counts every record left as not sent, read or not', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(50));
    const interrupt = new AbortController();
    const result = (await runImport(
      request('orders.ndjson', { concurrency: 1 }),
      environment(dir, interrupt.signal),
      {
        onResult: (record) => {
          if (record.index === 2) interrupt.abort(new CancelledError('interrupted'));
        },
      },
    )) as ImportResult;
    expect(result.stopped?.kind).toBe('interrupted');
    const created = createdCounts(sandbox).size;
    expect(created).toBeGreaterThanOrEqual(3);
    expect(created).toBeLessThan(50);
    expect(result.counts).toMatchObject({ total: 50, created, notSent: 50 - created });
  });

  it('folds a journal an earlier release left beside the input into the ledger once, through onNote', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(4));
    const journal = join(realpathSync(dir), 'orders.ndjson.journal.ndjson');
    // Order 1 created, order 2 sent with no answer (a kill), order 3 refused; a torn last line.
    writeFileSync(journal, `${oldJournal(sandbox.url).join('\n')}\n{"event":"sen`);
    const notes: string[] = [];
    const result = (await runImport(request('orders.ndjson', { keepRecordResults: true }), environment(dir), {
      onNote: (text) => notes.push(text),
    })) as ImportResult;
    expect(notes).toEqual([
      `note: ${journal}, the journal of an earlier ordercli, was folded into the order ledger (2 orders it knew of and the ledger did not) and renamed ${journal}.folded; the ledger is the only record now.\n`,
    ]);
    expect(result.records.map((r) => [r.key, r.status])).toEqual([
      [externalId(1), 'skipped'],
      [externalId(2), 'unknown'],
      [externalId(3), 'created'],
      [externalId(4), 'created'],
    ]);
    expect(result.records[0]).toMatchObject({ id: 77, code: 'SO-77' });
    expect([...createdCounts(sandbox).keys()].sort()).toEqual([externalId(3), externalId(4)]);
    expect(readdirSync(dir).sort()).toEqual(['orders.ndjson', 'orders.ndjson.journal.ndjson.folded']);
    // Read once: the next run has nothing to fold, and the ledger alone still refuses both.
    notes.length = 0;
    const again = (await runImport(request('orders.ndjson'), environment(dir), {
      onNote: (text) => notes.push(text),
    })) as ImportResult;
    expect(notes).toEqual([]);
    expect(again.counts).toMatchObject({ skipped: 3, unknown: 1, created: 0 });
    expect(postsTo(sandbox)).toBe(2);
  });

  it('folds the --journal file when it exists, and keeps one that also holds orders of another service', async () => {
    const dir = tempDir();
    writeNdjson(dir, 'orders.ndjson', orders(2));
    const journal = join(realpathSync(dir), 'old.journal.ndjson');
    const elsewhere = { event: 'created', externalId: 'OTHER-1', baseUrl: 'http://other.example', at: AT };
    writeFileSync(journal, `${[...oldJournal(sandbox.url), JSON.stringify(elsewhere)].join('\n')}\n`);
    const notes: string[] = [];
    const result = (await runImport(
      request('orders.ndjson', { journal: 'old.journal.ndjson', keepRecordResults: true }),
      environment(dir),
      { onNote: (text) => notes.push(text) },
    )) as ImportResult;
    expect(notes).toEqual([
      `note: ${journal}, the journal of an earlier ordercli, was folded into the order ledger for this service (2 orders it knew of and the ledger did not); it is kept, as it also holds orders of other services.\n`,
    ]);
    expect(result.journal).toBe('old.journal.ndjson');
    expect(result.records.map((r) => r.status)).toEqual(['skipped', 'unknown']);
    expect(postsTo(sandbox)).toBe(0);
    expect(existsSync(journal)).toBe(true);
  });

  it('sends nothing when the input changes between the validation and the sending pass (exit 2)', async () => {
    const dir = tempDir();
    const path = writeNdjson(dir, 'orders.ndjson', orders(3));
    const env = environment(dir);
    let grown = false;
    // --check-refs asks the service for its references while validating: the file grows meanwhile,
    // as an export still being written would.
    const api: ImportEnvironment['api'] = async (overrides) => {
      if (!grown) appendFileSync(path, `${JSON.stringify(order(4))}\n`);
      grown = true;
      return env.api(overrides);
    };
    const before = postsTo(sandbox);
    await expect(runImport(request('orders.ndjson', { checkRefs: true }), { ...env, api })).rejects.toThrow(
      /orders\.ndjson changed while it was being validated .* nothing was sent/,
    );
    expect(grown).toBe(true);
    expect(postsTo(sandbox)).toBe(before);
  });

  it('never sends an order added to the input once sending started: it was not validated', async () => {
    const dir = tempDir();
    const path = writeNdjson(dir, 'orders.ndjson', orders(3));
    const before = postsTo(sandbox);
    const result = (await runImport(request('orders.ndjson'), environment(dir), {
      onSendingStart: () => {
        appendFileSync(path, `${JSON.stringify({ externalId: 'NEVER-VALIDATED' })}\n`);
        return () => {};
      },
    })) as ImportResult;
    expect(result.counts).toMatchObject({ total: 3, created: 3 });
    expect(postsTo(sandbox) - before).toBe(3);
  });
});
