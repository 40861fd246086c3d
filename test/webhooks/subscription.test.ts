// The webhook key in a subscription answer, under whichever name the service gives it.
import { describe, expect, it } from 'vitest';
import { findWebhookKey } from '../../src/webhooks/subscription.js';

describe('findWebhookKey', () => {
  it('finds the key under the names a service may use, one level deep', () => {
    expect(findWebhookKey({ id: 1, secret: 's3' })).toEqual({ path: ['secret'], value: 's3' });
    expect(findWebhookKey({ subscription: { webhook_key: 'k' } })).toEqual({
      path: ['subscription', 'webhook_key'],
      value: 'k',
    });
    expect(findWebhookKey({ id: 1, keyId: 'no' })).toBeUndefined();
  });
});
