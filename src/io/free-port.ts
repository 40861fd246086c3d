import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Below the ephemeral range: ports the system never hands out by itself. */
const LOWEST = 10_000;
/** The start of the ephemeral range where /proc does not say (Linux's default). */
const DEFAULT_EPHEMERAL_START = 32_768;
const TRIES = 20;

/**
 * A port nobody listens on right now on 127.0.0.1, for a server started a moment later
 * (cloudflared's metrics server, a test's receiver whose address must be known first). It is
 * picked at random below the ephemeral range, where the system puts neither a `listen(0)` nor the
 * local end of an outgoing connection: a port found free with `listen(0)` was, once in ten loaded
 * test runs, taken by one of those before the real server bound it. Only another program binding
 * that very port can still take it; the server reports that as usual. Falls back to `listen(0)`
 * when no port of that range is free.
 */
export async function freeLoopbackPort(): Promise<number> {
  const highest = ephemeralStart() - 1;
  for (let attempt = 0; attempt < TRIES && highest > LOWEST; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (highest - LOWEST + 1));
    if ((await bindOnce(port)) !== undefined) return port;
  }
  return (await bindOnce(0)) ?? Promise.reject(new Error('no free port on 127.0.0.1'));
}

/** Binds `port` on 127.0.0.1 and lets it go: the port bound, or undefined when it was taken. */
function bindOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/** The first port of the system's ephemeral range (Linux's /proc), else the usual default. */
function ephemeralStart(): number {
  try {
    const start = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(start) && start > 1024 ? start : DEFAULT_EPHEMERAL_START;
  } catch {
    return DEFAULT_EPHEMERAL_START;
  }
}
