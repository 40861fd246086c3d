import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { JOURNAL_FILE } from '../../src/sandbox/journal.js';
import { GENERATED_REFERENCE_FIRST_ID, loadSeed } from '../../src/sandbox/seed.js';
import { type Sandbox, startSandbox } from '../../src/sandbox/server.js';
import { type Receiver, startReceiver } from '../support/receiver.js';
import { call, partnerOrder, useSandbox } from '../support/sandbox.js';
import { waitFor } from '../support/wait.js';

describe('reset()', () => {
  // An hour to validation: the order created before the reset is still pending when it comes.
  const sandbox = useSandbox({ validationDelayMs: 3_600_000 }, { resetEach: false });
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('goes back to the seed: orders, references, subscriptions, logs, faults and pending work', async () => {
    const token = sandbox.tokens.partner;
    const requests = sandbox.requests;
    await call(sandbox, 'PUT', '/api/v1/webhooks', {
      token,
      body: { event: 'sales_order_validated', url: receiver.url },
    });
    await call(sandbox, 'POST', '/api/v1/contact_references', {
      token,
      body: {
        contact: { externalReference: 'R', firstName: 'Ana', lastName: 'Ré', email: 'ana@re.fr' },
        customer: { name: 'Ré' },
      },
    });
    await call(sandbox, 'POST', '/api/v1/orders', { token, body: partnerOrder('RS-1') });
    expect(sandbox.pending()).toEqual({ validations: 1, deliveries: 0 });
    sandbox.scriptFaults([{ kind: 'status', status: 503, times: 5 }]);
    // An hour of latency: a request after the reset is answered only if the reset dropped it.
    sandbox.setFaults({ latencyMs: 3_600_000 });

    sandbox.reset();

    // The order created before the reset is never validated nor notified: nothing is left to run.
    expect(sandbox.pending()).toEqual({ validations: 0, deliveries: 0 });
    expect(sandbox.requests).toBe(requests);
    expect(sandbox.requests).toHaveLength(0);
    expect(sandbox.orders()).toHaveLength(0);
    const references = await call(sandbox, 'GET', '/api/v1/contact_references', { token });
    expect(references.status).toBe(200);
    expect((references.body as unknown[]).length).toBe(8);
    expect((await call(sandbox, 'GET', '/api/v1/webhooks', { token })).body).toEqual([]);
    const again = await call(sandbox, 'POST', '/api/v1/orders', { token, body: partnerOrder('RS-2') });
    expect((again.body as { code: string }).code).toMatch(/-000001$/);
    expect(sandbox.pending()).toEqual({ validations: 1, deliveries: 0 });
    expect(receiver.received).toHaveLength(0);
    expect(sandbox.deliveries).toHaveLength(0);
  });
});

describe('persistence with dataDir', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'ordercli-sandbox-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('keeps orders, contact references and subscriptions across restarts, never the key', async () => {
    const first = await startSandbox({
      port: 0,
      quiet: true,
      validationDelayMs: 20,
      dataDir,
      webhookKey: 'whk_secret_one',
    });
    const token = first.tokens.partner;
    await call(first, 'POST', '/api/v1/orders', { token, body: partnerOrder('P-1') });
    await call(first, 'POST', '/api/v1/contact_references', {
      token,
      body: {
        contact: { externalReference: 'P', firstName: 'Léa', lastName: 'Petit', email: 'lea@petit.fr' },
        customer: { name: 'Petit' },
      },
    });
    await call(first, 'PUT', '/api/v1/webhooks', {
      token,
      body: { event: 'sales_order_validated', url: 'http://127.0.0.1:9/h' },
    });
    await waitFor(() => first.orders()[0]?.status === 'validated', 10_000, 'the validation');
    await first.close();
    expect(await readFile(join(dataDir, JOURNAL_FILE), 'utf8')).not.toContain('whk_secret_one');

    const second = await startSandbox({
      port: 0,
      quiet: true,
      validationDelayMs: 20,
      dataDir,
      webhookKey: 'whk_secret_two',
    });
    try {
      expect(second.orders()).toEqual([expect.objectContaining({ externalId: 'P-1', status: 'validated' })]);
      expect((await call(second, 'GET', '/api/v1/contact_references/309', { token })).status).toBe(200);
      expect((await call(second, 'GET', '/api/v1/webhooks', { token })).body).toEqual([
        { id: 1, event: 'sales_order_validated', url: 'http://127.0.0.1:9/h', key: 'whk_secret_two' },
      ]);
      const next = await call(second, 'POST', '/api/v1/orders', { token, body: partnerOrder('P-2') });
      expect((next.body as { code: string }).code).toMatch(/-000002$/);
      const reference = await call(second, 'POST', '/api/v1/contact_references', {
        token,
        body: {
          contact: { externalReference: 'Q', firstName: 'Zoé', lastName: 'Q', email: 'zoe@q.fr' },
          customer: { name: 'Q' },
        },
      });
      expect((reference.body as { id: number }).id).toBe(310);

      second.reset();
      expect(await readFile(join(dataDir, JOURNAL_FILE), 'utf8')).toBe('');
    } finally {
      await second.close();
    }
    const third = await startSandbox({ port: 0, quiet: true, dataDir });
    try {
      expect(third.orders()).toHaveLength(0);
    } finally {
      await third.close();
    }
  });

  it('validates and notifies orders left pending by the previous run', async () => {
    const dir = join(dataDir, 'pending');
    const first = await startSandbox({ port: 0, quiet: true, dataDir: dir, validationDelayMs: 60_000 });
    const receiver = await startReceiver();
    try {
      const token = first.tokens.partner;
      await call(first, 'PUT', '/api/v1/webhooks', {
        token,
        body: { event: 'sales_order_validated', url: receiver.url },
      });
      await call(first, 'POST', '/api/v1/orders', { token, body: partnerOrder('PD-1') });
      await first.close();
      expect(first.orders()[0]!.status).toBe('pending');

      const second = await startSandbox({ port: 0, quiet: true, dataDir: dir, validationDelayMs: 20 });
      try {
        const [notification] = await receiver.waitFor(1);
        expect(notification!.body).toMatchObject({ externalId: 'PD-1', status: 'validated' });
        expect(second.orders()[0]!.status).toBe('validated');
      } finally {
        await second.close();
      }
    } finally {
      await receiver.close();
    }
  });
});

describe('close()', () => {
  it('closes idle keep-alive connections and frees the port', async () => {
    const sandbox = await startSandbox({ port: 0, quiet: true });
    const socket = connect(sandbox.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `GET /api/v1/shipping_modes HTTP/1.1\r\nHost: x\r\nX-API-Key: ${sandbox.tokens.full}\r\n\r\n`,
    );
    await new Promise((resolve) => socket.once('data', resolve));
    const socketClosed = new Promise((resolve) => socket.once('close', resolve));

    await sandbox.close();
    await socketClosed;
    await expect(call(sandbox, 'GET', '/api/v1/shipping_modes')).rejects.toThrow(/ECONNREFUSED|connect/);
  });

  it('ends requests in progress, pending validations and delivery retries', async () => {
    // An hour to validation: the order is still pending when close() comes.
    const sandbox = await startSandbox({ port: 0, quiet: true, validationDelayMs: 3_600_000 });
    // An order validated at once whose notification fails: its retry waits (30 s or more).
    const retrying = await startSandbox({
      port: 0,
      quiet: true,
      validationDelayMs: 1,
      deliveryBackoffMs: 3_600_000,
    });
    const receiver = await startReceiver();
    try {
      const token = sandbox.tokens.partner;
      await call(sandbox, 'PUT', '/api/v1/webhooks', {
        token,
        body: { event: 'sales_order_validated', url: receiver.url },
      });
      await call(sandbox, 'POST', '/api/v1/orders', { token, body: partnerOrder('C-1') });
      // An hour of latency: close() returns only if it ends the request instead of waiting for it.
      sandbox.setFaults({ latencyMs: 3_600_000 });
      const slow = call(sandbox, 'GET', '/api/v1/shipping_modes', { token });
      await waitFor(() => sandbox.requests.length === 3, 10_000, 'the third request');
      expect(sandbox.pending()).toEqual({ validations: 1, deliveries: 0 });
      await sandbox.close();
      await expect(slow).rejects.toThrow();
      expect(sandbox.pending()).toEqual({ validations: 0, deliveries: 0 });

      receiver.failNext(500);
      await call(retrying, 'PUT', '/api/v1/webhooks', {
        token,
        body: { event: 'sales_order_validated', url: receiver.url },
      });
      await call(retrying, 'POST', '/api/v1/orders', { token, body: partnerOrder('C-2') });
      await waitFor(
        () => retrying.deliveries.length === 1 && retrying.pending().deliveries === 1,
        10_000,
        'the first attempt, refused, and its retry waiting',
      );
      expect(retrying.pending()).toEqual({ validations: 0, deliveries: 1 });
      await retrying.close();
      expect(retrying.pending()).toEqual({ validations: 0, deliveries: 0 });
      // Only the refused attempt reached the receiver: nothing of either sandbox is left to run.
      expect(receiver.received.map((notification) => notification.body)).toMatchObject([
        { externalId: 'C-2' },
      ]);
      await sandbox.close(); // idempotent
    } finally {
      await retrying.close();
      await receiver.close();
    }
  });

  it('rejects when the port is taken, and can be retried', async () => {
    const sandbox = await startSandbox({ port: 0, quiet: true });
    try {
      await expect(startSandbox({ port: sandbox.port, quiet: true })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await sandbox.close();
    }
  });
});

describe('extraPackagingReferences', () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  it('serves 50,000 extra references', async () => {
    const seed = loadSeed({ extraPackagingReferences: 50_000 });
    expect(seed.packagingReferences.length).toBe(46 + 50_000);

    sandbox = await startSandbox({ port: 0, quiet: true, extraPackagingReferences: 50_000 });
    const token = sandbox.tokens.partner;
    const list = await call(sandbox, 'GET', '/api/v1/packaging_references', { token });
    expect((list.body as unknown[]).length).toBe(50_046);
    const lastId = GENERATED_REFERENCE_FIRST_ID + 49_999;
    expect((await call(sandbox, 'GET', `/api/v1/packaging_references/${lastId}`, { token })).status).toBe(
      200,
    );
    const active = seed.packagingReferences.find((r) => r.id > GENERATED_REFERENCE_FIRST_ID && r.active)!;
    const order = { ...partnerOrder('G-1'), items: [{ internalReferenceId: active.id, orderedQuantity: 1 }] };
    expect((await call(sandbox, 'POST', '/api/v1/orders', { token, body: order })).status).toBe(201);
  });
});
