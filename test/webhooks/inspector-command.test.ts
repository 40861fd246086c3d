// The command line the inspector offers to copy for an event: a replay of the log when there is
// one, else a trigger with the body in a file; the key never by value.
import { describe, expect, it } from 'vitest';
import { copyCommand } from '../../src/webhooks/inspector-command.js';

const EVENT = 'sales_order_validated';

describe('copyCommand', () => {
  const record = { receivedAt: 't', event: EVENT, headers: {}, body: { code: 'SO-1' } };
  it('is a replay line with --log, a trigger line with a body file without it, the key never by value', () => {
    expect(
      copyCommand(record, {
        logFile: "/tmp/it's.ndjson",
        url: 'http://127.0.0.1:3000/h',
        seq: 7,
      }),
    ).toEqual({
      command: `ordercli webhooks replay '/tmp/it'\\''s.ndjson' --url http://127.0.0.1:3000/h --key "$ORDERCLI_WEBHOOK_KEY" --event ${EVENT} --received-at t`,
      // An option and its value are one part: the page wraps between parts only.
      parts: [
        'ordercli',
        'webhooks',
        'replay',
        "'/tmp/it'\\''s.ndjson'",
        '--url http://127.0.0.1:3000/h',
        '--key "$ORDERCLI_WEBHOOK_KEY"',
        `--event ${EVENT}`,
        '--received-at t',
      ],
      note: 'The same headers and body bytes as Replay.',
    });
    expect(copyCommand(record, { logFile: undefined, url: 'http://127.0.0.1:3000/h', seq: 7 }).command).toBe(
      `ordercli webhooks trigger ${EVENT} --url http://127.0.0.1:3000/h --key "$ORDERCLI_WEBHOOK_KEY" --data ${EVENT}-7.json`,
    );
    expect(copyCommand(undefined, { logFile: undefined, url: undefined, seq: 1 }).command).toBe('');
    const underNpx = {
      logFile: 'events.ndjson',
      url: undefined,
      seq: 1,
      program: 'npx ordercli',
    };
    expect(copyCommand(record, underNpx).command).toMatch(
      /^npx ordercli webhooks replay events\.ndjson --url /,
    );
  });
});
