import { createServer } from 'node:net';

/**
 * A port nobody listens on right now on 127.0.0.1, for a server started a moment later (the demo's
 * receiver, cloudflared's metrics server). Another process may take it in between: the server
 * that binds it reports that as usual.
 */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
