// A stand-in for `cloudflared tunnel --url <origin> --metrics <host:port>` (a quick tunnel), as
// cloudflared 2024.x and later behave: logs on stderr, the metrics server answers
// GET /quicktunnel with {"hostname": "<name>"} once the tunnel is up, SIGTERM ends it. Its
// "public" side is a loopback proxy (see proxy.mjs), so the hostname is 127.0.0.1:<port>.
// STANDIN_MODE: "log-only" gives the address only in a log line (no /quicktunnel), "exit" exits 1
// after its first log lines, "silent" never gives an address. STANDIN_PIDFILE: where it writes its
// process id; STANDIN_ENVFILE: where it writes its environment (JSON).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { startProxy } from './proxy.mjs';

// A test that ends the tunnel itself reads its process id here.
if (process.env.STANDIN_PIDFILE) writeFileSync(process.env.STANDIN_PIDFILE, String(process.pid));
// A test of what the tunnel inherits reads its environment here (JSON).
if (process.env.STANDIN_ENVFILE) writeFileSync(process.env.STANDIN_ENVFILE, JSON.stringify(process.env));

const args = process.argv.slice(2);
const option = (name) => args[args.indexOf(name) + 1];
if (args[0] !== 'tunnel' || !option('--url') || !option('--metrics')) {
  process.stderr.write('stand-in cloudflared: expected tunnel --url <url> --metrics <addr>\n');
  process.exit(2);
}
const mode = process.env.STANDIN_MODE ?? '';
const log = (text) => process.stderr.write(`2026-11-26T10:00:00Z INF ${text}\n`);
log('Thank you for trying Cloudflare Tunnel.');
log('Requesting new quick Tunnel on trycloudflare.com...');
if (mode === 'exit') {
  process.stderr.write('2026-11-26T10:00:00Z ERR failed to request quick Tunnel: 429 Too Many Requests\n');
  process.exit(1);
}
const proxy = await startProxy(option('--url'));
const hostname = `127.0.0.1:${proxy.address().port}`;
const [metricsHost, metricsPort] = option('--metrics').split(':');
const metrics = createServer((req, res) => {
  if (req.url === '/quicktunnel' && mode === '') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ hostname }));
  } else {
    res.writeHead(404);
    res.end();
  }
});
metrics.listen(Number(metricsPort), metricsHost, () => {
  log(`Starting metrics server on ${metricsHost}:${metricsPort}/metrics`);
  if (mode === 'log-only') {
    log('+--------------------------------------------------------------------------------------------+');
    log('|  Your quick Tunnel has been created! Visit it at (it may take some time to be reachable):  |');
    log('|  https://able-stand-in-tunnel.trycloudflare.com                                            |');
    log('+--------------------------------------------------------------------------------------------+');
  }
  log(`Registered tunnel connection connIndex=0 location=cdg01 protocol=quic`);
});
process.on('SIGTERM', () => {
  log('Initiating graceful shutdown due to signal terminated ...');
  process.exit(0);
});
