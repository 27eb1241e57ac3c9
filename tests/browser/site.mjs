// The page that needs no server (build/site/, `cmake --build --preset default --target site`): the
// same page with the engine compiled to WebAssembly. Served here by a plain static file server on
// its own port (as any host would serve it), it must answer every case as the served page and the
// CLI do, render the same results, and ask nothing of any other host. Registered by run.mjs, which
// supplies the browser, the server and the checks.
import {createServer} from 'node:http';
import {existsSync, readFileSync} from 'node:fs';
import {extname, join, normalize} from 'node:path';

const TYPES = {'.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.wasm': 'application/wasm'};

// Where the static server puts the site: in a folder, as a host that serves several sites would.
const PREFIX = '/ftplan/';

// A static file server for `dir` under PREFIX on a free loopback port: files only, no headers of
// its own (no Content-Security-Policy: the page's own meta tag is the policy). Resolves with the
// site's address (its origin and folder).
export function startSiteServer(dir) {
  const server = createServer((request, reply) => {
    const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname));
    const file = join(dir, path === PREFIX ? 'index.html' : path.slice(PREFIX.length));
    if (!path.startsWith(PREFIX) || !file.startsWith(dir) || !existsSync(file)) {
      reply.writeHead(404).end();
      return;
    }
    reply.writeHead(200, {'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream'});
    reply.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve({server, origin: `http://127.0.0.1:${server.address().port}`,
      url: `http://127.0.0.1:${server.address().port}${PREFIX}`})));
}

// Requests as the page makes them: method, path, body (an object is sent as JSON).
const CASES = [
  ['GET', '/api/gpus'],
  ['GET', '/api/models'],
  ['GET', '/api/words?lang=de'],
  ['POST', '/api/fit', {model: 'llama-3.1-8b', method: 'lora', gpu: 'h200-nvl'}],
  ['POST', '/api/fit', {model: 'llama-3.3-70b', method: 'lora', rank: '16', gpu: 'h200-nvl',
    seq: '2048', micro_batch: '1', recompute: 'full', lang: 'de'}],
  ['POST', '/api/fit', {model: 'llama-3.1-70b', method: 'qlora', gpu: 'h100-sxm', gpus: '4',
    shard: 'auto'}],
  ['POST', '/api/step', {model: 'llama-3.1-8b', method: 'full', optimizer: 'adamw-8bit',
    gpu: 'h200-nvl'}],
  ['POST', '/api/scale', {model: 'llama-3.3-70b', method: 'lora', gpu: ['h200-nvl', 'rtx-pro-6000'],
    sweep: true}],
  ['POST', '/api/mig', {model: 'llama-3.1-8b', method: 'qlora', gpu: 'h200-nvl'}],
  ['POST', '/api/max', {model: 'llama-3.1-8b', method: 'lora', gpu: 'rtx-pro-6000', solve: 'seq'}],
  ['POST', '/api/explain', {model: 'llama-3.1-8b', method: 'lora', gpu: 'h200-nvl',
    figure: 'memory.peak', depth: 1}],
  ['POST', '/api/infer', {model: 'llama-3.1-8b', gpu: 'h200-nvl', context: '8192', batch: '8'}],
  ['POST', '/api/matrix', {model: 'llama-3.1-8b', method: 'lora', tokens: '1e8'}],
  ['POST', '/api/plan?lang=en', 'SEED_RUNS'],
  ['POST', '/api/report?format=md&gpu=h200-nvl,l40s', 'SEED_RUNS'],
  // Errors: the same code, message, field and suggestions.
  ['POST', '/api/fit', {model: 'llama-3.1-8', method: 'lora', gpu: 'h200-nvl'}],
  ['POST', '/api/fit', {model: 'llama-3.1-8b', method: 'lora', gpu: 'h200-nvl', seq: '-3'}],
  ['POST', '/api/fit', '{not json'],
  ['GET', '/api/no-such-endpoint'],
];

export function siteTests({test, check, equal, cliJson, SCREENSHOTS, SEED_RUNS}) {
  // The page and its engine, once: the first request loads and compiles the module.
  async function openSite(env, hash = '', viewport = {width: 1280, height: 900}) {
    const page = await env.context.newPage();
    await page.setViewportSize(viewport);
    page.on('pageerror', (error) => env.context.pageErrors.push(`site: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 400/.test(message.text())) {
        env.context.pageErrors.push(`site: ${message.text()}`);
      }
    });
    // What the page asks for (its worker's requests too): only files of the static host.
    page.seen = [];
    page.on('request', (r) => page.seen.push(r.url()));
    await page.goto(`${env.siteUrl}${hash ? `#${hash}` : ''}`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true' &&
        document.body.dataset.busy === 'false' && document.body.dataset.planBusy === 'false', null,
        {timeout: 60000});
    return page;
  }

  const needSite = (env) => check(env.siteOrigin,
      'build/site is missing: build it with cmake --build --preset default --target site ' +
      '(needs emscripten: scripts/install-deps.sh --browser)');

  test('static site: the engine in the page answers every case as the server and the CLI do',
      async (env) => {
    needSite(env);
    const page = await openSite(env);
    let compared = 0;
    for (const [method, path, given] of CASES) {
      const body = given === 'SEED_RUNS' ? SEED_RUNS :
        typeof given === 'string' || given === undefined ? given : JSON.stringify(given);
      const type = given === 'SEED_RUNS' ? 'application/yaml' : 'application/json';
      const served = await fetch(env.origin + path, {method,
        headers: body === undefined ? {} : {'Content-Type': type}, body});
      const servedText = await served.text();
      const engine = await page.evaluate(async ({method, path, body, type}) => {
        const init = {method, headers: body === undefined ? {} : {'Content-Type': type}, body};
        const {reply, text} = await limitedFetch(path, init);
        return {status: reply.status, type: reply.headers.get('Content-Type'), text};
      }, {method, path, body, type});
      const what = `${method} ${path} ${body === undefined ? '' : body.slice(0, 60)}`;
      equal(engine.status, served.status, `${what}: status`);
      equal(engine.type, served.headers.get('Content-Type'), `${what}: content type`);
      check(engine.text === servedText, `${what}: the engine's reply differs from the server's ` +
          `(${engine.text.length} vs ${servedText.length} bytes): ` +
          `${engine.text.slice(0, 200)} | ${servedText.slice(0, 200)}`);
      // A run's answer is also the CLI's --json for the same options.
      const command = path.match(/^\/api\/([a-z]+)$/)?.[1];
      if (method === 'POST' && command && engine.status === 200 && typeof given === 'object') {
        equal(JSON.parse(engine.text), await cliJson(command, given), `${what}: engine vs CLI`);
        compared++;
      }
    }
    check(compared >= 10, `only ${compared} cases were compared with the CLI`);
    await page.close();
  });

  test('static site: the page renders the same results as the served page, at desktop and ' +
      'phone size; screenshots', async (env) => {
    needSite(env);
    const hash = 'model=llama-3.3-70b&method=lora&cards=h200-nvl:1,rtx-pro-6000:2&lang=de';
    for (const [size, viewport] of [['desktop', {width: 1440, height: 900}],
      ['phone', {width: 390, height: 844}]]) {
      const site = await openSite(env, hash, viewport);
      const served = await env.context.newPage();
      await served.setViewportSize(viewport);
      await served.goto(`${env.origin}/#${hash}`);
      await served.waitForFunction(() => document.body.dataset.ready === 'true' &&
          document.body.dataset.busy === 'false' && document.body.dataset.planBusy === 'false',
          null, {timeout: 60000});
      const results = (page) => page.evaluate(() => ({
        figures: [...document.querySelectorAll('main [data-figure]')]
            .map((el) => `${el.dataset.figure}=${el.dataset.value}`),
        verdicts: [...document.querySelectorAll('main [data-verdict]')]
            .map((el) => el.dataset.verdict),
        text: document.querySelector('main').innerText,
      }));
      const [a, b] = await Promise.all([results(site), results(served)]);
      check(a.figures.length > 20, `${size}: only ${a.figures.length} figures on the static page`);
      equal(a.figures, b.figures, `${size}: figures, static vs served`);
      equal(a.verdicts, b.verdicts, `${size}: verdicts, static vs served`);
      check(a.text === b.text, `${size}: the results' text differs between the static and the ` +
          'served page');
      const elsewhere = site.seen.filter((url) => new URL(url).origin !== env.siteOrigin);
      equal(elsewhere, [], `${size}: requests of the static page to anything but its host`);
      check(site.seen.some((url) => url.endsWith('/ftplan-engine.wasm')),
          `${size}: the static page did not load its engine: ${site.seen.join(' ')}`);
      await site.screenshot({path: join(SCREENSHOTS, `static-site-${size}.png`)});
      await site.close();
      await served.close();
    }
  });
}
