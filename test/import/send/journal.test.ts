// The import journal on its own: records written, replay (its own records and those of the release
// before claims), torn tails, damage, base-URL scope, locking, inspect().
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import { bodyHash, OrderJournal, OtherBaseUrlError } from '../../../src/import/send/journal.js';
import type { Claim } from '../../../src/ledger/store.js';
import { tempDir } from '../../support/cli.js';

const BASE = 'http://127.0.0.1:4780';
const OTHER = 'http://127.0.0.1:9999';

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A claim as the ledger grants it; the journal only records it. */
function claimOf(externalId: string, token = 't1'): Claim {
  return { externalId, token, previous: undefined };
}

/** A claim recorded in the journal, as the import records the ledger's claim. */
function claimed(journal: OrderJournal, externalId: string, hash = 'h', token = 't1', line?: number): Claim {
  const claim = claimOf(externalId, token);
  journal.claimed(claim, line === undefined ? { bodyHash: hash } : { bodyHash: hash, line });
  return claim;
}

/** Lines as the release before claims wrote them: no token, `sending` before each request. */
function oldLine(event: string, externalId: string, fields: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ event, externalId, baseUrl: BASE, at: '2026-11-20T10:00:00.000Z', ...fields })}\n`;
}

describe('OrderJournal', () => {
  it('writes a run line (format 2), the claim and its outcome with the claim token, and releases its lock at close()', async () => {
    const path = join(tempDir(), 'orders.csv.journal.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE, input: 'orders.csv' });
    // The run line is written by open().
    expect(lines(path)).toEqual([
      expect.objectContaining({
        event: 'run',
        format: 2,
        baseUrl: BASE,
        input: 'orders.csv',
        pid: process.pid,
      }),
    ]);
    const claim = claimed(journal, 'EXT-1', bodyHash('{"a":1}'), 't1', 7);
    expect(journal.stateOf('EXT-1')).toMatchObject({
      status: 'claimed',
      event: 'claim',
      token: 't1',
      line: 7,
    });
    await journal.sync();
    expect(lines(path)[1]).toMatchObject({
      externalId: 'EXT-1',
      event: 'claim',
      token: 't1',
      bodyHash: bodyHash('{"a":1}'),
      line: 7,
      baseUrl: BASE,
    });
    // A claim of a key this journal never saw takes effect without `over`.
    expect(lines(path)[1]).not.toHaveProperty('over');
    journal.created(claim, { httpStatus: 201, id: 10001, code: 'SO-2026-000001' });
    expect(journal.writeError()).toBeUndefined();
    await journal.close();
    expect(lines(path).map((r) => r.event)).toEqual(['run', 'claim', 'created']);
    expect(lines(path)[2]).toMatchObject({
      externalId: 'EXT-1',
      token: 't1',
      httpStatus: 201,
      id: 10001,
      code: 'SO-2026-000001',
      baseUrl: BASE,
    });
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('keeps the records of a burst in the order they were made', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE });
    const claims = Array.from({ length: 50 }, (_, i) => claimed(journal, `EXT-${i}`, 'h', `t${i}`));
    for (const claim of claims) journal.created(claim, { httpStatus: 201 });
    await journal.sync();
    const written = lines(path).filter((r) => r.event !== 'run');
    expect(written.filter((r) => r.event === 'claim').map((r) => r.externalId)).toEqual(
      Array.from({ length: 50 }, (_, i) => `EXT-${i}`),
    );
    expect(written.filter((r) => r.event === 'created')).toHaveLength(50);
    await journal.close();
  });

  it('replays the last state of each order for its own base URL, and refuses another base URL with orders created there', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const first = await OrderJournal.open(path, { baseUrl: BASE });
    first.created(claimed(first, 'A', 'ha'), { httpStatus: 201, id: 1, code: 'SO-1' });
    first.failed(claimed(first, 'B', 'hb'), { httpStatus: 422, message: 'invalid' });
    claimed(first, 'C', 'hc');
    first.unknown(claimed(first, 'D', 'hd'), 'connection reset');
    first.notSent(claimed(first, 'E', 'he'), 'interrupted');
    await first.close();
    // Another base URL with orders created or in doubt here: refused, it may be the same service.
    const refused = OrderJournal.open(path, { baseUrl: OTHER });
    await expect(refused).rejects.toBeInstanceOf(OtherBaseUrlError);
    await expect(refused).rejects.toMatchObject({ exitCode: 2 });
    await expect(refused).rejects.toThrow(
      `records 1 orders created and 2 in doubt at ${BASE}, not at this run's ${OTHER}`,
    );
    expect(existsSync(`${path}.lock`)).toBe(false);
    // An order only refused at another base URL changes nothing here.
    appendFileSync(
      path,
      `${JSON.stringify({ event: 'failed', externalId: 'F', baseUrl: OTHER, at: 'x', httpStatus: 422 })}\n`,
    );

    const again = await OrderJournal.open(path, { baseUrl: `${BASE}/` });
    expect(again.baseUrl).toBe(BASE);
    expect(again.stateOf('A')).toMatchObject({
      status: 'created',
      event: 'created',
      id: 1,
      code: 'SO-1',
      bodyHash: 'ha',
      token: 't1',
    });
    expect(again.stateOf('A')?.sentAt).toBeDefined();
    expect(again.stateOf('B')).toMatchObject({ status: 'not-created', event: 'failed', httpStatus: 422 });
    expect(again.stateOf('C')).toMatchObject({ status: 'claimed', event: 'claim', bodyHash: 'hc' });
    expect(again.stateOf('D')).toMatchObject({
      status: 'in-doubt',
      event: 'unknown',
      reason: 'connection reset',
    });
    // Claimed but never sent: as if never claimed.
    expect(again.stateOf('E')).toBeUndefined();
    expect(again.stateOf('F')).toBeUndefined();
    expect(again.replay).toMatchObject({
      created: 1,
      failed: 1,
      unknown: 2,
      tornTail: false,
      otherBaseUrls: [],
    });
    expect(again.knownOrders().size).toBe(4);
    await again.close();
  });

  it('records claims the ledger granted (each takes effect, no `over`), ignores an outcome of a claim that is not the current one, and restores the state before a claim not sent', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE });
    journal.unknown(claimed(journal, 'D', 'h1', 't1'), 'no answer within --timeout');
    journal.failed(claimed(journal, 'R', 'h1', 'r1'), { httpStatus: 422, message: 'invalid' });
    // --retry-unknown: the ledger granted a new claim over the doubt.
    const retry = claimed(journal, 'D', 'h2', 't2');
    // A late outcome of the first claim changes nothing.
    journal.created(claimOf('D', 't1'), { httpStatus: 201, id: 99 });
    expect(journal.stateOf('D')).toMatchObject({ status: 'claimed', token: 't2' });
    journal.created(retry, { httpStatus: 201, id: 2 });
    // A failed order claimed again and not sent after all: still refused, sendable.
    journal.notSent(claimed(journal, 'R', 'h2', 'r2'), 'interrupted');
    journal.resolved('X', 'created', { id: 5, code: 'SO-5', evidence: 'checked by hand' });
    journal.resolved('Y', 'not-created', { evidence: 'checked by hand' });
    await journal.close();
    const written = lines(path);
    const retryLine = written.find((r) => r.event === 'claim' && r.token === 't2');
    // The ledger decided: the journal's claim needs no compare-and-swap of its own.
    expect(retryLine).not.toHaveProperty('over');
    expect(written.find((r) => r.event === 'resolved' && r.externalId === 'X')).toMatchObject({
      resolution: 'created',
      id: 5,
      code: 'SO-5',
      evidence: 'checked by hand',
      baseUrl: BASE,
    });

    const { states } = await OrderJournal.inspect(path, BASE);
    expect(states.get('D')).toMatchObject({ status: 'created', id: 2, token: 't2', bodyHash: 'h2' });
    expect(states.get('R')).toMatchObject({ status: 'not-created', event: 'failed', httpStatus: 422 });
    expect(states.get('X')).toMatchObject({
      status: 'created',
      event: 'resolved',
      resolved: 'created',
      id: 5,
    });
    expect(states.get('Y')).toMatchObject({
      status: 'not-created',
      resolved: 'not-created',
      message: 'checked at the service: not created',
    });
  });

  it('replays a journal written by the release before claims (no token), and a new run resumes over it', async () => {
    const path = join(tempDir(), 'j.ndjson');
    writeFileSync(
      path,
      [
        `${JSON.stringify({ event: 'run', baseUrl: BASE, input: 'orders.csv', pid: 1, at: '2026-11-20T10:00:00.000Z' })}\n`,
        oldLine('sending', 'A', { bodyHash: 'ha', line: 2 }),
        oldLine('created', 'A', { httpStatus: 201, id: 1, code: 'SO-1' }),
        oldLine('sending', 'B', { bodyHash: 'hb', line: 3 }),
        oldLine('failed', 'B', { httpStatus: 422, message: 'invalid' }),
        oldLine('sending', 'C', { bodyHash: 'hc', line: 4 }),
        oldLine('sending', 'D', { bodyHash: 'hd', line: 5 }),
        oldLine('unknown', 'D', { reason: 'connection reset' }),
        oldLine('sending', 'E', { bodyHash: 'he', line: 6 }),
        oldLine('not-sent', 'E', { reason: 'interrupted' }),
        // Sent twice without an outcome, then not sent: the first sending stays in doubt.
        oldLine('sending', 'F', { bodyHash: 'hf', line: 7 }),
        oldLine('sending', 'F', { bodyHash: 'hf', line: 7 }),
        oldLine('not-sent', 'F', { reason: 'interrupted' }),
        oldLine('sending', 'G', { bodyHash: 'hg', line: 8 }),
        oldLine('resolved-created', 'G', { id: 7, code: 'SO-7', evidence: 'checked by hand' }),
        oldLine('sending', 'H', { bodyHash: 'hh', line: 9 }),
        oldLine('unknown', 'H', { reason: 'reset' }),
        oldLine('resolved-not-created', 'H', { evidence: 'checked by hand' }),
        // A record of a later release: ignored.
        oldLine('archived', 'A'),
      ].join(''),
    );
    const journal = await OrderJournal.open(path, { baseUrl: BASE });
    expect(journal.stateOf('A')).toMatchObject({
      status: 'created',
      id: 1,
      code: 'SO-1',
      bodyHash: 'ha',
      line: 2,
      sentAt: '2026-11-20T10:00:00.000Z',
    });
    expect(journal.stateOf('A')?.token).toBeUndefined();
    expect(journal.stateOf('B')).toMatchObject({ status: 'not-created', httpStatus: 422, bodyHash: 'hb' });
    // A `sending` without outcome: claimed by nobody the ledger can name (in doubt for a claim).
    expect(journal.stateOf('C')).toMatchObject({
      status: 'claimed',
      event: 'sending',
      bodyHash: 'hc',
      line: 4,
    });
    expect(journal.stateOf('C')?.owner).toBeUndefined();
    expect(journal.stateOf('D')).toMatchObject({ status: 'in-doubt', reason: 'connection reset', line: 5 });
    expect(journal.stateOf('E')).toBeUndefined();
    expect(journal.stateOf('F')).toMatchObject({ status: 'in-doubt', event: 'unknown', bodyHash: 'hf' });
    expect(journal.stateOf('G')).toMatchObject({
      status: 'created',
      resolved: 'created',
      id: 7,
      code: 'SO-7',
    });
    expect(journal.stateOf('H')).toMatchObject({ status: 'not-created', resolved: 'not-created' });
    expect(journal.replay).toMatchObject({ created: 2, failed: 2, unknown: 3, command: 'orders import' });

    // This release's claim over the old `sending` (--retry-unknown), and its outcome.
    const retry = claimed(journal, 'C', 'hc', 'new');
    journal.created(retry, { httpStatus: 201, id: 3 });
    const again = claimed(journal, 'H', 'hh', 'h2');
    journal.failed(again, { httpStatus: 422, message: 'still invalid' });
    await journal.close();
    expect(lines(path).find((r) => r.token === 'new' && r.event === 'claim')).not.toHaveProperty('over');
    expect(lines(path).find((r) => r.token === 'h2' && r.event === 'claim')).not.toHaveProperty('over');

    const { states, replay } = await OrderJournal.inspect(path, BASE);
    expect(states.get('C')).toMatchObject({ status: 'created', id: 3, token: 'new' });
    expect(states.get('H')).toMatchObject({ status: 'not-created', message: 'still invalid' });
    expect(replay).toMatchObject({ created: 3, failed: 2, unknown: 2 });
  });

  it('scopes states by normalized base URL: records without a base URL, or of another one, are not this run’s', async () => {
    const path = join(tempDir(), 'j.ndjson');
    writeFileSync(
      path,
      [
        // The same service written with a trailing slash: the same scope.
        `${JSON.stringify({ event: 'sending', externalId: 'A', baseUrl: `${BASE}/`, at: 'x' })}\n`,
        `${JSON.stringify({ event: 'created', externalId: 'A', baseUrl: `${BASE}/`, at: 'x', id: 1 })}\n`,
        `${JSON.stringify({ event: 'sending', externalId: 'B', at: 'x' })}\n`,
        `${JSON.stringify({ event: 'created', externalId: 'C', baseUrl: OTHER, at: 'x' })}\n`,
        `${JSON.stringify({ event: 'unknown', externalId: 'D', baseUrl: 'http://127.0.0.1:9998', at: 'x' })}\n`,
      ].join(''),
    );
    const { states, replay } = await OrderJournal.inspect(path, BASE);
    expect(states.get('A')).toMatchObject({ status: 'created', id: 1 });
    expect(states.has('B')).toBe(false);
    expect(states.has('C')).toBe(false);
    expect(replay.otherBaseUrls).toEqual([
      { baseUrl: '(no base URL)', created: 0, unknown: 1 },
      { baseUrl: OTHER, created: 1, unknown: 0 },
      { baseUrl: 'http://127.0.0.1:9998', created: 0, unknown: 1 },
    ]);
    const refused = OrderJournal.open(path, { baseUrl: BASE });
    await expect(refused).rejects.toBeInstanceOf(OtherBaseUrlError);
    await expect(refused).rejects.toThrow(
      /records 0 orders created and 1 in doubt at \(no base URL\) \(and at 2 other URLs\)/,
    );
    // `orders resolve` opens it anyway, and records only for its own base URL.
    const resolve = await OrderJournal.open(path, {
      baseUrl: OTHER,
      allowOtherBaseUrls: true,
      recordRun: false,
    });
    expect(resolve.stateOf('C')).toMatchObject({ status: 'created' });
    expect(resolve.stateOf('A')).toBeUndefined();
    resolve.resolved('C', 'not-created', { evidence: 'checked' });
    await resolve.close();
    expect(lines(path).at(-1)).toMatchObject({ event: 'resolved', externalId: 'C', baseUrl: OTHER });
    expect(lines(path).filter((r) => r.event === 'run')).toEqual([]);
  });

  it('drops a torn last line (kill -9 during a write) and appends after the last complete one', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const first = await OrderJournal.open(path, { baseUrl: BASE });
    claimed(first, 'A', 'ha');
    await first.close();
    appendFileSync(path, `{"externalId":"A","event":"created","token":"t1","baseUrl":"${BASE}","httpSt`);

    const second = await OrderJournal.open(path, { baseUrl: BASE });
    expect(second.replay.tornTail).toBe(true);
    expect(second.replay.lines).toBe(2);
    expect(second.stateOf('A')?.status).toBe('claimed');
    second.failed(claimOf('A'), { message: 'x' });
    await second.close();
    // Every line parses: the new records did not glue onto the torn one.
    expect(lines(path).map((r) => r.event)).toEqual(['run', 'claim', 'run', 'failed']);
    expect((await OrderJournal.inspect(path, BASE)).states.get('A')?.status).toBe('not-created');
  });

  it('refuses a journal damaged before its last line, naming the line', async () => {
    const path = join(tempDir(), 'j.ndjson');
    writeFileSync(path, `{"event":"run"}\nnot json\n{"event":"run"}\n`);
    const opening = OrderJournal.open(path, { baseUrl: BASE });
    await expect(opening).rejects.toBeInstanceOf(UsageError);
    await expect(opening).rejects.toThrow(
      `The import journal ${path} is damaged at line 2 (not a JSON record)`,
    );
    expect(existsSync(`${path}.lock`)).toBe(false);
    await expect(OrderJournal.inspect(path, BASE)).rejects.toThrow(/damaged at line 2/);
  });

  it('refuses a journal in use by a live process, and takes over the lock file of an older ordercli that died', async () => {
    const path = join(tempDir(), 'j.ndjson');
    const held = await OrderJournal.open(path, { baseUrl: BASE });
    await expect(OrderJournal.open(path, { baseUrl: BASE })).rejects.toThrow(/already in use/);
    await held.close();

    // A live process other than this one.
    writeFileSync(`${path}.lock`, `${process.ppid}\n`);
    await expect(OrderJournal.open(path, { baseUrl: BASE })).rejects.toThrow(
      `in use by another ordercli (process ${process.ppid})`,
    );

    // The pid of a process that has exited.
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(`${path}.lock`, `${dead}\n`);
    const taken = await OrderJournal.open(path, { baseUrl: BASE });
    // The lock of an older ordercli (a file) was replaced by this version's lock folder.
    const owner = JSON.parse(readFileSync(`${path}.lock/owner-1.json`, 'utf8')) as { pid: number };
    expect(owner.pid).toBe(process.pid);
    await taken.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('inspect() reads without locking and treats a missing file as empty', async () => {
    const dir = tempDir();
    const none = await OrderJournal.inspect(join(dir, 'none.ndjson'), BASE);
    expect(none.replay).toMatchObject({ lines: 0, created: 0, tornTail: false });
    expect(none.states.size).toBe(0);
    expect(existsSync(join(dir, 'none.ndjson'))).toBe(false);
    const path = join(dir, 'j.ndjson');
    const journal = await OrderJournal.open(path, { baseUrl: BASE });
    journal.created(claimed(journal, 'A'), { httpStatus: 201 });
    await journal.sync();
    // The journal is locked by `journal`: inspect reads it all the same.
    const { replay, states } = await OrderJournal.inspect(path, BASE);
    expect(replay).toMatchObject({ lines: 3, created: 1 });
    expect(states.get('A')?.status).toBe('created');
    await journal.close();
  });
});
