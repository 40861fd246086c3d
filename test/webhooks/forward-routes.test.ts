/** `listen --forward-to`'s routes: how the values read, which are refused, where each event goes. */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { describeRoute, parseForwardRoutes, routeFor } from '../../src/webhooks/forward-routes.js';

const A = 'http://127.0.0.1:3000/a';
const B = 'http://127.0.0.1:3000/b';

function refused(values: string[], accepted?: string[]): string {
  try {
    parseForwardRoutes(values, accepted);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`not refused: ${values.join(' ')}`);
}

describe('parseForwardRoutes', () => {
  it('reads a plain URL as the default, and <event>[,<event>]=<url> as routes, one per address', () => {
    const routes = parseForwardRoutes([`x=${A}`, B, `y,z=${A}`]);
    expect(routes.map((r) => [r.target.href, r.events, r.others])).toEqual([
      [A, ['x', 'y', 'z'], false],
      [B, [], true],
    ]);
  });

  it('keeps a URL whose query holds = or , whole, and accepts the same route given twice', () => {
    const url = 'http://127.0.0.1:3000/hooks?a=1,2&b=3';
    expect(parseForwardRoutes([url]).map((r) => r.target.href)).toEqual([url]);
    expect(parseForwardRoutes([`x=${url}`, `x=${url}`, url]).map((r) => [r.events, r.others])).toEqual([
      [['x'], true],
    ]);
  });

  it('refuses a second default, an event given two addresses, and a route --events never lets through', () => {
    expect(refused([A, B])).toContain('--forward-to without an event name is given twice');
    expect(refused([`x=${A}`, `w,x=${B}`])).toBe(
      `--forward-to sends x to two addresses (${A} and ${B}): an event is forwarded to one.`,
    );
    expect(refused([`x=${A}`], ['y'])).toContain('--forward-to names x, which --events leaves out');
    expect(refused(['x=ftp://127.0.0.1/'])).toContain('must be an http:// or https:// URL');
    expect(refused(['x='])).toContain('--forward-to must be a URL such as');
  });
});

describe('routeFor and describeRoute', () => {
  it('sends a named event to its route, any other (and one without a name) to the default or nowhere', () => {
    const routes = parseForwardRoutes([`x=${A}`, B]);
    expect(routeFor(routes, 'x')?.target.href).toBe(A);
    expect(routeFor(routes, 'other')?.target.href).toBe(B);
    expect(routeFor(routes, null)?.target.href).toBe(B);
    const named = parseForwardRoutes([`x=${A}`]);
    expect(routeFor(named, 'other')).toBeUndefined();
  });

  it('says what each address receives', () => {
    const one = parseForwardRoutes([A]);
    expect(describeRoute(one[0]!, one)).toBe('every event');
    const two = parseForwardRoutes([`x,y=${A}`, B]);
    expect(two.map((r) => describeRoute(r, two))).toEqual(['x, y', 'every other event']);
    const both = parseForwardRoutes([`x=${A}`, A, `y=${B}`]);
    expect(both.map((r) => describeRoute(r, both))).toEqual(['x and every other event', 'y']);
  });
});
