// A webhook receiver that verifies every delivery with the standardwebhooks
// package, the Standard Webhooks reference library for JavaScript, so the
// service's signatures are checked by code the service did not write.
//
//   POST /hook          a delivery: 204 when it verifies, 401 when it does not
//   POST /_secret       {"secret": "..."}: the secret to verify with from now on
//   GET  /_log          what every delivery carried and whether it verified
//
// It prints "listening <port>" once it accepts connections on 127.0.0.1.
'use strict';
const http = require('http');
const { Webhook } = require('standardwebhooks');

let secret = '';
const log = [];

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const server = http.createServer(async (req, res) => {
  const body = await readBody(req);
  if (req.method === 'POST' && req.url === '/_secret') {
    secret = JSON.parse(body.toString('utf8')).secret;
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'GET' && req.url === '/_log') {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(log));
    return;
  }
  const entry = {
    webhookId: req.headers['webhook-id'] || '',
    webhookTimestamp: req.headers['webhook-timestamp'] || '',
    webhookSignature: req.headers['webhook-signature'] || '',
    serviceSignature: req.headers['x-service-signature'] || '',
    body: body.toString('utf8'),
    verifiedWith: secret,
    ok: false,
    error: '',
  };
  try {
    // The raw format keys the HMAC with the secret string's bytes, as the
    // service does (for ASCII secrets; see docs/api.md for others).
    new Webhook(secret, { format: 'raw' }).verify(entry.body, req.headers);
    entry.ok = true;
  } catch (e) {
    entry.error = String(e && e.message);
  }
  log.push(entry);
  res.writeHead(entry.ok ? 204 : 401).end();
});

server.listen(0, '127.0.0.1', () => {
  console.log('listening ' + server.address().port);
});
