import { describe, expect, it } from 'vitest';
import { statusLine, statusText } from '../../src/core/http-status.js';

describe('statusLine', () => {
  it("gives Node's text for a status, only the number for an unknown one", () => {
    expect(statusLine(404)).toBe('404 Not Found');
    expect(statusLine(429)).toBe('429 Too Many Requests');
    expect(statusLine(599)).toBe('599');
    expect(statusText(503)).toBe('Service Unavailable');
    expect(statusText(599)).toBeUndefined();
  });
});
