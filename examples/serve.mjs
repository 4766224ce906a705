// A static file server for the example page: serves examples/ and the SDK
// source from this repository, on its own origin (port), as an app would.
//   node examples/serve.mjs [port]      (default 8081; 0 picks a free one)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { resolve, dirname, extname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const allowed = [resolve(root, 'examples') + sep, resolve(root, 'sdk/js/src') + sep];
const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css' };

/** serveExamples starts the server and answers its base URL. */
export function serveExamples(port = 8081, host = '127.0.0.1') {
  const server = createServer(async (req, res) => {
    let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/' || path === '/examples') path = '/examples/index.html';
    if (path.endsWith('/')) path += 'index.html';
    const file = resolve(root, '.' + path);
    if (!allowed.some((a) => file.startsWith(a))) {
      res.writeHead(404).end('not found');
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': types[extname(file)] || 'application/octet-stream', 'Cache-Control': 'no-store' }).end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  return new Promise((ok) => server.listen(port, host, () => {
    const { port: p } = server.address();
    ok({ url: `http://${host}:${p}`, close: () => new Promise((r) => server.close(r)) });
  }));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { url } = await serveExamples(Number(process.argv[2] ?? process.env.PORT ?? 8081));
  console.log(`example page: ${url}/examples/index.html?baseUrl=http://localhost:8080/v1&key=<clientKey>&appId=<appId>&campaignId=<campaignId>`);
}
