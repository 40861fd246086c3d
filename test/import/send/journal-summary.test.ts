// What a journal knows: the services it holds orders for, which one a command deals with, and
// that service's orders by state, with the unknown ones listed.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JournalState } from '../../../src/import/send/journal.js';
import {
  ambiguousBaseUrl,
  chooseBaseUrl,
  journalBaseUrls,
  summarizeJournal,
} from '../../../src/import/send/journal-summary.js';
import { tempDir } from '../../support/cli.js';

const A = 'http://127.0.0.1:4780';
const B = 'https://orders.example.com';

function journal(records: Record<string, unknown>[], tail = ''): string {
  const path = join(tempDir('ordercli-journal-summary-'), 'in.csv.journal.ndjson');
  writeFileSync(path, records.map((record) => `${JSON.stringify(record)}\n`).join('') + tail);
  return path;
}

function record(externalId: string, event: string, fields: Record<string, unknown> = {}) {
  return { externalId, event, at: `t-${externalId}-${event}`, baseUrl: A, ...fields };
}

describe('the services of a journal', () => {
  it('lists the base URLs its records name, normalized, in order of first appearance', async () => {
    const path = journal(
      [
        record('X', 'created', { baseUrl: `${B}/` }),
        record('Y', 'created'),
        record('Z', 'created', { baseUrl: B }),
      ],
      '{"externalId":"T","baseUrl":"http://tor',
    );
    expect(await journalBaseUrls(path)).toEqual([B, A]);
  });

  it('chooses the configured one when the journal holds it, else its only one', () => {
    expect(chooseBaseUrl([A, B], `${B}/`)).toBe(B);
    expect(chooseBaseUrl([A], 'http://elsewhere')).toBe(A);
    expect(chooseBaseUrl([A, B], undefined)).toBeUndefined();
    expect(chooseBaseUrl([A, B], 'http://elsewhere')).toBeUndefined();
  });

  it('says which services it holds when none was named', () => {
    expect(ambiguousBaseUrl('in.csv.journal.ndjson', [A, B]).message).toBe(
      `The journal in.csv.journal.ndjson holds orders for 2 services (${A}, ${B}), and no --base-url was given: say which with --base-url.`,
    );
    expect(ambiguousBaseUrl('j', [A, B], 'http://other/').message).toContain(
      'and none is the configured base URL http://other: say which',
    );
  });
});

describe('summarizeJournal', () => {
  it("counts one service's orders by state and lists the unknown ones", async () => {
    const path = journal([
      record('CREATED', 'created', { httpStatus: 201 }),
      record('FAILED', 'failed', { httpStatus: 422 }),
      record('UNKNOWN', 'sending', { line: 4 }),
      record('UNKNOWN', 'unknown', { reason: 'timeout' }),
      record('STOPPED', 'sending', { line: 7 }),
      record('RESOLVED', 'unknown'),
      record('RESOLVED', 'resolved-created'),
      record('GIVEN-UP', 'unknown'),
      record('GIVEN-UP', 'resolved-not-created'),
      record('OTHER', 'created', { baseUrl: B }),
    ]);
    const summary = await summarizeJournal(path, `${A}/`);
    expect(summary.baseUrl).toBe(A);
    expect(summary.tornTail).toBe(false);
    expect(summary.counts).toEqual({
      created: 1,
      resolvedCreated: 1,
      failed: 1,
      resolvedNotCreated: 1,
      unknown: 2,
      total: 6,
    });
    expect(summary.unknown).toEqual([
      { externalId: 'UNKNOWN', line: 4, sentAt: 't-UNKNOWN-sending', reason: 'timeout' },
      {
        externalId: 'STOPPED',
        line: 7,
        sentAt: 't-STOPPED-sending',
        reason: 'the run that sent it stopped before the answer',
      },
    ]);
  });

  it("takes the ledger's word over the journal's, and notes a torn last line", async () => {
    const path = journal([record('A-1', 'sending')], '{"externalId":"A-2","ev');
    const ledger = new Map<string, JournalState>([
      ['A-1', { status: 'created', event: 'created', at: 'later', id: 9 }],
      ['A-3', { status: 'in-doubt', event: 'unknown', at: 'later' }],
    ]);
    const summary = await summarizeJournal(path, A, ledger);
    expect(summary.tornTail).toBe(true);
    expect(summary.counts).toMatchObject({ created: 1, unknown: 1, total: 2 });
    expect(summary.unknown).toEqual([{ externalId: 'A-3', line: null, sentAt: null, reason: 'no answer' }]);
  });
});
