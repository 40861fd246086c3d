/** The webhook key a command uses: --key, else ORDERCLI_WEBHOOK_KEY, else the profile's; and where it came from. */
import { describe, expect, it } from 'vitest';
import { chooseWebhookKey } from '../../src/core/webhook-key.js';

describe('chooseWebhookKey', () => {
  it('takes the flag, then the environment, then the profile, and names the source', () => {
    const all = { flag: 'k-flag', env: 'k-env', profile: 'k-profile', profileName: 'staging' };
    expect(chooseWebhookKey(all)).toEqual({ key: 'k-flag', source: '--key' });
    expect(chooseWebhookKey({ ...all, flag: undefined })).toEqual({
      key: 'k-env',
      source: 'ORDERCLI_WEBHOOK_KEY',
    });
    expect(chooseWebhookKey({ ...all, flag: undefined, env: undefined })).toEqual({
      key: 'k-profile',
      source: 'profile "staging"',
    });
    expect(chooseWebhookKey({})).toBeUndefined();
  });

  it('skips an empty value as if it were not given', () => {
    expect(chooseWebhookKey({ flag: '', env: '', profile: 'k-profile' })).toEqual({
      key: 'k-profile',
      source: 'profile "default"',
    });
  });

  it('trims surrounding white space and keeps the value as given; white space alone is no key', () => {
    expect(chooseWebhookKey({ env: ' k-env\u00a0' })).toEqual({
      key: 'k-env',
      source: 'ORDERCLI_WEBHOOK_KEY',
      untrimmed: ' k-env\u00a0',
    });
    // Given, but unusable: it does not fall through to a key the user did not choose.
    expect(chooseWebhookKey({ flag: '  ', env: 'k-env' })).toBeUndefined();
  });
});
