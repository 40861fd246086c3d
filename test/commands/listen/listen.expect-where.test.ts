/**
 * How `listen --expect --where` reads a body field, in-process with real HTTP: dotted paths,
 * values compared as text (a number as JSON writes it), every condition needed, an absent field or
 * an object never matching, a notification of another event never counting.
 */
import { describe, expect, it } from 'vitest';
import { post, startListen } from '../../support/listen.js';

const KEY = 'whk_expect_where_0123456789abcdef';
const EVENT = 'sales_order_validated';

function send(url: string, body: unknown, event = EVENT) {
  return post(url, JSON.stringify(body), {
    'content-type': 'application/json',
    'x-webhook-event': event,
    'x-webhook-key': KEY,
  });
}

describe('listen --expect --where', () => {
  it('counts only a notification every condition holds for; the others are still accepted and shown', async () => {
    const listen = await startListen([
      '--key',
      KEY,
      '--expect',
      EVENT,
      '--where',
      'data.order.id=10004',
      '--where',
      'status=validated',
      '--json',
    ]);
    expect(listen.io.stderrText()).toContain(
      'Waiting for 1 sales_order_validated notification with data.order.id=10004 and status=validated (up to 5m).',
    );
    const misses = [
      { data: { order: { id: 10004 } }, status: 'draft' }, // one condition only
      { data: { order: { id: 10005 } }, status: 'validated' },
      { data: { order: { id: '10004x' } }, status: 'validated' },
      { data: { order: {} }, status: 'validated' }, // field absent
      { data: { order: { id: { value: 10004 } } }, status: 'validated' }, // an object
      { data: 'order', status: 'validated' },
    ];
    for (const body of misses) expect((await send(listen.url, body)).status).toBe(200);
    // The right body, but another event.
    expect(
      (await send(listen.url, { data: { order: { id: 10004 } }, status: 'validated' }, 'other')).status,
    ).toBe(200);
    // The number 10004 reads as the text 10004.
    expect((await send(listen.url, { data: { order: { id: 10004 } }, status: 'validated' })).status).toBe(
      200,
    );
    const result = await listen.done;
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(misses.length + 2);
    expect(result.stderr).toContain(`Stopped: ${misses.length + 2} accepted`);
  });

  it('null, true and list items read as JSON writes them', async () => {
    const listen = await startListen([
      '--key',
      KEY,
      '--expect',
      EVENT,
      '--where',
      'note=null',
      '--where',
      'paid=true',
      '--where',
      'items.1.line=2',
    ]);
    expect((await send(listen.url, { note: null, paid: true, items: [{ line: 1 }] })).status).toBe(200);
    expect(
      (await send(listen.url, { note: null, paid: true, items: [{ line: 1 }, { line: 2 }] })).status,
    ).toBe(200);
    const result = await listen.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Stopped: 2 accepted (2 shown)');
  });
});
