// The "public" side of a tunnel stand-in: an HTTP server on 127.0.0.1 that passes every request
// (method, path, headers, body) to the tunnel's target and its answer back, as a tunnel does.
import { createServer, request } from 'node:http';

export function startProxy(target) {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const forwarded = request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: to.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', () => {
        res.writeHead(502);
        res.end('tunnel stand-in: the origin is unreachable');
      });
      forwarded.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
