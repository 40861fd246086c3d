// What bench/listen.mjs and bench/listen-instructions.mjs send: the key and the request (a
// realistic sales_order_validated, as `webhooks trigger` sends it: about 700 bytes); and the bare
// node:http server that only answers 200, which bench/listen-instructions.mjs counts as a
// yardstick. Needs `npm run build`.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const KEY = 'whk_bench_5f0c7a9e2b41d8c3a6e09f17b2d4c8e1a3f5b7d9';

if (!existsSync(join(root, 'dist/cli/main.js'))) {
  console.error('Build first: npm run build');
  process.exit(2);
}

const { sampleSalesOrderValidated } = await import(join(root, 'dist/index.js'));
export const body = JSON.stringify(sampleSalesOrderValidated(new Date('2026-03-02T09:14:07.861Z')));
export const headers = {
  'content-type': 'application/json',
  'user-agent': 'ordercli-sandbox/0.1.0',
  'x-webhook-event': 'sales_order_validated',
  'x-webhook-key': KEY,
};

/** The bare server (a node -e script): reads the body, answers 200, prints a ready line. */
export const BARE_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': 18 }); res.end('{"received":true}\\n'); });
});
server.listen(0, '127.0.0.1', () => process.stderr.write('Ready: listening on http://127.0.0.1:' + server.address().port + '/\\n'));
process.on('SIGINT', () => server.close(() => process.exit(0)));
`;
