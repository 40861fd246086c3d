/** A free loopback port below the ephemeral range, which a server can then bind. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../src/io/free-port.js';

describe('freeLoopbackPort', () => {
  it('gives ports below the range the system hands out for listen(0) and outgoing connections', async () => {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
    for (let n = 0; n < 20; n++) {
      const port = await freeLoopbackPort();
      expect(port).toBeGreaterThanOrEqual(10_000);
      expect(port).toBeLessThan(start);
    }
  });

  it('gives a port a server can bind a moment later', async () => {
    const port = await freeLoopbackPort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise((resolve) => server.close(resolve));
  });
});
