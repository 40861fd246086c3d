import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNeverValidated, type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { call, partnerOrder } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver.close());

/** A sandbox with this validation fail rate, subscribed to the test's receiver. */
async function sandboxFailing(validationFailRate: number, logger?: (line: string) => void): Promise<Sandbox> {
  const sandbox = await startSandbox({
    port: 0,
    quiet: logger === undefined,
    logger,
    validationDelayMs: 1,
    validationFailRate,
  });
  await call(sandbox, 'PUT', '/api/v1/webhooks', {
    token: sandbox.tokens.partner,
    body: { event: 'sales_order_validated', url: receiver.url },
  });
  return sandbox;
}

async function createOrders(sandbox: Sandbox, externalIds: string[]) {
  const created: Array<{ id: number; code: string; externalId: string }> = [];
  for (const externalId of externalIds) {
    const response = await call(sandbox, 'POST', '/api/v1/orders', {
      token: sandbox.tokens.partner,
      body: partnerOrder(externalId),
    });
    expect(response.status).toBe(201);
    created.push(response.body as { id: number; code: string; externalId: string });
  }
  return created;
}

async function settled(sandbox: Sandbox): Promise<void> {
  await waitFor(
    () => sandbox.pending().validations === 0 && sandbox.pending().deliveries === 0,
    10_000,
    'the validations and deliveries settled',
  );
}

describe('validationFailRate (--validation-fail-rate)', () => {
  it('at 1, never validates an order nor notifies it; nothing stays pending', async () => {
    const lines: string[] = [];
    const sandbox = await sandboxFailing(1, (line) => lines.push(line));
    try {
      const [order] = await createOrders(sandbox, ['NV-1']);
      await settled(sandbox);
      expect(lines).toContain(`order ${order!.code} (NV-1) will never be validated (validation fail rate 1)`);
      expect(sandbox.deliveries).toEqual([]);
      expect(receiver.received).toEqual([]);
      const fetched = await call(sandbox, 'GET', `/api/v1/orders/${order!.id}`, {
        token: sandbox.tokens.partner,
      });
      expect(fetched.body).toMatchObject({ status: 'pending', validated: false, validatedAt: null });
    } finally {
      await sandbox.close();
    }
  });

  it('picks the orders by their externalId, the same ones each run, as isNeverValidated predicts', async () => {
    const externalIds = Array.from({ length: 12 }, (_, i) => `FR-${i + 1}`);
    const predicted = externalIds.filter((id) => isNeverValidated(id, 0.5));
    // Both kinds are among them, or the test would prove nothing.
    expect(predicted.length).toBeGreaterThan(0);
    expect(predicted.length).toBeLessThan(externalIds.length);
    for (let run = 0; run < 2; run++) {
      const sandbox = await sandboxFailing(0.5);
      try {
        const created = await createOrders(sandbox, externalIds);
        await settled(sandbox);
        const notValidated = sandbox
          .orders()
          .filter((order) => order.status !== 'validated')
          .map((order) => order.externalId);
        expect(notValidated).toEqual(predicted);
        const notified = sandbox.deliveries.map((delivery) => delivery.code).sort();
        const expectedCodes = created
          .filter((order) => !predicted.includes(order.externalId))
          .map((order) => order.code)
          .sort();
        expect(notified).toEqual(expectedCodes);
      } finally {
        await sandbox.close();
      }
      receiver.received.length = 0;
    }
  });

  it('refuses a rate outside 0..1', async () => {
    await expect(startSandbox({ port: 0, quiet: true, validationFailRate: 1.5 })).rejects.toThrow(
      /validationFailRate must be between 0 and 1/,
    );
  });
});

describe('isNeverValidated', () => {
  it('is the first 4 bytes of the SHA-256 of the key, as a fraction of 2^32, below the rate', () => {
    const fraction = (key: string) =>
      createHash('sha256').update(key, 'utf8').digest().readUInt32BE(0) / 2 ** 32;
    for (const key of ['EXT-1', 'EXT-2', 'WEB-2001', 'é']) {
      expect(isNeverValidated(key, 0)).toBe(false);
      expect(isNeverValidated(key, 1)).toBe(true);
      const at = fraction(key);
      expect(isNeverValidated(key, at)).toBe(false);
      expect(isNeverValidated(key, Math.min(1, at + 1e-9))).toBe(true);
    }
  });

  it('picks about the given share of many keys', () => {
    const keys = Array.from({ length: 2000 }, (_, i) => `ORDER-${i}`);
    const picked = keys.filter((key) => isNeverValidated(key, 0.25)).length;
    expect(picked).toBeGreaterThan(400);
    expect(picked).toBeLessThan(600);
  });
});
