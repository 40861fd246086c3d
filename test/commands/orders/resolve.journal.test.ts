// `orders resolve` and `orders journal` on journals and listen logs written by hand: the shapes a
// listen log may hold, journals of several services, the journal found from its first line.
// No request is made: both commands read and write local files only.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../../support/cli.js';

const A = 'http://127.0.0.1:4001';
const B = 'http://127.0.0.1:4002';

function record(event: string, externalId: string, baseUrl = A, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ event, externalId, baseUrl, at: '2026-11-23T10:00:00.000Z', ...extra });
}

function journalWith(dir: string, lines: string[], name = 'orders.ndjson.journal.ndjson'): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `${JSON.stringify({ event: 'run', baseUrl: A, input: 'orders.ndjson' })}\n${lines.join('\n')}\n`,
  );
  return path;
}

function event(name: string, body: unknown): string {
  return JSON.stringify({ receivedAt: '2026-11-23T10:00:01.000Z', event: name, headers: {}, body });
}

describe('orders resolve --from-events', () => {
  it('reads an order, an array of orders and an order one level down; passes over the rest', async () => {
    const dir = tempDir();
    const unknown = ['U-1', 'U-2', 'U-3', 'U-4', 'U-5'];
    journalWith(dir, [
      ...unknown.map((id, i) => record('sending', id, A, { bodyHash: 'h', line: i + 2 })),
      record('unknown', 'U-1', A, { reason: 'reset' }),
      record('sending', 'C-1', A, { bodyHash: 'h', line: 9 }),
      record('created', 'C-1', A, { httpStatus: 201, id: 7, code: 'SO-7' }),
    ]);
    writeFileSync(
      join(dir, 'events.ndjson'),
      [
        event('sales_order_validated', { id: 11, code: 'SO-11', externalId: 'U-1' }),
        event('sales_order_validated', [{ id: 12, code: 'SO-12', externalId: 'U-2' }, 'noise']),
        event('sales_order_validated', { order: { id: 13, code: 'SO-13', externalId: 'U-3' } }),
        event('sales_order_validated', { id: 14, code: 'SO-14' }),
        event('contact_updated', { id: 15, externalId: 'U-4' }),
        event('sales_order_validated', { id: 16, code: 'SO-16', externalId: 'C-1' }),
        '{"receivedAt": "torn',
      ].join('\n'),
    );
    const result = await runCli(
      ['--json', 'orders', 'resolve', 'orders.ndjson', '--from-events', 'events.ndjson'],
      {
        cwd: dir,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.changed).toEqual([
      expect.objectContaining({ externalId: 'U-1', from: 'unknown', to: 'created', id: 11, code: 'SO-11' }),
      expect.objectContaining({ externalId: 'U-2', to: 'created', id: 12, code: 'SO-12' }),
      expect.objectContaining({ externalId: 'U-3', to: 'created', id: 13, code: 'SO-13' }),
    ]);
    expect(report.events).toMatchObject({ lines: 7, validated: 5, skipped: 1, matched: 3 });
    expect(report.stillUnknown).toBe(2);

    const shown = JSON.parse(
      (await runCli(['--json', 'orders', 'journal', 'orders.ndjson'], { cwd: dir })).stdout,
    );
    expect(shown.counts).toEqual({
      created: 1,
      resolvedCreated: 3,
      failed: 0,
      resolvedNotCreated: 0,
      unknown: 2,
      total: 6,
    });
    expect(shown.unknown).toEqual([
      {
        externalId: 'U-4',
        line: 5,
        sentAt: '2026-11-23T10:00:00.000Z',
        reason: 'the run that sent it stopped before the answer',
      },
      {
        externalId: 'U-5',
        line: 6,
        sentAt: '2026-11-23T10:00:00.000Z',
        reason: 'the run that sent it stopped before the answer',
      },
    ]);
  });

  it('a listen log that cannot be read is bad usage, and the journal is left alone', async () => {
    const dir = tempDir();
    const path = journalWith(dir, [record('sending', 'U-1', A, { bodyHash: 'h' })]);
    const before = readFileSync(path, 'utf8');
    const result = await runCli(['orders', 'resolve', path, '--from-events', 'missing.ndjson'], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Cannot read the listen log missing.ndjson (ENOENT)');
    expect(readFileSync(path, 'utf8')).toBe(before);
  });
});

describe('journals of several services', () => {
  it('resolve asks which service unless the configured base URL is one of them', async () => {
    const dir = tempDir();
    // A journal under a name of its own, recognised by its first line.
    const path = journalWith(
      dir,
      [record('sending', 'U-1', A, { bodyHash: 'h' }), record('sending', 'U-1', B, { bodyHash: 'h' })],
      'state.ndjson',
    );
    const ambiguous = await runCli(['orders', 'resolve', 'state.ndjson', '--created', 'U-1'], { cwd: dir });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(
      `holds orders for 2 services (${A}, ${B}), and no --base-url was given`,
    );

    const chosen = await runCli(
      ['--base-url', `${B}/`, 'orders', 'resolve', 'state.ndjson', '--created', 'U-1=SO-9'],
      {
        cwd: dir,
      },
    );
    expect(chosen.code, chosen.stderr).toBe(0);
    // Named by its journal, the input is not known: the hint names no file.
    expect(chosen.stdout).toContain('Next: run the same import again: it skips');
    const last = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!);
    expect(last).toMatchObject({
      event: 'resolved',
      resolution: 'created',
      externalId: 'U-1',
      baseUrl: B,
      id: 'SO-9',
    });

    const shown = await runCli(['--base-url', A, 'orders', 'journal', 'state.ndjson'], { cwd: dir });
    expect(shown.stdout).toContain(`Journal state.ndjson for ${A}:`);
    expect(shown.stdout).toMatch(/unknown +1/);
    expect(shown.stdout).toContain(`Also for ${B}: 1 order, 0 unknown`);
  });
});
