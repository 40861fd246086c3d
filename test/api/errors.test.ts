// The API client's typed errors: one class and sentence per status, its exit code, and the
// service's details read from a body of any shape.
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthError,
  apiErrorFor,
  describeServiceDetails,
  NotFoundError,
  RateLimitError,
  RedirectError,
  ServerError,
  ValidationApiError,
} from '../../src/api/errors.js';
import { ExitCode } from '../../src/core/exit-codes.js';

const request = { method: 'POST', path: '/api/v1/orders' };

function errorFor(status: number, extra: { attempts?: number; location?: string; baseUrl?: string } = {}) {
  return apiErrorFor({ status, body: { message: 'no' }, request, requestId: 'req-1', ...extra });
}

describe('apiErrorFor', () => {
  it('gives each status its class, its sentence and its exit code', () => {
    const cases: [number, typeof ApiError, string, number][] = [
      [
        401,
        AuthError,
        'The service refused the credentials for POST /api/v1/orders (401 Unauthorized): check --token, ORDERCLI_TOKEN or your profile (ordercli login).',
        ExitCode.Auth,
      ],
      [
        403,
        AuthError,
        'The service refused POST /api/v1/orders (403 Forbidden): the token does not have the rights this request needs.',
        ExitCode.Auth,
      ],
      [404, NotFoundError, 'Not found: POST /api/v1/orders (404 Not Found).', ExitCode.Failure],
      [
        400,
        ValidationApiError,
        'The service rejected POST /api/v1/orders as invalid (400 Bad Request).',
        ExitCode.Failure,
      ],
      [
        422,
        ValidationApiError,
        'The service rejected POST /api/v1/orders as invalid (422 Unprocessable Entity).',
        ExitCode.Failure,
      ],
      [409, ApiError, 'The service refused POST /api/v1/orders (409 Conflict).', ExitCode.Failure],
      [599, ServerError, 'The service failed POST /api/v1/orders (599).', ExitCode.Failure],
    ];
    for (const [status, type, message, exitCode] of cases) {
      const error = errorFor(status);
      expect(error.constructor).toBe(type);
      expect([error.message, error.exitCode, error.status, error.requestId]).toEqual([
        message,
        exitCode,
        status,
        'req-1',
      ]);
      expect(error.details).toEqual(['The service said:', '  no']);
    }
  });

  it('says how many attempts a rate limit or a server error took', () => {
    expect(errorFor(429, { attempts: 3 })).toBeInstanceOf(RateLimitError);
    expect(errorFor(429, { attempts: 3 }).message).toBe(
      'The service is limiting the request rate and still refused POST /api/v1/orders after 3 attempts (429 Too Many Requests); try again later or lower --concurrency.',
    );
    expect(errorFor(503, { attempts: 4 }).message).toBe(
      'The service failed POST /api/v1/orders after 4 attempts (503 Service Unavailable).',
    );
    expect(errorFor(503, { attempts: 4 }).attempts).toBe(4);
    expect(errorFor(500).message).toBe('The service failed POST /api/v1/orders (500 Internal Server Error).');
  });

  it('refuses a redirect, pointing at --base-url and where the service points', () => {
    const error = errorFor(301, {
      location: 'https://orders.example.com/api/v1/orders',
      baseUrl: 'http://orders.example.com',
    });
    expect(error).toBeInstanceOf(RedirectError);
    expect(error.message).toBe(
      'The service answered POST /api/v1/orders with 301 Moved Permanently instead of a result; ordercli does not follow redirects.',
    );
    expect(error.hint).toBe(
      "check --base-url (http://orders.example.com): the service points to https://orders.example.com/api/v1/orders; it must be the service's root, with its scheme.",
    );
    expect(errorFor(302).hint).toBe("check --base-url; it must be the service's root, with its scheme.");
  });
});

describe('describeServiceDetails', () => {
  it('says when the body is empty, and quotes a text body line by line', () => {
    for (const empty of [undefined, null, '']) {
      expect(describeServiceDetails(empty)).toEqual(['The service sent no details (empty body).']);
    }
    expect(describeServiceDetails('Bad gateway\r\nupstream down\n')).toEqual([
      'The service said:',
      '  Bad gateway',
      '  upstream down',
    ]);
    expect(describeServiceDetails(`${'x'.repeat(400)}`)[1]).toBe(`  ${'x'.repeat(300)}…`);
    expect(describeServiceDetails(42)).toEqual(['The service said: 42']);
  });

  it('reads problem+json, and field errors as a list or as a map', () => {
    expect(
      describeServiceDetails({
        title: 'Validation failed',
        detail: 'see the errors',
        errors: [
          { field: 'items[0].orderedQuantity', message: 'must be above zero' },
          { propertyPath: 'contact', title: 'is required' },
          { reason: 'quota' },
          'plain text',
          { other: 1 },
        ],
      }),
    ).toEqual([
      'The service said:',
      '  Validation failed',
      '  see the errors',
      '  - items[0].orderedQuantity: must be above zero',
      '  - contact: is required',
      '  - quota',
      '  - plain text',
      '  - {"other":1}',
    ]);
    expect(
      describeServiceDetails({ violations: { email: ['is invalid', 'is taken'], name: 'blank' } }),
    ).toEqual(['The service said:', '  - email: is invalid; is taken', '  - name: blank']);
  });

  it('shows a body of another shape as its JSON, cut after 30 lines', () => {
    expect(describeServiceDetails({ code: 'E42' })).toEqual([
      'The service said:',
      '  {',
      '    "code": "E42"',
      '  }',
    ]);
    const large = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
    const lines = describeServiceDetails(large);
    expect(lines).toHaveLength(1 + 30 + 1);
    expect(lines.at(-1)).toBe('  …');
  });
});
