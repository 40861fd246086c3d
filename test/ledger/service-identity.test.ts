/**
 * The one rule for "this base URL is that service" (src/ledger/service-identity.ts), which both
 * stores use: another name of a service a ledger holds (same scheme, port and path, a common
 * address) is that service.
 */
import { describe, expect, it } from 'vitest';
import { findSameService } from '../../src/ledger/service-identity.js';

describe('findSameService', () => {
  it('finds localhost after 127.0.0.1 (and back), on the same scheme, port and path only', async () => {
    expect(await findSameService('http://localhost:4780', ['http://127.0.0.1:4780'])).toBe(
      'http://127.0.0.1:4780',
    );
    expect(await findSameService('http://127.0.0.1:4780', ['http://localhost:4780'])).toBe(
      'http://localhost:4780',
    );
    expect(await findSameService('http://localhost:4781', ['http://127.0.0.1:4780'])).toBeUndefined();
    expect(await findSameService('https://localhost:4780', ['http://127.0.0.1:4780'])).toBeUndefined();
    expect(await findSameService('http://localhost:4780/v2', ['http://127.0.0.1:4780'])).toBeUndefined();
    // A default port is the same port written out.
    expect(await findSameService('http://localhost', ['http://127.0.0.1:80'])).toBe('http://127.0.0.1:80');
  });

  it('answers undefined when the ledger holds the base URL itself, or no other name of it', async () => {
    expect(
      await findSameService('http://127.0.0.1:4780', ['http://127.0.0.1:4780', 'http://localhost:4780']),
    ).toBeUndefined();
    expect(await findSameService('http://127.0.0.1:4780', [])).toBeUndefined();
    expect(await findSameService('http://10.0.0.7:4780', ['http://10.0.0.8:4780'])).toBeUndefined();
    // A name that resolves to nothing shares no address; the same host is the same service anyway.
    expect(await findSameService('https://orders.invalid', ['https://other.invalid'])).toBeUndefined();
    expect(await findSameService('https://ORDERS.invalid', ['https://orders.invalid'])).toBe(
      'https://orders.invalid',
    );
  });

  it('picks the same one in every process when several name the service (sorted order)', async () => {
    const known = ['http://localhost:4780', 'http://127.0.0.1:4780'];
    expect(await findSameService('http://127.0.0.2:4780', known)).toBeUndefined();
    // Another spelling of 127.0.0.1: both known names share its address; the first in sorted order wins.
    expect(await findSameService('http://0x7f.0.0.1:4780', known)).toBe('http://127.0.0.1:4780');
    expect(await findSameService('http://0x7f.0.0.1:4780', [...known].reverse())).toBe(
      'http://127.0.0.1:4780',
    );
  });
});
