// A stand-in for `ngrok http <port> --log stdout --log-format json`, as the ngrok v3 agent behaves:
// JSON log lines on stdout (one "started tunnel" line with the URL), the agent API at its web
// address (GET /api/tunnels: {"tunnels": [{"public_url", "proto", "config": {"addr"}}]}), SIGTERM
// ends it. The web address is NGROK_STANDIN_WEB_ADDR (ngrok's own is web_addr in its config,
// 127.0.0.1:4040 by default). Its "public" side is a loopback proxy (proxy.mjs).
import { createServer } from 'node:http';
import { startProxy } from './proxy.mjs';

const args = process.argv.slice(2);
if (args[0] !== 'http' || !/^\d+$/.test(args[1] ?? '')) {
  process.stdout.write('{"lvl":"eror","msg":"stand-in ngrok: expected http <port>"}\n');
  process.exit(2);
}
const port = args[1];
const addr = `http://localhost:${port}`;
const proxy = await startProxy(`http://127.0.0.1:${port}`);
const url = `http://127.0.0.1:${proxy.address().port}`;
const [webHost, webPort] = (process.env.NGROK_STANDIN_WEB_ADDR ?? '127.0.0.1:4040').split(':');
const log = (fields) =>
  process.stdout.write(`${JSON.stringify({ t: '2026-11-26T10:00:00Z', lvl: 'info', ...fields })}\n`);
log({ msg: 'no configuration paths supplied' });
const api = createServer((req, res) => {
  if (req.url === '/api/tunnels') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        tunnels: [{ name: 'command_line', public_url: url, proto: 'https', config: { addr, inspect: true } }],
        uri: '/api/tunnels',
      }),
    );
  } else {
    res.writeHead(404);
    res.end();
  }
});
api.listen(Number(webPort), webHost, () => {
  log({ msg: 'starting web service', obj: 'web', addr: `${webHost}:${webPort}` });
  log({ msg: 'started tunnel', obj: 'tunnels', name: 'command_line', addr, url });
});
process.on('SIGTERM', () => process.exit(0));
