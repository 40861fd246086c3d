import { describe, expect, it } from 'vitest';
import { chooseWebhookKey } from '../../src/core/webhook-key.js';

const profile = { profileName: 'work', profile: { 'webhook-key': 'whk_profile' } };
const env = { ORDERCLI_WEBHOOK_KEY: 'whk_env' };

describe('chooseWebhookKey', () => {
  it('takes the flag, else the environment, else the profile, and says which', () => {
    expect(chooseWebhookKey('whk_flag', env, profile)).toEqual({
      key: 'whk_flag',
      source: '--key',
      trimmed: false,
    });
    expect(chooseWebhookKey(undefined, env, profile)).toMatchObject({
      key: 'whk_env',
      source: 'ORDERCLI_WEBHOOK_KEY',
    });
    expect(chooseWebhookKey('', {}, profile)).toMatchObject({
      key: 'whk_profile',
      source: 'profile "work"',
      profile: 'work',
    });
    expect(chooseWebhookKey(undefined, env, profile).profile).toBeUndefined();
    expect(
      chooseWebhookKey(undefined, { ORDERCLI_WEBHOOK_KEY: '' }, { profileName: 'default', profile: {} }),
    ).toEqual({ key: undefined, source: 'none', trimmed: false });
  });

  it('drops white space around the key, and treats a blank one as none', () => {
    expect(chooseWebhookKey(' whk_flag\n', {}, profile)).toEqual({
      key: 'whk_flag',
      source: '--key',
      trimmed: true,
    });
    expect(chooseWebhookKey('  ', env, profile)).toEqual({ key: undefined, source: 'none', trimmed: false });
  });
});
