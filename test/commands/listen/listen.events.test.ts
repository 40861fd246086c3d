// `listen --events` through the built binary: only the events named are accepted; another one is
// answered 200 (the service did nothing wrong), shown as ignored, neither logged nor counted as
// accepted; `--event` is the same option; --once ends at the first event accepted.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../support/cli.js';
import { post, spawnListen } from '../../support/listen.js';
import { waitFor } from '../../support/wait.js';

const KEY = 'whk_events_test_key_0123456789';
const BODY = '{"id":7,"code":"SO-7"}';

describe('listen --events', () => {
  it('accepts only the named events; others get 200, are shown as ignored and never logged', async () => {
    const log = join(tempDir(), 'events.ndjson');
    const listen = await spawnListen([
      '--port',
      '0',
      '--key',
      KEY,
      '--log',
      log,
      '--events',
      'sales_order_validated,contact_updated',
    ]);
    const send = (event: string) =>
      post(listen.url, BODY, { 'x-webhook-event': event, 'x-webhook-key': KEY });
    expect((await send('packaging_updated')).status).toBe(200);
    expect((await send('sales_order_validated')).status).toBe(200);
    await waitFor(() => listen.stdout().includes('SO-7'), 10_000, 'the accepted event shown');
    expect(listen.stderr()).toContain(
      'packaging_updated ignored (not in --events): answered 200, not logged nor forwarded',
    );
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(130);
    expect(listen.stderr()).toContain(
      'Stopped: 1 accepted (1 shown), 1 ignored (not in --events), 0 rejected.',
    );
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines.map((line) => JSON.parse(line).event)).toEqual(['sales_order_validated']);
  });

  it('--event is the same option, and --once ends at the first event it accepts', async () => {
    const log = join(tempDir(), 'events.ndjson');
    const listen = await spawnListen([
      '--port',
      '0',
      '--key',
      KEY,
      '--log',
      log,
      '--once',
      '--event',
      'contact_updated',
    ]);
    const send = (event: string) =>
      post(listen.url, BODY, { 'x-webhook-event': event, 'x-webhook-key': KEY });
    expect((await send('sales_order_validated')).status).toBe(200);
    expect((await send('contact_updated')).status).toBe(200);
    expect(await listen.exited).toBe(0);
    expect(
      existsSync(log) &&
        readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line).event),
    ).toEqual(['contact_updated']);
  });
});
