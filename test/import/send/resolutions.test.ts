// The steps of `orders resolve` on their own: the flags read, a listen log read, and the plan made
// before anything is written.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/core/errors.js';
import {
  historyPlace,
  LEDGER_PLACE,
  planResolutions,
  readValidatedOrders,
  requestsFromEvents,
  requestsFromFlags,
  stateName,
} from '../../../src/import/send/resolutions.js';
import type { LedgerEntry } from '../../../src/ledger/record.js';
import { tempDir } from '../../support/cli.js';

const BASE = 'http://127.0.0.1:4780';
const BY_USER = 'checked at the service by the user';

function state(fields: Partial<LedgerEntry> & Pick<LedgerEntry, 'status' | 'event'>): LedgerEntry {
  return { at: '2026-11-26T10:00:00.000Z', ...fields };
}

const STATES = new Map<string, LedgerEntry>([
  ['DOUBT', state({ status: 'in-doubt', event: 'unknown' })],
  ['CLAIMED', state({ status: 'claimed', event: 'claim' })],
  ['CREATED', state({ status: 'created', event: 'created', httpStatus: 201, id: 7 })],
  ['RESOLVED', state({ status: 'created', event: 'resolved', resolved: 'created' })],
  ['FAILED', state({ status: 'not-created', event: 'failed' })],
  ['GIVEN-UP', state({ status: 'not-created', event: 'resolved', resolved: 'not-created' })],
]);

describe('requestsFromFlags', () => {
  it('reads --created with or without an id, and --not-created', () => {
    expect(requestsFromFlags([' A = 10042', 'B=SO-2026-000001', 'C'], ['D '])).toEqual([
      { externalId: 'A', resolution: 'created', evidence: BY_USER, id: 10042 },
      { externalId: 'B', resolution: 'created', evidence: BY_USER, id: 'SO-2026-000001' },
      { externalId: 'C', resolution: 'created', evidence: BY_USER },
      { externalId: 'D', resolution: 'not-created', evidence: BY_USER },
    ]);
    // An id too long for a safe number stays text.
    expect(requestsFromFlags(['E=12345678901234567'], [])[0]?.id).toBe('12345678901234567');
  });

  it('refuses an empty externalId or id, and an externalId given twice', () => {
    expect(() => requestsFromFlags(['=5'], [])).toThrow(
      '--created needs an externalId (--created <externalId>[=<id>]), not "=5".',
    );
    expect(() => requestsFromFlags(['A='], [])).toThrow(
      "--created A=: the id after = is empty; give the service's id or leave out =.",
    );
    expect(() => requestsFromFlags([], [' '])).toThrow('--not-created needs an externalId.');
    expect(() => requestsFromFlags(['A', 'A=1'], [])).toThrow('A is given twice; give each externalId once.');
    expect(() => requestsFromFlags(['A'], ['A'])).toThrow(
      'A is given both as --created and as --not-created; check it at the service and give one.',
    );
  });
});

describe('readValidatedOrders', () => {
  function logLine(event: string | null, body: unknown, headers: Record<string, string> = {}): string {
    return JSON.stringify({ receivedAt: `at-${JSON.stringify(body).length}`, event, headers, body });
  }

  it('finds the orders of sales_order_validated notifications, passing over other lines', async () => {
    const path = join(tempDir('ordercli-resolutions-'), 'events.ndjson');
    writeFileSync(
      path,
      [
        logLine('sales_order_validated', { externalId: 'A', id: 10001, code: 'SO-1' }),
        logLine('sales_order_created', { externalId: 'B', id: 10002 }),
        logLine(
          null,
          { order: { externalId: 'C', id: '10003' } },
          { 'x-webhook-event': 'sales_order_validated' },
        ),
        logLine('sales_order_validated', [{ externalId: 'D' }, { externalId: '' }, 'x']),
        logLine('sales_order_validated', { externalId: 'A', id: 99 }),
        '',
        'not json',
        '{"receivedAt":"torn',
      ].join('\n'),
    );
    const validated = await readValidatedOrders(path, 'events.ndjson');
    expect(validated).toMatchObject({ lines: 7, validated: 4, skipped: 2 });
    expect(Object.fromEntries(validated.byExternalId)).toEqual({
      A: { id: 10001, code: 'SO-1', receivedAt: expect.any(String) },
      C: { id: '10003', receivedAt: expect.any(String) },
      D: { receivedAt: expect.any(String) },
    });
  });

  it('refuses a log it cannot read, naming it as shown', async () => {
    const missing = join(tempDir('ordercli-resolutions-'), 'none.ndjson');
    await expect(readValidatedOrders(missing, 'none.ndjson')).rejects.toThrow(
      'Cannot read the listen log none.ndjson (ENOENT): give the file that ordercli listen --log wrote.',
    );
  });
});

describe('requestsFromEvents', () => {
  it("asks to resolve only the unknown orders of the input's history that a notification names", () => {
    const validated = {
      byExternalId: new Map([
        ['DOUBT', { id: 1, code: 'SO-1', receivedAt: 'T1' }],
        ['CLAIMED', { receivedAt: 'T2' }],
        ['CREATED', { id: 7, receivedAt: 'T3' }],
        ['ELSEWHERE', { receivedAt: 'T4' }],
      ]),
      lines: 4,
      validated: 4,
      skipped: 0,
    };
    expect(requestsFromEvents(validated, STATES, 'log.ndjson')).toEqual([
      {
        externalId: 'DOUBT',
        resolution: 'created',
        evidence: 'sales_order_validated received T1 (log.ndjson)',
        fromEvents: true,
        id: 1,
        code: 'SO-1',
      },
      {
        externalId: 'CLAIMED',
        resolution: 'created',
        evidence: 'sales_order_validated received T2 (log.ndjson)',
        fromEvents: true,
      },
    ]);
  });
});

describe('planResolutions', () => {
  const plan = (created: string[], notCreated: string[] = []) =>
    planResolutions(requestsFromFlags(created, notCreated), STATES, historyPlace('exports/in.csv'), BASE).map(
      ({ request, from, change, note }) => [request.externalId, from, change, note],
    );

  it('changes unknown orders, and leaves alone what is already settled, saying why', () => {
    expect(plan(['DOUBT', 'CLAIMED', 'CREATED', 'RESOLVED', 'FAILED'])).toEqual([
      ['DOUBT', 'unknown', true, undefined],
      ['CLAIMED', 'unknown', true, undefined],
      ['CREATED', 'created', false, 'already created (the service answered it): unchanged'],
      ['RESOLVED', 'created (resolved)', false, 'already recorded as created: unchanged'],
      ['FAILED', 'failed', true, undefined],
    ]);
    expect(plan(['RESOLVED=10'])).toEqual([['RESOLVED', 'created (resolved)', true, undefined]]);
    expect(plan([], ['DOUBT', 'FAILED', 'GIVEN-UP', 'RESOLVED'])).toEqual([
      ['DOUBT', 'unknown', true, undefined],
      ['FAILED', 'failed', false, 'the next run sends it anyway: unchanged'],
      ['GIVEN-UP', 'not created (resolved)', false, 'already recorded as not created: unchanged'],
      ['RESOLVED', 'created (resolved)', true, undefined],
    ]);
  });

  it("refuses ids the input's history or the ledger does not hold, recording nothing", () => {
    expect(() => plan(['DOUBT', 'X-1'])).toThrow(
      `The order ledger (the history of exports/in.csv) holds no order X-1 for ${BASE}, so nothing was recorded: check the externalId (ordercli orders journal exports/in.csv lists the unknown ones).`,
    );
    const many = Array.from({ length: 12 }, (_, i) => `M-${i}`);
    expect(() => planResolutions(requestsFromFlags(many, []), STATES, LEDGER_PLACE, BASE)).toThrow(
      /^The order ledger holds no order M-0, M-1, .*, M-9, … \(12 in all\) for .*: check the externalIds \(as the error of orders create/,
    );
  });

  it('refuses --not-created for an order the service answered as created', () => {
    expect(() => plan([], ['CREATED', 'DOUBT'])).toThrow(
      "--not-created contradicts the service's own answer, so nothing was recorded: CREATED: the service answered 201 with id 7: it was created.",
    );
    expect(() => plan([], ['CREATED'])).toThrow(UsageError);
  });

  it('names a state in the words of orders journal', () => {
    expect([...STATES.values()].map(stateName)).toEqual([
      'unknown',
      'unknown',
      'created',
      'created (resolved)',
      'failed',
      'not created (resolved)',
    ]);
  });
});
