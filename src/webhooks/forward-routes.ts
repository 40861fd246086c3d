/**
 * `listen --forward-to`: where each accepted event is forwarded. The option is repeatable:
 *
 *   --forward-to http://127.0.0.1:3000/webhooks                         every event (the default)
 *   --forward-to sales_order_validated=http://127.0.0.1:3000/orders      that event only
 *   --forward-to a,b=http://127.0.0.1:4000/hooks                         those events
 *
 * An event named in a route goes there alone; any other goes to the default, and without one it
 * is not forwarded (still shown and logged). Each target has its own queue, so events keep their
 * order per target and an application that is down holds back only its own events.
 */
import { UsageError } from '../core/errors.js';
import { parseHttpUrl } from '../core/url.js';

/** One target and the events it receives. */
export interface ForwardRoute {
  target: URL;
  /** The events named for this target (empty for a default that no event names). */
  events: string[];
  /** Whether every event no route names comes here too (the plain `--forward-to <url>`). */
  others: boolean;
}

/** `a,b=` before the URL: names of events, as X-WEBHOOK-EVENT carries them (no `:` or `/`). */
const NAMED = /^([A-Za-z0-9_.-]+(?:,[A-Za-z0-9_.-]+)*)=(.*)$/s;
const EXAMPLE = 'http://127.0.0.1:3000/webhooks';

/**
 * Reads the `--forward-to` values (in the order given) into one route per target. Refused (exit
 * 2): a second default, an event given two targets, and with `accepted` (`--events`) an event
 * that would never arrive.
 */
export function parseForwardRoutes(values: readonly string[], accepted?: readonly string[]): ForwardRoute[] {
  const routes = new Map<string, ForwardRoute>();
  const targetOf = new Map<string, string>();
  let defaultTarget: string | undefined;
  for (const value of values) {
    const named = NAMED.exec(value);
    const events = named ? [...new Set(named[1]!.split(','))] : [];
    const target = parseHttpUrl(
      named ? named[2]! : value,
      '--forward-to',
      `${EXAMPLE} (or <event>=${EXAMPLE})`,
    );
    const route = routes.get(target.href) ?? { target, events: [], others: false };
    routes.set(target.href, route);
    if (!named) {
      if (defaultTarget !== undefined && defaultTarget !== target.href) {
        throw new UsageError(
          `--forward-to without an event name is given twice (${defaultTarget} and ${target.href}): keep one for every event and name the events of the other (--forward-to sales_order_validated=${target.href}).`,
        );
      }
      defaultTarget = target.href;
      route.others = true;
    }
    for (const event of events) {
      const earlier = targetOf.get(event);
      if (earlier !== undefined && earlier !== target.href) {
        throw new UsageError(
          `--forward-to sends ${event} to two addresses (${earlier} and ${target.href}): an event is forwarded to one.`,
        );
      }
      if (accepted !== undefined && !accepted.includes(event)) {
        throw new UsageError(
          `--forward-to names ${event}, which --events leaves out, so it would never be forwarded: add it to --events or leave it out of --forward-to.`,
        );
      }
      if (earlier === undefined) route.events.push(event);
      targetOf.set(event, target.href);
    }
  }
  return [...routes.values()];
}

/** The route an event is forwarded on: the one naming it, else the default; undefined: not forwarded. */
export function routeFor<R extends ForwardRoute>(routes: readonly R[], event: string | null): R | undefined {
  if (event !== null) {
    const named = routes.find((route) => route.events.includes(event));
    if (named) return named;
  }
  return routes.find((route) => route.others);
}

/** What a route receives, for the console and the inspector: `every event`, `sales_order_validated`, `every other event`. */
export function describeRoute(route: ForwardRoute, routes: readonly ForwardRoute[]): string {
  const named = route.events.join(', ');
  const anyNamed = routes.some((r) => r.events.length > 0 && r !== route);
  if (!route.others) return named;
  if (!anyNamed) return 'every event';
  return named === '' ? 'every other event' : `${named} and every other event`;
}
