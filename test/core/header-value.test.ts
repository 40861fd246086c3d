// Values that cannot go into an HTTP request are found by position and code point, never shown.
import { describe, expect, it } from 'vitest';
import { checkSendable, unsendableCharacter } from '../../src/core/header-value.js';

describe('unsendableCharacter', () => {
  it('finds the first character of a credential that is not visible ASCII', () => {
    expect(unsendableCharacter('sandbox-full-token')).toBeUndefined();
    expect(unsendableCharacter('Bearer\tabc def')).toBeUndefined();
    expect(unsendableCharacter('abc\u200bdef')).toEqual({ position: 4, codePoint: 'U+200B' });
    expect(unsendableCharacter('clé')).toEqual({ position: 3, codePoint: 'U+00E9' });
    expect(unsendableCharacter('a\nb')).toEqual({ position: 2, codePoint: 'U+000A' });
    // Counted by character, not UTF-16 unit: an emoji before it counts once.
    expect(unsendableCharacter('🚚x\u00a0')).toEqual({ position: 1, codePoint: 'U+1F69A' });
  });

  it('in a URL, finds only invisible characters: a host may be written in any script', () => {
    expect(unsendableCharacter('https://commandes.café.fr/api', true)).toBeUndefined();
    expect(unsendableCharacter('http://127.0.0.1:4780\u200b', true)).toEqual({
      position: 22,
      codePoint: 'U+200B',
    });
    expect(unsendableCharacter('\ufeffhttps://x.example', true)).toEqual({
      position: 1,
      codePoint: 'U+FEFF',
    });
    expect(unsendableCharacter('https://x.example/a b', true)).toEqual({ position: 20, codePoint: 'U+0020' });
  });

  it('checkSendable throws exit 2 naming the setting and the position, not the value', () => {
    const secret = 'tok\u200ben-secret';
    let thrown: unknown;
    try {
      checkSendable(secret, 'the token from ORDERCLI_TOKEN');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ exitCode: 2 });
    const message = (thrown as Error).message;
    expect(message).toContain('The token from ORDERCLI_TOKEN holds a character');
    expect(message).toContain('character 4 is U+200B');
    expect(message).not.toContain('secret');
    expect(() => checkSendable(undefined, 'the token')).not.toThrow();
  });
});
