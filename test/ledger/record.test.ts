// How one record changes the state of its key (the ledger and the journal alike), and how a state reads.
import { describe, expect, it } from 'vitest';
import { describeEntry } from '../../src/import/send/describe-entry.js';
import {
  applyRecord,
  bodyHash,
  describeOwner,
  isFree,
  type LedgerEntry,
  type LedgerRecord,
  settledAsUnknown,
  stateKey,
} from '../../src/ledger/record.js';

const OWNER = { host: 'build-7', pid: 4242, id: 'o1' };

function record(event: LedgerRecord['event'], fields: Partial<LedgerRecord> = {}): LedgerRecord {
  return { externalId: 'A', event, at: `t-${event}`, ...fields };
}

/** The state after each record in turn, from nothing. */
function replay(records: LedgerRecord[], options: { granted?: boolean } = {}): LedgerEntry | undefined {
  return records.reduce<LedgerEntry | undefined>(
    (state, next) => applyRecord(state, next, options),
    undefined,
  );
}

describe('applyRecord: claims', () => {
  it('claims a free key, keeping the body hash, the line and the owner', () => {
    const state = applyRecord(
      undefined,
      record('claim', { token: 'c1', owner: OWNER, bodyHash: 'h', line: 3, by: 'orders import' }),
    );
    expect(state).toEqual({
      status: 'claimed',
      event: 'claim',
      at: 't-claim',
      by: 'orders import',
      token: 'c1',
      owner: OWNER,
      bodyHash: 'h',
      line: 3,
      sentAt: 't-claim',
    });
  });

  it('ignores a second claim without over, and a claim without a token', () => {
    const first = applyRecord(undefined, record('claim', { token: 'c1' }));
    expect(applyRecord(first, record('claim', { token: 'c2', at: 'later' }))).toBe(first);
    expect(applyRecord(undefined, record('claim'))).toBeUndefined();
  });

  it('takes over a known state only when over names it (compare-and-swap)', () => {
    const created = replay([record('claim', { token: 'c1' }), record('created', { token: 'c1', id: 7 })]);
    expect(applyRecord(created, record('claim', { token: 'c2', over: 'created:c1:stale' }))).toBe(created);
    const taken = applyRecord(created, record('claim', { token: 'c2', over: stateKey(created!) }));
    expect(taken).toMatchObject({ status: 'claimed', token: 'c2', previous: { status: 'created', id: 7 } });
  });

  it('lets a claim in over a refused or resolved-not-created key, which are free', () => {
    const refused = replay([
      record('claim', { token: 'c1' }),
      record('failed', { token: 'c1', httpStatus: 422 }),
    ]);
    expect(isFree(refused)).toBe(true);
    expect(applyRecord(refused, record('claim', { token: 'c2' }))).toMatchObject({
      status: 'claimed',
      token: 'c2',
    });
  });

  it('applies every claim of a journal whose claims the ledger granted', () => {
    const first = applyRecord(undefined, record('claim', { token: 'c1' }));
    expect(applyRecord(first, record('claim', { token: 'c2' }), { granted: true })).toMatchObject({
      token: 'c2',
      previous: { status: 'in-doubt', event: 'unknown' },
    });
  });
});

describe('applyRecord: outcomes', () => {
  it('turns created, failed and unknown into created, not-created and in-doubt, keeping the claim details', () => {
    const claim = record('claim', { token: 'c1', bodyHash: 'h', line: 5 });
    expect(replay([claim, record('created', { token: 'c1', httpStatus: 201, id: 9, code: 'SO-9' })])).toEqual(
      {
        status: 'created',
        event: 'created',
        at: 't-created',
        httpStatus: 201,
        id: 9,
        code: 'SO-9',
        token: 'c1',
        line: 5,
        bodyHash: 'h',
        sentAt: 't-claim',
      },
    );
    expect(replay([claim, record('failed', { token: 'c1' })])?.status).toBe('not-created');
    expect(replay([claim, record('unknown', { token: 'c1', reason: 'reset' })])).toMatchObject({
      status: 'in-doubt',
      reason: 'reset',
      sentAt: 't-claim',
    });
  });

  it('ignores an outcome whose token is not the current claim', () => {
    const claimed = replay([record('claim', { token: 'c1' })]);
    expect(applyRecord(claimed, record('created', { token: 'other' }))).toBe(claimed);
  });

  it('applies an outcome without a token (records before claims) to whatever the state is', () => {
    expect(replay([record('created', { id: 1 })])).toMatchObject({ status: 'created', id: 1 });
  });

  it('restores the state before the claim on not-sent', () => {
    const refused = replay([record('claim', { token: 'c1' }), record('failed', { token: 'c1' })]);
    const claimed = applyRecord(refused, record('claim', { token: 'c2' }));
    expect(applyRecord(claimed, record('not-sent', { token: 'c2' }))).toEqual(refused);
    expect(applyRecord(claimed, record('not-sent', { token: 'c1' }))).toBe(claimed);
  });

  it('never restores a previous claim as a claim: it becomes a doubt', () => {
    const state = replay([record('sending'), record('sending', { at: 'second' })]);
    expect(state?.previous).toMatchObject({
      status: 'in-doubt',
      event: 'unknown',
      reason: 'the command that sent it stopped before the answer',
    });
  });

  it('ignores an event of a later version', () => {
    const claimed = replay([record('claim', { token: 'c1' })]);
    expect(applyRecord(claimed, record('archived' as LedgerRecord['event']))).toBe(claimed);
  });
});

describe('applyRecord: resolutions', () => {
  it('records a person resolving created (with the id found, or the one known) and not created', () => {
    const doubt = replay([record('claim', { token: 'c1' }), record('unknown', { token: 'c1' })]);
    expect(
      applyRecord(doubt, record('resolved', { resolution: 'created', id: 12, evidence: 'seen' })),
    ).toMatchObject({ status: 'created', event: 'resolved', resolved: 'created', id: 12, evidence: 'seen' });
    expect(applyRecord(doubt, record('resolved-not-created'))).toMatchObject({
      status: 'not-created',
      resolved: 'not-created',
      message: 'checked at the service: not created',
    });
    const created = replay([
      record('claim', { token: 'c1' }),
      record('created', { token: 'c1', id: 4, code: 'SO-4' }),
    ]);
    expect(applyRecord(created, record('resolved-created'))).toMatchObject({ id: 4, code: 'SO-4' });
    expect(applyRecord(created, record('resolved-created', { id: 5 }))?.code).toBeUndefined();
  });

  it('applies a resolution written over a state only while that state stands', () => {
    const doubt = replay([record('claim', { token: 'c1' }), record('unknown', { token: 'c1' })]);
    const stale = record('resolved', { resolution: 'created', over: 'unknown:c1:earlier' });
    expect(applyRecord(doubt, stale)).toBe(doubt);
    expect(applyRecord(doubt, { ...stale, over: stateKey(doubt!) })?.status).toBe('created');
    expect(applyRecord(doubt, record('resolved'))).toBe(doubt);
  });
});

describe('states in words', () => {
  it('describes each state with who sent it and the ids', () => {
    const base = { at: 'T', by: 'orders import' as const, input: '/data/in.csv' };
    expect(describeEntry({ ...base, status: 'created', event: 'created', id: 1, code: 'SO-1' })).toBe(
      'created at T by orders import of /data/in.csv (id 1, code SO-1)',
    );
    expect(describeEntry({ status: 'created', event: 'created', at: 'T', httpStatus: 409 })).toBe(
      'found already there (the service answered 409) at T by ordercli',
    );
    expect(describeEntry({ ...base, status: 'in-doubt', event: 'unknown', reason: 'timeout' })).toBe(
      'sent with an unknown outcome (timeout) at T by orders import of /data/in.csv',
    );
    expect(describeEntry({ status: 'claimed', event: 'claim', at: 'T' })).toBe(
      'sent with no outcome recorded at T by ordercli',
    );
    expect(describeEntry({ status: 'not-created', event: 'resolved', at: 'T' })).toBe(
      'resolved as not created at T by ordercli',
    );
    expect(describeEntry({ status: 'not-created', event: 'failed', at: 'T' })).toBe(
      'refused at T by ordercli',
    );
  });

  it('names the owner of a claim', () => {
    expect(describeOwner({ status: 'claimed', event: 'claim', at: 'T', owner: OWNER })).toBe(
      'pid 4242 on build-7 since T',
    );
    expect(describeOwner({ status: 'claimed', event: 'sending', at: 'T' })).toBe('since T');
  });

  it('settles a claim as a doubt that still names its owner, without its previous state', () => {
    const claim: LedgerEntry = {
      status: 'claimed',
      event: 'claim',
      at: 'T',
      owner: OWNER,
      previous: { status: 'not-created', event: 'failed', at: 'S' },
    };
    expect(settledAsUnknown(claim)).toEqual({
      status: 'in-doubt',
      event: 'unknown',
      at: 'T',
      reason: 'the command that sent it stopped before the answer',
      owner: OWNER,
    });
  });

  it('hashes a body to 22 characters that change with the body', () => {
    expect(bodyHash('{"a":1}')).toMatch(/^[\w-]{22}$/);
    expect(bodyHash('{"a":1}')).toBe(bodyHash('{"a":1}'));
    expect(bodyHash('{"a":1}')).not.toBe(bodyHash('{"a":2}'));
  });
});
