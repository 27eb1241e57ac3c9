// End-to-end tests of the web calculator and the HTML report in a real browser: Debian's Chromium (/usr/bin/chromium,
// never a downloaded one) driven by playwright-core, against `build/ftplan serve` on a free port.
// Builds nothing: build/ftplan must exist (./test.sh quick builds it).
// Usage: node run.mjs   (FTPLAN_BIN and CHROMIUM override the two paths; FTPLAN_BROWSER_ONLY=TEXT
//                        runs only the tests whose name contains TEXT)
// Exit code: 0 when every test passes, 1 otherwise (each failure says what differed).
import {execFile, spawn} from 'node:child_process';
import {createHash} from 'node:crypto';
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {fileURLToPath} from 'node:url';
import {promisify} from 'node:util';

import {chromium} from 'playwright-core';

import {reportTests} from './report.mjs';
import {siteTests, startSiteServer} from './site.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = process.env.FTPLAN_BIN ?? join(ROOT, 'build/ftplan');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const SCREENSHOTS = join(ROOT, 'build/browser-screenshots');
const SEED_RUNS = readFileSync(join(ROOT, 'examples/seed-runs.yaml'), 'utf8');
const TIMEOUT_MS = 30000;
// The page that needs no server (tests/browser/site.mjs); FTPLAN_SITE names another folder.
const SITE = process.env.FTPLAN_SITE ?? join(ROOT, 'build/site');

// ---- the server and the CLI --------------------------------------------------------------------

// Starts `ftplan serve --port 0` and resolves with its origin from the "serving on http://..." line.
function startServer() {
  const server = spawn(BIN, ['serve', '--port', '0'], {stdio: ['ignore', 'pipe', 'pipe']});
  return new Promise((resolveOrigin, reject) => {
    let output = '';
    const timer = setTimeout(
        () => reject(new Error(`no "serving on" line within 20 s:\n${output}`)), 20000);
    const onData = (chunk) => {
      output += chunk;
      const match = /serving on (http:\/\/[^\s/]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolveOrigin({server, origin: match[1]});
      }
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', onData);
    server.on('exit', (code) => reject(new Error(`ftplan serve exited with ${code}:\n${output}`)));
  });
}

const run = promisify(execFile);

// `ftplan COMMAND --option value ... --json` with the API's body keys as options ('_' -> '-').
async function cliJson(command, body) {
  const args = [command];
  for (const [key, value] of Object.entries(body)) {
    for (const item of [value].flat()) {
      // A flag (true) is its option alone.
      if (item === true) args.push(`--${key.replaceAll('_', '-')}`);
      else args.push(`--${key.replaceAll('_', '-')}`, String(item));
    }
  }
  args.push('--json');
  const {stdout} = await run(BIN, args, {maxBuffer: 64 << 20});
  return JSON.parse(stdout);
}

async function apiJson(origin, path, body) {
  const reply = await fetch(origin + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {'Content-Type': 'application/json'},
    body: typeof body === 'string' || body === undefined ? body : JSON.stringify(body),
  });
  return {status: reply.status, data: await reply.json()};
}

// ---- checks ------------------------------------------------------------------------------------

class Failure extends Error {}

function check(condition, message) {
  if (!condition) throw new Failure(message);
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  check(a === e, `${what}: page/actual ${a}, expected ${e}`);
}

// The page's number format: English 85.9, German 85,9.
function gbText(value, lang = 'en') {
  const text = `${value.toFixed(1)} GB`;
  return lang === 'de' ? text.replace('.', ',') : text;
}

// ---- the page ----------------------------------------------------------------------------------

async function waitForResults(page) {
  await page.waitForFunction(() => document.body.dataset.ready === 'true' &&
      document.body.dataset.busy === 'false', null, {timeout: TIMEOUT_MS});
}

async function waitForPlan(page) {
  await page.waitForFunction(() => document.body.dataset.planBusy === 'false', null,
      {timeout: TIMEOUT_MS});
}

async function openPage(context, origin, hash = '', viewport = {width: 1280, height: 900}) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  page.on('pageerror', (error) => context.pageErrors.push(`${error.message}`));
  // Script errors and blocked content count; an HTTP error status the page expects (400 for a bad
  // input, the plan's error while the server has no planner) is logged by Chromium but is no error.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 400/.test(message.text())) {
      context.pageErrors.push(message.text());
    }
  });
  await page.goto(`${origin}/${hash ? `#${hash}` : ''}`);
  await waitForResults(page);
  return page;
}

// Sets the form the way a user does: menus, fields, one card row per entry.
async function fillForm(page, run) {
  await page.check('input[name=source][value=catalog]');
  await page.selectOption('#model', run.model);
  await page.selectOption('#method', run.method);
  await page.selectOption('#optimizer', run.optimizer ?? 'adamw');
  if (run.method !== 'full') await page.fill('#rank', String(run.rank ?? 16));
  const rows = page.locator('#cards > li');
  while (await rows.count() > run.cards.length) await rows.last().locator('button').click();
  while (await rows.count() < run.cards.length) await page.click('#add-card');
  for (const [i, card] of run.cards.entries()) {
    await rows.nth(i).locator('select').selectOption(card.gpu);
    await rows.nth(i).locator('input').fill(String(card.count));
  }
  await waitForResults(page);
}

// The figures of one card's memory result as the page shows them: value and text.
async function memoryShown(page, gpu, count) {
  return page.locator(`#memory article[data-gpu="${gpu}"][data-count="${count}"]`).evaluate((box) => {
    const figures = {};
    for (const el of box.querySelectorAll('dl [data-figure], .legend [data-figure]')) {
      figures[el.dataset.figure] = {value: Number(el.dataset.value), text: el.textContent};
    }
    const verdict = box.querySelector('[data-verdict]');
    return {verdict: verdict?.dataset.verdict, verdictText: verdict?.textContent, figures,
      text: box.textContent};
  });
}

// The API body the page sends for a form run (the CLI's defaults made explicit).
function fitBody(run, card) {
  const body = {method: run.method, optimizer: run.optimizer ?? 'adamw', precision: 'bf16',
    seq: '2048', micro_batch: '1', recompute: 'full', model: run.model};
  if (run.method !== 'full') {
    Object.assign(body, {rank: String(run.rank ?? 16), targets: 'q,k,v,o,gate,up,down'});
  }
  return {...body, gpu: card.gpu, gpus: String(card.count)};
}

// The seed's runs (examples/seed-runs.yaml; figures in SEED-FIGURES.md M5, M8, M11).
const SEED_CASES = [
  {name: '8B LoRA on RTX PRO 6000 (M5)', model: 'llama-3.1-8b', method: 'lora', rank: 16,
    cards: [{gpu: 'rtx-pro-6000', count: 1}], verdict: 'fits', free: '85.9 GB'},
  {name: '8B full fine-tune, 32-bit Adam on RTX PRO 6000 (M11)', model: 'llama-3.1-8b', method: 'full',
    optimizer: 'adamw', cards: [{gpu: 'rtx-pro-6000', count: 1}], verdict: 'does-not-fit'},
  // M8: "about 6 GB free, too little to plan with": tight, or does not fit once the step's
  // activations and overheads are counted.
  {name: '70B LoRA on a BF16 base on H200 NVL (M8)', model: 'llama-3.3-70b', method: 'lora', rank: 16,
    cards: [{gpu: 'h200-nvl', count: 1}], verdict: ['tight', 'does-not-fit'], free: '6.3 GB'},
];

// ---- the tests ---------------------------------------------------------------------------------

const tests = [];
const test = (name, fn) => tests.push({name, fn});

test('several cards: the default sharding is the one that fits (70B LoRA on 4 x H100 shards, as --shard auto)', async (env) => {
  const page = await openPage(env.context, env.origin);
  const run = {model: 'llama-3.1-70b', method: 'lora', rank: 16, cards: [{gpu: 'h100-sxm', count: 4}]};
  await fillForm(page, run);
  const cli = await cliJson('fit', {...fitBody(run, run.cards[0]), shard: 'auto'});
  equal(cli.shard, 'fsdp', 'the CLI shards a base no card holds');
  equal(cli.verdict, 'fits', 'sharded, it fits');
  const shown = await memoryShown(page, 'h100-sxm', 4);
  equal(shown.verdict, cli.verdict, 'verdict on the page');
  equal(shown.figures.peak?.value, cli.memory_GB.peak, 'peak on the page');
  check(shown.text.includes('fsdp'), `the page names the sharding: ${shown.text.slice(0, 300)}`);
});

test('seed runs: the page shows the API\'s and the CLI\'s figures and verdicts', async (env) => {
  const page = await openPage(env.context, env.origin);
  for (const seed of SEED_CASES) {
    await fillForm(page, seed);
    const card = seed.cards[0];
    const body = fitBody(seed, card);
    const [api, cli, shown] = await Promise.all([apiJson(env.origin, '/api/fit', body),
      cliJson('fit', body), memoryShown(page, card.gpu, card.count)]);
    equal(api.status, 200, `${seed.name}: API status`);
    equal(api.data, cli, `${seed.name}: API JSON vs CLI JSON`);
    equal(shown.verdict, cli.verdict, `${seed.name}: verdict on the page`);
    check([seed.verdict].flat().includes(cli.verdict),
        `${seed.name}: verdict ${cli.verdict}, the seed's is ${seed.verdict}`);
    const m = cli.memory_GB;
    for (const key of ['capacity', 'model_states', 'peak', 'free', 'headroom']) {
      equal(shown.figures[key]?.value, m[key], `${seed.name}: ${key} value`);
      equal(shown.figures[key]?.text, gbText(m[key]), `${seed.name}: ${key} as shown`);
    }
    const parts = {...m.breakdown, activations: m.activations, overhead: m.overhead};
    for (const [part, value] of Object.entries(parts).filter(([, v]) => v > 0)) {
      equal(shown.figures[part]?.value, value, `${seed.name}: ${part} in the memory bar`);
    }
    if (seed.free) equal(gbText(m.free), seed.free, `${seed.name}: the seed's free memory`);
  }
  // Step time and tokens/s of the first seed run, on the page and from the CLI.
  await fillForm(page, SEED_CASES[0]);
  const stepBody = fitBody(SEED_CASES[0], {gpu: 'rtx-pro-6000', count: 1});
  delete stepBody.gpus;
  const step = await cliJson('step', stepBody);
  const shown = await page.locator('#step article[data-gpu="rtx-pro-6000"]').evaluate((box) =>
    Object.fromEntries([...box.querySelectorAll('[data-figure]')]
        .map((el) => [el.dataset.figure, el.dataset.value])));
  equal(Number(shown.tokens_per_second), step.tokens_per_second, 'step: tokens/s');
  equal(Number(shown.step_seconds), step.step_seconds, 'step: step seconds');
  equal(shown.step_seconds_range, step.step_seconds_range.join(','), 'step: the step\'s range');
  check(step.step_seconds_range[0] < step.step_seconds && step.step_seconds < step.step_seconds_range[1],
      'step: the range holds the step');
  await page.close();
});

test('scaling chart and table: NVLink vs PCIe equal the API\'s sweep', async (env) => {
  const page = await openPage(env.context, env.origin,
      'model=llama-3.3-70b&method=lora&cards=h200-nvl:2,rtx-pro-6000:2');
  const body = {...fitBody({model: 'llama-3.3-70b', method: 'lora'}, {gpu: 'h200-nvl', count: 2}),
    gpu: ['h200-nvl', 'rtx-pro-6000'], sweep: true};
  delete body.gpus;
  const api = await apiJson(env.origin, '/api/scale', body);
  equal(api.status, 200, 'scale: API status');
  // A line per card type (the part of one past its NVLink domain is a segment of its own).
  check(await page.locator('#scale svg.chart path.series:not(.beyond)').count() === 2,
      'scale: the chart has two lines');
  for (const point of api.data.sweep.filter((p) => p.verdict !== 'does-not-fit')) {
    const cell = page.locator(`#scale td[data-gpu="${point.gpu}"][data-count="${point.gpus}"]`);
    const value = await cell.locator('[data-figure=tokens_per_second]').getAttribute('data-value');
    equal(Number(value), point.tokens_per_second, `scale: tokens/s of ${point.gpu} x ${point.gpus}`);
  }
  const text = await page.locator('#scale').textContent();
  check(text.includes('NVLink') && text.includes('PCIe'),
      'scale: the table names NVLink and PCIe links');
  // Where a card's line passes from one link to another, the chart says so (the API's links).
  for (const gpu of ['h200-nvl', 'rtx-pro-6000']) {
    const series = api.data.sweep.filter((p) => p.gpu === gpu && p.gpus > 1 &&
        p.verdict !== 'does-not-fit').sort((a, b) => a.gpus - b.gpus);
    for (let j = 1; j < series.length; j++) {
      if (series[j].link === series[j - 1].link) continue;
      const said = await page.locator('#scale .link-change').allTextContents();
      check(said.some((line) => line.includes(`${series[j - 1].link} up to ${series[j - 1].gpus}`) &&
          line.includes(`${series[j].link} from ${series[j].gpus}`)),
      `scale: the chart says where ${gpu} leaves ${series[j - 1].link}; it says ${said}`);
    }
  }
  check(api.data.sweep.some((p) => p.gpu === 'h200-nvl' && p.link.includes('NVLink')) &&
      api.data.sweep.some((p) => p.gpu === 'h200-nvl' && p.link.includes('PCIe')),
  'scale: the H200 NVL sweep crosses from NVLink to PCIe (the case this checks)');
  await page.close();
});

test('charts: y-axis titles, and a message where nothing fits to draw', async (env) => {
  const page = await openPage(env.context, env.origin,
      'model=llama-3.3-70b&method=lora&cards=h200-nvl:2,rtx-pro-6000:2');
  await page.locator('#scale svg text.y-title').waitFor();
  equal(await page.locator('#scale svg text.y-title').textContent(), 'tokens/s',
      'scale chart: the y-axis names its metric');
  await page.selectOption('#metric', 'scaling_efficiency');
  await page.locator('#scale svg text.y-title:text("scaling efficiency")').waitFor();
  mkdirSync(SCREENSHOTS, {recursive: true});
  await page.locator('#scale figure').screenshot({path: join(SCREENSHOTS, 'scale-chart.png')});
  // 405B full fine-tune with 32-bit Adam: no count of RTX PRO 6000 up to 8 holds it (CLI first).
  const {stdout} = await run(BIN, ['scale', '--model', 'llama-3.1-405b', '--method', 'full',
    '--gpu', 'rtx-pro-6000', '--sweep', '--json']);
  const sweep = JSON.parse(stdout).sweep;
  check(sweep.length > 0 && sweep.every((p) => p.verdict === 'does-not-fit'),
      'scale: the CLI finds no card count that fits');
  const none = await openPage(env.context, env.origin,
      'model=llama-3.1-405b&method=full&cards=rtx-pro-6000:1');
  await none.locator('#scale .chart-empty').waitFor();
  equal(await none.locator('#scale svg').count(), 0, 'scale: no empty chart is drawn');
  check((await none.locator('#scale .chart-empty').textContent()).includes('nothing to draw'),
      'scale: the empty chart says why');
  check(await none.locator('#scale table').count() === 1, 'scale: the table still names each count');
  // Inference at 128k tokens of context on one H200 NVL: 70B in BF16 leaves no batch room.
  await fillInfer(page, {gpu: 'h200-nvl', gpus: 1, context: 131072, batch: 1, weights: 'bf16',
    kv_dtype: 'bf16'});
  await fillForm(page, {model: 'llama-3.3-70b', method: 'lora', cards: [{gpu: 'h200-nvl', count: 1}]});
  await page.locator('#infer .chart-empty').waitFor();
  const shown = await inferShown(page);
  equal(shown.charted, 0, 'infer: no chart points where no batch fits');
  check(shown.text.includes('No batch size fits'), 'infer: the empty chart says why');
  await none.screenshot({path: join(SCREENSHOTS, 'scale-empty.png'), fullPage: true});
  await none.close();
  await page.close();
});

test('MIG: profiles that fit and runs per card equal the API\'s', async (env) => {
  const page = await openPage(env.context, env.origin,
      'model=llama-3.1-8b&method=qlora&cards=rtx-pro-6000:1,rtx-4090:1');
  const body = fitBody({model: 'llama-3.1-8b', method: 'qlora'}, {gpu: 'rtx-pro-6000', count: 1});
  delete body.gpus;
  const api = await apiJson(env.origin, '/api/mig', body);
  equal(api.status, 200, 'mig: API status');
  for (const instance of api.data.instances) {
    const row = page.locator(
        `#mig article[data-gpu="rtx-pro-6000"] tr[data-profile="${instance.profile}"]`);
    equal(Number(await row.locator('[data-figure=free]').getAttribute('data-value')), instance.free_GB,
        `mig: free of ${instance.profile}`);
    equal(await row.locator('[data-verdict]').getAttribute('data-verdict'), instance.verdict,
        `mig: verdict of ${instance.profile}`);
  }
  const noMig = await page.locator('#mig article[data-gpu="rtx-4090"]').textContent();
  check(noMig.includes('No MIG'), `mig: a card without MIG says so, got "${noMig}"`);
  await page.close();
});

test('API errors appear next to the field they name', async (env) => {
  const page = await openPage(env.context, env.origin);
  await page.fill('#rank', '0');
  await waitForResults(page);
  const badRank = {...fitBody(SEED_CASES[0], SEED_CASES[0].cards[0]), rank: '0'};
  const api = await apiJson(env.origin, '/api/fit', badRank);
  equal(api.data.error?.field, 'rank', 'the API names the field');
  equal(await page.locator('#error-rank').isVisible(), true, 'the rank error is visible');
  check((await page.locator('#error-rank').textContent()).includes(api.data.error.message),
      'the rank error shows the API\'s message');
  equal(await page.getAttribute('#rank', 'aria-invalid'), 'true', 'the rank field is marked invalid');
  // A pasted config.json with a missing key: the error sits at the config text.
  await page.fill('#rank', '16');
  await page.check('input[name=source][value=paste]');
  await page.fill('#config', '{"model_type": "llama", "hidden_size": 256}');
  await waitForResults(page);
  const message = await page.locator('#error-config').textContent();
  check(await page.locator('#error-config').isVisible() && message.includes('required key'),
      `the config error names the missing key, got "${message}"`);
  await page.close();
});

test('a preference objective: the page sends it with its adapter and shows the reference copy',
    async (env) => {
      const page = await openPage(env.context, env.origin, 'cards=h200-nvl:1');
      await fillForm(page, {model: 'llama-3.1-8b', method: 'full', cards: [{gpu: 'h200-nvl', count: 1}]});
      await page.selectOption('#objective', 'dpo');
      await waitForResults(page);
      const body = {...fitBody({model: 'llama-3.1-8b', method: 'full'}, {gpu: 'h200-nvl', count: 1}),
        method: 'dpo', adapter: 'full'};
      const cli = await cliJson('fit', body);
      equal(cli.reference, 'frozen copy', 'DPO full: the reference is a frozen copy');
      const shown = await memoryShown(page, 'h200-nvl', 1);
      equal(shown.figures.reference_weights?.value, cli.memory_GB.breakdown.reference_weights,
          'DPO full: the reference weights in the memory bar');
      equal(shown.figures.peak?.value, cli.memory_GB.peak, 'DPO full: the peak');
      equal(shown.verdict, cli.verdict, 'DPO full: the verdict');
      // A suggestion that changes what DPO trains applies to the method select.
      const hash = 'model=llama-3.3-70b&method=lora&objective=dpo&cards=h100-sxm:1';
      const big = await openPage(env.context, env.origin, hash);
      const api = await apiJson(env.origin, '/api/fit', {...fitBody(
          {model: 'llama-3.3-70b', method: 'lora'}, {gpu: 'h100-sxm', count: 1}), method: 'dpo',
      adapter: 'lora'});
      equal(api.status, 200, 'DPO 70B LoRA: API status');
      const first = api.data.suggestions[0];
      equal(first.change, {adapter: 'qlora'}, 'DPO 70B LoRA on one H100: QLoRA first');
      await big.locator('#memory article').first().locator('.suggestions button.apply').first().click();
      await waitForResults(big);
      equal(await big.locator('#method').inputValue(), 'qlora', 'the suggestion set the method');
      equal(await big.locator('#objective').inputValue(), 'dpo', 'the objective stays');
      await big.close();
      await page.close();
    });

// The step box of one card type: its figures (value and text) and the bar's legend.
async function stepShown(page, gpu) {
  return page.locator(`#step article[data-gpu="${gpu}"]`).evaluate((box) => {
    const figures = {};
    for (const el of box.querySelectorAll('[data-figure]')) {
      figures[el.dataset.figure] = {value: el.dataset.value, text: el.textContent};
    }
    return {figures, text: box.textContent};
  });
}

test('an online objective (GRPO, PPO): lengths replace seq, the step shows its parts as the CLI',
    async (env) => {
      const page = await openPage(env.context, env.origin, 'cards=h200-nvl:1');
      await fillForm(page, {model: 'llama-3.1-8b', method: 'lora', cards: [{gpu: 'h200-nvl', count: 1}]});
      check(await page.locator('#prompt_len').isHidden(), 'SFT: no prompt length');
      await page.selectOption('#objective', 'grpo');
      await waitForResults(page);
      check(await page.locator('#seq').isHidden(), 'GRPO: the sequence length is hidden');
      await page.fill('#prompt_len', '1024');
      await page.fill('#completion_len', '512');
      await page.fill('#group_size', '4');
      await waitForResults(page);
      const run = {...fitBody({model: 'llama-3.1-8b', method: 'lora'}, {gpu: 'h200-nvl', count: 1}),
        method: 'grpo', adapter: 'lora', prompt_len: '1024', completion_len: '512', group_size: '4'};
      delete run.seq;
      const fit = await cliJson('fit', run);
      const shown = await memoryShown(page, 'h200-nvl', 1);
      check(fit.memory_GB.rollout_engine > 0, 'GRPO: the CLI counts a colocated engine');
      equal(shown.figures.rollout_engine?.value, fit.memory_GB.rollout_engine,
          'GRPO: the rollout engine in the memory bar');
      equal(shown.figures.peak?.value, fit.memory_GB.peak, 'GRPO: the peak');
      const scale = await cliJson('scale', {...run, gpus: '1'});
      const step = await stepShown(page, 'h200-nvl');
      equal(Number(step.figures.rl_step_seconds?.value), scale.rl.seconds.step, 'GRPO: the step');
      for (const part of ['prefill', 'decode', 'scoring', 'training']) {
        equal(Number(step.figures[`rl-${part}`]?.value), scale.rl.seconds[part], `GRPO: ${part}`);
      }
      equal(step.figures.rl_bottleneck?.value, scale.rl.bottleneck, 'GRPO: the bottleneck');
      equal(Number(step.figures.rl_completion_tokens_per_second?.value),
          scale.rl.completion_tokens_per_second, 'GRPO: generated tokens/s');
      mkdirSync(SCREENSHOTS, {recursive: true});
      await page.locator('#step article[data-gpu="h200-nvl"]').screenshot(
          {path: join(SCREENSHOTS, 'grpo-step.png')});
      // The lengths travel in the URL, and PPO (value and reward models) answers too.
      check(page.url().includes('prompt_len=1024'), `the URL keeps the prompt length: ${page.url()}`);
      await page.selectOption('#objective', 'ppo');
      await page.fill('#group_size', '');
      await waitForResults(page);
      const ppo = {...run, method: 'ppo'};
      delete ppo.group_size;
      const ppoScale = await cliJson('scale', {...ppo, gpus: '1'});
      const ppoStep = await stepShown(page, 'h200-nvl');
      equal(Number(ppoStep.figures.rl_step_seconds?.value), ppoScale.rl.seconds.step, 'PPO: the step');
      // A rollout that cannot run is said in the step box, in the server's words.
      await page.selectOption('#model', 'llama-3.3-70b');
      await waitForResults(page);
      const big = await cliJson('scale', {...ppo, model: 'llama-3.3-70b', gpus: '1'});
      const bigStep = await stepShown(page, 'h200-nvl');
      if (!big.rl.feasible) {
        check(bigStep.text.includes(big.rl.reason), `70B PPO: the reason ${big.rl.reason}`);
      } else {
        equal(Number(bigStep.figures.rl_step_seconds?.value), big.rl.seconds.step, '70B PPO: the step');
      }
      await page.close();
    });

test('a pasted config.json gives the same figures as the API', async (env) => {
  const config = JSON.parse(readFileSync(join(ROOT, 'data/models/llama-3.1-8b.json'), 'utf8'));
  const page = await openPage(env.context, env.origin, 'cards=rtx-pro-6000:1');
  await page.check('input[name=source][value=paste]');
  await page.fill('#config', JSON.stringify(config));
  await waitForResults(page);
  const shown = await memoryShown(page, 'rtx-pro-6000', 1);
  equal(shown.verdict, 'fits', 'pasted 8B config: verdict');
  equal(shown.figures.free?.text, '85.9 GB', 'pasted 8B config: free (seed M5)');
  await page.close();
});

// ---- inference (ftplan infer) ------------------------------------------------------------------

// The page's number format, `digits` decimals, in `lang` (en-US, de-DE: the words files' locales).
function numberText(value, digits, lang) {
  return new Intl.NumberFormat(lang === 'de' ? 'de-DE' : 'en-US',
      {minimumFractionDigits: digits, maximumFractionDigits: digits}).format(value);
}

// Generation rates as the page and `ftplan infer` write them: one decimal below 100 tokens/s.
function rateText(value, lang) {
  const unit = lang === 'de' ? 'Token/s' : 'tokens/s';
  return `${numberText(value, value < 100 ? 1 : 0, lang)} ${unit}`;
}

// An object with its keys in order, so that the page's and the CLI's objects compare as text.
function sortedKeys(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => a.localeCompare(b)));
}

// Sets the inference inputs the way a user does.
async function fillInfer(page, x) {
  await page.selectOption('#infer_gpu', x.gpu);
  await page.fill('#infer_gpus', String(x.gpus));
  await page.fill('#context', String(x.context));
  await page.fill('#batch', String(x.batch));
  await page.selectOption('#weights', x.weights);
  await page.selectOption('#kv_dtype', x.kv_dtype);
  await waitForResults(page);
}

// The inference result as the page shows it: each figure's value and text, the batch sweep.
async function inferShown(page) {
  return page.locator('#infer article.infer').evaluate((box) => {
    const figures = {};
    for (const el of box.querySelectorAll(
        '.headline [data-figure], dl [data-figure], .legend [data-figure]')) {
      figures[el.dataset.figure] = {value: el.dataset.value, text: el.textContent};
    }
    const sweep = [...box.querySelectorAll('tbody tr')].map((tr) => ({
      batch: Number(tr.dataset.batch),
      tokens_per_second: Number(tr.querySelector('[data-figure=tokens_per_second]').dataset.value),
      tokens_per_second_text: tr.querySelector('[data-figure=tokens_per_second]').textContent,
      ms_per_token: Number(tr.querySelector('[data-figure=ms_per_token]').dataset.value),
      bound: tr.querySelector('[data-figure=bound]').dataset.value,
      fits: tr.querySelector('[data-verdict]').dataset.verdict === 'fits',
    }));
    return {gpu: box.dataset.gpu, gpus: box.dataset.gpus, figures, sweep,
      verdict: box.querySelector('p > [data-verdict]')?.dataset.verdict,
      charted: box.querySelectorAll('svg circle').length, text: box.textContent};
  });
}

// The page's inference figures equal `ftplan infer --json` (and /api/infer) for the same inputs.
async function checkInfer(env, page, x, lang) {
  const body = {model: x.model, gpu: x.gpu, gpus: String(x.gpus), context: String(x.context),
    batch: String(x.batch), weights: x.weights, kv_dtype: x.kv_dtype};
  const [api, cli, shown] = await Promise.all([apiJson(env.origin, '/api/infer', body),
    cliJson('infer', body), inferShown(page)]);
  const what = `infer ${x.model} on ${x.gpu} × ${x.gpus} (${lang})`;
  equal(api.status, 200, `${what}: API status`);
  equal(api.data, cli, `${what}: API JSON vs CLI JSON`);
  equal([shown.gpu, Number(shown.gpus)], [cli.gpu, cli.gpus], `${what}: the card and count`);
  const f = shown.figures;
  for (const key of ['kv_bytes_per_token', 'kv_cache_GB', 'weights_GB', 'max_concurrent_sequences',
    'prefill_tokens_per_second', 'decode_tokens_per_second', 'decode_ms_per_token']) {
    equal(Number(f[key]?.value), cli[key], `${what}: ${key}`);
  }
  equal(f.bound?.value, cli.bound, `${what}: the decode bound`);
  equal(f.prefill_bound?.value, cli.prefill.bound, `${what}: the prefill bound`);
  for (const part of ['weights', 'reserve', 'kv_cache'].filter((p) => cli.memory_GB[p] > 0)) {
    equal(Number(f[`memory_${part}`]?.value), cli.memory_GB[part], `${what}: ${part} in the bar`);
  }
  equal(shown.verdict, cli.batch_fits ? 'fits' : 'does-not-fit', `${what}: the batch fits or not`);
  // As shown: GB (10^9 bytes) with one decimal, rates, bytes per token, in the language's format.
  equal(f.kv_cache_GB.text, gbText(cli.kv_cache_GB, lang), `${what}: KV cache as shown`);
  equal(f.weights_GB.text, gbText(cli.weights_GB, lang), `${what}: weights as shown`);
  equal(f.decode_tokens_per_second.text, rateText(cli.decode_tokens_per_second, lang),
      `${what}: decode tokens/s as shown`);
  equal(f.prefill_tokens_per_second.text, rateText(cli.prefill_tokens_per_second, lang),
      `${what}: prefill tokens/s as shown`);
  equal(f.kv_bytes_per_token.text,
      `${numberText(cli.kv_bytes_per_token, 0, lang)} ${lang === 'de' ? 'Byte' : 'bytes'}`,
      `${what}: KV bytes per token as shown`);
  equal(f.max_concurrent_sequences.text, numberText(cli.max_concurrent_sequences, 0, lang),
      `${what}: most sequences as shown`);
  // The batch sweep: every point of the CLI's, in its order, in the table and the chart.
  equal(shown.sweep.map(({tokens_per_second_text: _, ...p}) => sortedKeys(p)),
      cli.batch_sweep.map(sortedKeys), `${what}: the batch sweep`);
  equal(shown.sweep.map((p) => p.tokens_per_second_text),
      cli.batch_sweep.map((p) => rateText(p.tokens_per_second, lang)), `${what}: sweep as shown`);
  equal(shown.charted, cli.batch_sweep.some((b) => b.fits) ? cli.batch_sweep.length : 0,
      `${what}: a chart point per batch (none when no batch fits)`);
  check((await page.locator('#infer-heading + p').textContent()).includes('GB = 10⁹'),
      `${what}: the section states GB = 10⁹ bytes`);
  return cli;
}

const INFER_CASES = [
  {model: 'llama-3.1-8b', gpu: 'h200-nvl', gpus: 1, context: 8192, batch: 32, weights: 'bf16',
    kv_dtype: 'bf16'},
  {model: 'llama-3.1-70b', gpu: 'h100-sxm', gpus: 4, context: 4096, batch: 64, weights: 'fp8',
    kv_dtype: 'fp8'},
];

test('inference: the page shows `ftplan infer --json`\'s figures, in English and German',
    async (env) => {
      const page = await openPage(env.context, env.origin, 'cards=h200-nvl:1');
      for (const x of INFER_CASES) {
        await fillForm(page,
            {model: x.model, method: 'lora', cards: [{gpu: 'h200-nvl', count: 1}]});
        await fillInfer(page, x);
        const cli = await checkInfer(env, page, x, 'en');
        if (x.gpus > 1) {
          check((await page.locator('#infer').textContent()).includes(`over ${x.gpus} cards`),
              'infer: a tensor-parallel run says it is split over the cards');
        }
        if (x.model === 'llama-3.1-8b' && x.kv_dtype === 'bf16') {
          // K and V of every layer: 2 × KV heads × head size × 2 bytes × layers (config.json).
          const c = JSON.parse(readFileSync(join(ROOT, `data/models/${x.model}.json`), 'utf8'));
          const headDim = c.head_dim ?? c.hidden_size / c.num_attention_heads;
          const perToken = 2 * c.num_key_value_heads * headDim * 2 * c.num_hidden_layers;
          equal(cli.kv_bytes_per_token, perToken,
              'infer: Llama 3.1 8B\'s KV bytes per token from its config.json');
        }
      }
      // The URL keeps the inference inputs; a German page shows the same figures in German.
      const params = new URLSearchParams(new URL(page.url()).hash.slice(1));
      params.set('lang', 'de');
      const de = await openPage(env.context, env.origin, params.toString());
      const x = INFER_CASES.at(-1);
      equal(await de.evaluate(() => ['infer_gpu', 'infer_gpus', 'context', 'batch', 'weights',
        'kv_dtype'].map((id) => document.getElementById(id).value)),
      [x.gpu, String(x.gpus), String(x.context), String(x.batch), x.weights, x.kv_dtype],
      'infer: the inputs restored from the URL');
      const cli = await checkInfer(env, de, x, 'de');
      const words = {bandwidth: 'Speicherbandbreite', compute: 'Rechenleistung',
        link: 'Verbindung zwischen den Karten'};
      equal((await inferShown(de)).figures.bound.text, words[cli.bound],
          'infer: the bound in German');
      const text = await de.locator('#infer').textContent();
      check(text.includes('KV-Cache pro Token') && text.includes('Decode'),
          `infer: German labels, got "${text.slice(0, 200)}"`);
      await de.fill('#context', '8192');
      await de.selectOption('#weights', 'bf16');
      await de.selectOption('#kv_dtype', 'bf16');
      await de.selectOption('#infer_gpu', 'h200-nvl');
      await de.fill('#infer_gpus', '1');
      await de.fill('#batch', '32');
      await fillForm(de,
          {model: 'llama-3.1-8b', method: 'lora', cards: [{gpu: 'h200-nvl', count: 1}]});
      await checkInfer(env, de, INFER_CASES[0], 'de');
      await de.close();
      await page.close();
    });

test('inference: a bad input shows the server\'s error at its field, never a blank result',
    async (env) => {
      const page = await openPage(env.context, env.origin, 'model=llama-3.1-8b&infer_gpu=h100-sxm');
      const base = {model: 'llama-3.1-8b', gpu: 'h100-sxm', gpus: '1', context: '2048', batch: '1',
        weights: 'bf16', kv_dtype: 'bf16'};
      const bad = [
        {field: 'context', set: () => page.fill('#context', '0'), body: {context: '0'}},
        {field: 'weights', set: () => page.selectOption('#weights', 'nvfp4'),
          body: {weights: 'nvfp4'}},
        {field: 'infer_gpus', set: () => page.fill('#infer_gpus', '3'), body: {gpus: '3'}},
      ];
      for (const b of bad) {
        await page.fill('#context', '2048');
        await page.selectOption('#weights', 'bf16');
        await page.fill('#infer_gpus', '1');
        await waitForResults(page);
        await b.set();
        await waitForResults(page);
        const api = await apiJson(env.origin, '/api/infer', {...base, ...b.body});
        equal(api.status, 400, `infer error on ${b.field}: API status`);
        const error = api.data.error;
        // The CLI fails the same way (its message says --option where the API's says the key).
        const cliError = await cliJson('infer', {...base, ...b.body}).then(() => null,
            (e) => JSON.parse(e.stderr).error);
        equal([cliError?.code, cliError?.field], [error.code, error.field],
            `infer error on ${b.field}: the CLI's error`);
        equal(cliError.message.replace(/--([a-z])/g, '$1'), error.message,
            `infer error on ${b.field}: the CLI's message`);
        const slot = page.locator(`#error-${b.field}`);
        equal(await slot.isVisible(), true, `infer error on ${b.field}: the message is visible`);
        const message = await slot.textContent();
        check(message.includes(error.message),
            `infer error on ${b.field}: the page shows "${error.message}", got "${message}"`);
        equal(await page.getAttribute(`#${b.field}`, 'aria-invalid'), 'true',
            `infer error on ${b.field}: the field is marked invalid`);
        const note = (await page.locator('#infer').textContent()).trim();
        equal(note, 'No result: see the error at the inputs.',
            `infer error on ${b.field}: the result says where the error is`);
      }
      // Back to good inputs: the result returns and no error stays.
      await page.fill('#infer_gpus', '1');
      await waitForResults(page);
      equal(await page.locator('#error-infer_gpus').isVisible(), false, 'infer: the error is gone');
      await checkInfer(env, page, {...base, gpus: 1, context: 2048, batch: 1}, 'en');
      await page.close();
      // In German the server words the card's missing rate in German, and the page shows it.
      const de = await openPage(env.context, env.origin,
          'model=llama-3.1-8b&infer_gpu=h100-sxm&weights=nvfp4&lang=de');
      const api = await apiJson(env.origin, '/api/infer', {...base, weights: 'nvfp4', lang: 'de'});
      equal(api.status, 400, 'infer error in German: API status');
      const message = await de.locator('#error-weights').textContent();
      check(message.includes(api.data.error.message) && message.includes('veröffentlicht'),
          `infer error in German: the page shows "${api.data.error.message}", got "${message}"`);
      equal((await de.locator('#infer').textContent()).trim(),
          'Kein Ergebnis: siehe den Fehler bei den Eingaben.', 'infer error in German: the result');
      await de.close();
    });

test('language switch: German labels, verdicts and number format', async (env) => {
  const page = await openPage(env.context, env.origin, 'cards=rtx-pro-6000:1');
  await page.selectOption('#lang', 'de');
  await waitForResults(page);
  equal(await page.getAttribute('html', 'lang'), 'de', 'the document language');
  const text = await page.locator('body').innerText();
  for (const word of ['Modell', 'Speicher pro Karte', 'Modellzustände', 'frei', 'passt', 'Schritt',
    'Token/s', 'Karten', 'Welche Karte für welchen Lauf']) {
    check(text.includes(word), `German page lacks "${word}"`);
  }
  const shown = await memoryShown(page, 'rtx-pro-6000', 1);
  equal(shown.verdictText, 'passt', 'German verdict');
  equal(shown.figures.free?.text, gbText(shown.figures.free.value, 'de'), 'German number format');
  equal(shown.figures.free?.text, '85,9 GB', 'German free memory (seed: 86 GB)');
  // The engine's reason comes from the server in German, with German number marks.
  const reason = page.locator('article.result[data-gpu="rtx-pro-6000"] p.reason').first();
  const reasonText = await reason.textContent();
  check(reasonText.startsWith('Spitze ') && reasonText.includes(' GB von 102,6 GB auf '),
      `German reason: ${reasonText}`);
  equal(await reason.getAttribute('lang'), null, 'the German reason is not marked English');
  equal(await page.textContent('#report-html'), 'Bericht zu diesen Läufen (HTML)',
      'the report button is German');
  await page.selectOption('#lang', 'en');
  check((await page.locator('h1').textContent()).startsWith('Which GPU'), 'back to English');
  await page.close();
});

test('the shareable URL restores every input', async (env) => {
  const page = await openPage(env.context, env.origin);
  const inputs = {model: 'qwen3-32b', method: 'qlora', rank: 32, optimizer: 'adamw-8bit',
    cards: [{gpu: 'h200-nvl', count: 2}, {gpu: 'rtx-pro-6000', count: 1}, {gpu: 'l40s', count: 4}]};
  await fillForm(page, inputs);
  await page.fill('#seq', '4096');
  await page.fill('#micro_batch', '2');
  await page.selectOption('#recompute', 'selective');
  await page.uncheck('input[name=target][value=gate]');
  await page.selectOption('#lang', 'de');
  await waitForResults(page);
  const url = page.url();
  const formOf = (p) => p.evaluate(() => ({
    model: document.getElementById('model').value,
    method: document.getElementById('method').value,
    rank: document.getElementById('rank').value,
    optimizer: document.getElementById('optimizer').value,
    seq: document.getElementById('seq').value,
    micro_batch: document.getElementById('micro_batch').value,
    recompute: document.getElementById('recompute').value,
    lang: document.getElementById('lang').value,
    targets: [...document.querySelectorAll('input[name=target]:checked')].map((b) => b.value).join(','),
    cards: [...document.querySelectorAll('#cards > li')].map((li) =>
      `${li.querySelector('select').value}:${li.querySelector('input').value}`).join(','),
    results: document.getElementById('memory').textContent,
  }));
  const before = await formOf(page);
  equal(before.targets, 'q,k,v,o,up,down', 'the form before sharing');
  const fresh = await env.context.newPage();
  await fresh.goto(url);
  await waitForResults(fresh);
  const after = await formOf(fresh);
  equal(after, before, 'inputs and results restored from the URL');
  await fresh.close();
  await page.close();
});

test('plan table: the page shows the API\'s plan for the seed\'s runs (or its error)', async (env) => {
  const page = await openPage(env.context, env.origin);
  await waitForPlan(page);
  equal(await page.inputValue('#runs'), SEED_RUNS, 'the runs default to examples/seed-runs.yaml');
  const api = await apiJson(env.origin, '/api/plan', SEED_RUNS);
  if (api.status === 200) {
    for (const run of api.data.runs) {
      const row = page.locator(`#plan tr[data-run="${run.run}"]`);
      check(await row.count() === 1, `plan: no row for run "${run.run}"`);
      if (run.recommendation) {
        equal(await row.getAttribute('data-gpu'), run.recommendation.gpu,
            `plan: card for "${run.run}"`);
        equal(Number(await row.getAttribute('data-count')), run.recommendation.count,
            `plan: count for "${run.run}"`);
        const range = await row.locator('[data-figure=time_to_train_hours_range]').count();
        check(range === 1, `plan: the time to train of "${run.run}" shows its range`);
        equal(await row.locator('.close-call').count(), run.too_close_to_call ? 1 : 0,
            `plan: "too close to call" for "${run.run}" as the API says`);
      }
    }
  } else {
    const text = await page.locator('#plan').textContent();
    check(text.includes(api.data.error.message.split('\n')[0]),
        `plan: the page shows the API's error "${api.data.error.message}", got "${text}"`);
  }
  // "Add the run above": the form's run joins the list, and the URL carries the edited list.
  await fillForm(page,
      {model: 'qwen3-14b', method: 'qlora', rank: 8, cards: [{gpu: 'l40s', count: 1}]});
  await page.click('#add-run');
  await waitForPlan(page);
  const runs = await page.inputValue('#runs');
  const added = '  - name: qwen3-14b qlora\n    model: qwen3-14b\n    method: qlora\n' +
      '    seq: 2048\n    rank: 8\n    optimizer: adamw\n    precision: bf16\n    micro_batch: 1\n' +
      '    recompute: full\n    gpus: [l40s]\n';
  check(runs.startsWith(SEED_RUNS) && runs.endsWith(added),
      `the added run, got:\n${runs.slice(SEED_RUNS.length)}`);
  check(new URL(page.url()).hash.includes('runs='), 'the URL carries the edited runs');
  await page.close();
});

test('keyboard: every control has a label, the skip link comes first, focus is visible',
    async (env) => {
  const page = await openPage(env.context, env.origin);
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea, button')]
        .filter((el) => !el.hidden && el.type !== 'hidden')
        .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') ||
            (el.tagName === 'BUTTON' && el.textContent.trim())))
        .map((el) => el.outerHTML.slice(0, 80)));
  equal(unlabelled, [], 'controls without a label');
  await page.keyboard.press('Tab');
  equal(await page.evaluate(() => document.activeElement.className), 'skip', 'the first Tab stop');
  await page.keyboard.press('Tab');
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  check(outline !== 'none', `the focused control shows an outline, got "${outline}"`);
  // The results speak through one polite region, the summary; the sections stay quiet.
  const live = await page.locator('#results [aria-live]').evaluateAll((els) =>
    els.map((el) => `${el.id}:${el.getAttribute('aria-live')}`));
  equal(live, ['summary:polite'], 'live regions of the results');
  await page.close();
});

test('phone width (375 px): no horizontal scrolling; screenshots', async (env) => {
  mkdirSync(SCREENSHOTS, {recursive: true});
  const phone = await openPage(env.context, env.origin,
      'model=llama-3.3-70b&method=lora&cards=h200-nvl:1,rtx-pro-6000:2', {width: 375, height: 812});
  await waitForPlan(phone);
  const widths = await phone.evaluate(() => ({scroll: document.documentElement.scrollWidth,
    body: document.body.scrollWidth, view: window.innerWidth}));
  check(widths.scroll <= 375 && widths.body <= 375,
      `the page is wider than the phone: ${JSON.stringify(widths)}`);
  await phone.screenshot({path: join(SCREENSHOTS, 'phone-375.png'), fullPage: true});
  await phone.close();
  const desktop = await openPage(env.context, env.origin);
  await waitForPlan(desktop);
  await desktop.screenshot({path: join(SCREENSHOTS, 'desktop-1280.png'), fullPage: true});
  await desktop.selectOption('#lang', 'de');
  await waitForResults(desktop);
  await desktop.screenshot({path: join(SCREENSHOTS, 'desktop-1280-de.png'), fullPage: true});
  await desktop.close();
});

// The first card's memory result: its headline, verdict and suggestions as the page shows them.
async function fitShown(page) {
  return page.locator('#memory article').first().evaluate((box) => ({
    gpu: box.dataset.gpu,
    count: box.dataset.count,
    verdict: box.querySelector('[data-verdict]')?.dataset.verdict,
    headline: box.querySelector('.headline')?.textContent,
    room: [...box.querySelectorAll('.headline [data-figure]')].map((el) =>
      ({figure: el.dataset.figure, value: Number(el.dataset.value)}))[0],
    suggestions: [...box.querySelectorAll('.suggestions li')].map((li) => ({
      kind: li.dataset.kind, text: li.textContent, button: li.querySelector('button.apply') !== null})),
    heading: box.querySelector('.suggestions h4')?.textContent,
  }));
}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`how to make it fit (${size}): headroom or shortfall in the headline, suggestions applied ` +
      'by a click', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const hash = 'model=llama-3.3-70b&method=lora&cards=h100-sxm:1';
    const page = await openPage(env.context, env.origin, hash, viewport);
    const body = fitBody({model: 'llama-3.3-70b', method: 'lora'}, {gpu: 'h100-sxm', count: 1});
    const api = await apiJson(env.origin, '/api/fit', body);
    equal(api.status, 200, 'fit: API status');
    equal(api.data.verdict, 'does-not-fit', '70B LoRA on one H100: the API\'s verdict');
    const before = await fitShown(page);
    equal(before.verdict, 'does-not-fit', 'the page\'s verdict');
    const shortfall = -api.data.memory_GB.headroom;
    equal(before.room, {figure: 'headline_shortfall', value: shortfall}, 'the headline\'s figure');
    check(before.headline.includes(`does not fit · needs ${gbText(shortfall)} more`),
        `the headline says the shortfall, got "${before.headline}"`);
    check(!before.headline.includes('free'), `the headline does not say "free": "${before.headline}"`);
    equal(before.suggestions.map((x) => x.kind), api.data.suggestions.map((x) => x.kind),
        'the suggestions are the API\'s, in its order');
    check(before.suggestions.length > 0 && before.suggestions.every((x) => x.button),
        'each suggestion has a button');
    equal(before.heading, 'To make it fit', 'the suggestions\' heading');
    const widths = await page.evaluate(() => document.documentElement.scrollWidth);
    check(widths <= viewport.width, `the page is wider than the window: ${widths} px`);
    await page.screenshot({path: join(SCREENSHOTS, `suggestions-${size}.png`), fullPage: true});
    // One click: the form takes the change, the URL keeps it and the verdict becomes fits.
    const first = api.data.suggestions[0];
    await page.locator('#memory article').first().locator('.suggestions button.apply').first().click();
    await waitForResults(page);
    const after = await fitShown(page);
    equal(after.verdict, 'fits', `after "${first.reason}": the verdict`);
    check(after.headline.includes('fits · ') && after.headline.includes('GB headroom'),
        `after the click the headline says the headroom, got "${after.headline}"`);
    equal(after.room.value, first.memory_GB.headroom, 'the headroom the suggestion showed');
    equal(after.suggestions, [], 'a run that fits has no suggestions');
    const params = new URLSearchParams(new URL(page.url()).hash.slice(1));
    for (const [key, value] of Object.entries(first.change)) {
      if (key === 'gpus') equal(params.get('cards'), `h100-sxm:${value}`, 'the URL\'s cards');
      else equal(params.get(key), String(value), `the URL's ${key}`);
    }
    await page.screenshot({path: join(SCREENSHOTS, `suggestion-applied-${size}.png`),
      fullPage: true});
    // German: the headline, the heading and the buttons.
    await page.close();
    const de = await openPage(env.context, env.origin, `${hash}&lang=de`, viewport);
    const german = await fitShown(de);
    check(german.headline.includes(`passt nicht · braucht ${gbText(shortfall, 'de')} mehr`),
        `German headline, got "${german.headline}"`);
    equal(german.heading, 'So passt es', 'German heading of the suggestions');
    const buttons = await de.locator('#memory .suggestions button.apply').allTextContents();
    check(buttons.length > 0 && buttons.every((b) => b === 'Übernehmen'), `German buttons: ${buttons}`);
    await de.screenshot({path: join(SCREENSHOTS, `suggestions-${size}-de.png`), fullPage: true});
    await de.close();
  });

  test(`the skip link keeps the inputs (${size})`, async (env) => {
    const page = await openPage(env.context, env.origin,
        'model=qwen3-14b&method=qlora&seq=4096&cards=l40s:2', viewport);
    await page.fill('#micro_batch', '3');
    await waitForResults(page);
    const hash = new URL(page.url()).hash;
    await page.focus('a.skip');
    await page.keyboard.press('Enter');
    await waitForResults(page);
    equal(new URL(page.url()).hash, hash, 'the URL keeps the inputs');
    equal(await page.inputValue('#seq'), '4096', 'the sequence length is kept');
    equal(await page.inputValue('#micro_batch'), '3', 'the micro-batch is kept');
    equal(await page.inputValue('#model'), 'qwen3-14b', 'the model is kept');
    equal(await page.evaluate(() => document.activeElement.id), 'results', 'the focus is on the results');
    const top = await page.locator('#results').evaluate((el) => el.getBoundingClientRect().top);
    check(top >= -1 && top < viewport.height / 2, `the results are in view (top ${top})`);
    await page.close();
  });
}

// Every card (POST /api/matrix): the table as the page shows it.
async function waitForMatrix(page) {
  await waitForResults(page);
  await page.waitForSelector('#matrix table, #matrix [data-empty], #matrix .error',
      {timeout: TIMEOUT_MS});
}

async function matrixShown(page) {
  return page.locator('#matrix').evaluate((box) => ({
    sort: box.querySelector('table')?.dataset.sort,
    sorted: box.querySelector('th[aria-sort] button')?.dataset.sort,
    headings: [...box.querySelectorAll('thead button.sort')].map((b) => b.dataset.sort),
    rows: [...box.querySelectorAll('tbody tr')].map((tr) => {
      const value = (name) => tr.querySelector(`[data-figure="${name}"]`)?.dataset.value;
      return {gpu: tr.dataset.gpu, verdict: tr.dataset.verdict,
        oneCard: tr.querySelector('[data-verdict]')?.dataset.verdict,
        headroom: value('headroom'), headroomText: tr.querySelector('[data-figure="headroom"]')
            ?.textContent,
        cards: value('cards_needed'), step: value('step_seconds'),
        stepRange: value('step_seconds_range'), hours: value('time_to_train_hours'),
        hoursRange: value('time_to_train_hours_range'), cost: value('cost_USD'),
        why: tr.querySelector('.why')?.textContent};
    }),
  }));
}

// What the page shows against `ftplan matrix --json` for the same body.
function checkMatrix(shown, cli, what, lang = 'en') {
  equal(shown.rows.map((r) => r.gpu), cli.rows.map((r) => r.gpu), `${what}: cards in order`);
  cli.rows.forEach((r, i) => {
    const row = shown.rows[i];
    const room = r.one_card.memory_GB.headroom;
    equal(row.verdict, r.verdict, `${what}: ${r.gpu} verdict`);
    equal(row.oneCard, r.one_card.verdict, `${what}: ${r.gpu} one-card verdict`);
    equal(Number(row.headroom), room, `${what}: ${r.gpu} headroom`);
    check(row.headroomText.includes(gbText(Math.abs(room), lang)),
        `${what}: ${r.gpu} headroom text "${row.headroomText}" shows ${gbText(Math.abs(room), lang)}`);
    if (r.fewest) {
      equal(Number(row.cards), r.cards_needed, `${what}: ${r.gpu} fewest cards`);
      equal(Number(row.step), r.fewest.step_seconds, `${what}: ${r.gpu} step`);
      equal(row.stepRange, r.fewest.step_seconds_range.join(','), `${what}: ${r.gpu} step range`);
      if (cli.tokens !== null) {
        equal(Number(row.hours), r.fewest.time_to_train_hours, `${what}: ${r.gpu} hours`);
        equal(row.hoursRange, r.fewest.time_to_train_hours_range.join(','),
            `${what}: ${r.gpu} hours range`);
      }
    } else {
      equal(row.cards, '', `${what}: ${r.gpu} no count`);
      equal(row.why, r.why_not, `${what}: ${r.gpu} why not`);
    }
  });
}

// The page's body for the form's run and the matrix inputs (the CLI's defaults made explicit).
function matrixBody(run, extra = {}) {
  const body = fitBody(run, {gpu: 'x', count: 1});
  delete body.gpu;
  delete body.gpus;
  return {...body, global_batch: '64', sort: 'cards', ...extra};
}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`every card (${size}): the matrix is the CLI's, sorts by a heading, filters; screenshots`,
      async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const run = {model: 'llama-3.1-70b', method: 'lora'};
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-70b&method=lora&cards=h200-nvl:1&matrix_tokens=1e8' +
        '&matrix_prices=h100-sxm%3D2.5%2Cl40s%3D1.1', viewport);
    await waitForMatrix(page);
    const extra = {tokens: '1e8', price_per_card_hour: ['h100-sxm=2.5', 'l40s=1.1']};
    const cli = await cliJson('matrix', matrixBody(run, extra));
    const api = await apiJson(env.origin, '/api/matrix', matrixBody(run, extra));
    equal(api.status, 200, 'matrix: API status');
    equal(api.data, cli, 'matrix: API JSON vs CLI JSON');
    let shown = await matrixShown(page);
    equal(shown.sort, 'cards', 'the default sort');
    equal(shown.headings, ['name', 'memory', 'headroom', 'cards', 'step', 'time', 'cost', 'price'],
        'the sortable columns');
    checkMatrix(shown, cli, 'default order');
    check(new Set(cli.rows.map((r) => r.verdict)).size === 3,
        'the run shows every kind of row (one card, more cards, none)');
    const costs = shown.rows.filter((r) => r.cost !== undefined).map((r) => r.gpu).sort();
    equal(costs, cli.rows.filter((r) => r.fewest?.cost_USD != null).map((r) => r.gpu).sort(),
        'a cost where a rental price was given');
    // The table scrolls inside its own box; the page does not.
    const widths = await page.evaluate(() => ({page: document.documentElement.scrollWidth,
      body: document.body.scrollWidth, box: document.querySelector('#matrix .table-wrap').clientWidth,
      table: document.querySelector('#matrix table').scrollWidth}));
    check(widths.page <= viewport.width && widths.body <= viewport.width,
        `the page is wider than the window: ${JSON.stringify(widths)}`);
    if (viewport.width < 500) {
      check(widths.table > widths.box, `on a phone the table scrolls in its box: ${JSON.stringify(widths)}`);
    }
    await page.locator('#matrix-heading').scrollIntoViewIfNeeded();
    await page.screenshot({path: join(SCREENSHOTS, `matrix-${size}.png`), fullPage: true});
    await page.locator('section[aria-labelledby="matrix-heading"]').screenshot(
        {path: join(SCREENSHOTS, `matrix-section-${size}.png`)});
    // Sort by headroom with the keyboard: the focus stays on the heading, the order is the CLI's.
    await page.focus('#matrix button.sort[data-sort="headroom"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#matrix table[data-sort="headroom"]', {timeout: TIMEOUT_MS});
    await waitForResults(page);
    shown = await matrixShown(page);
    equal(shown.sorted, 'headroom', 'the sorted heading');
    equal(await page.evaluate(() => document.activeElement.dataset.sort), 'headroom',
        'the focus stays on the heading');
    const byHeadroom = await cliJson('matrix', matrixBody(run, {...extra, sort: 'headroom'}));
    checkMatrix(shown, byHeadroom, 'by headroom');
    const rooms = shown.rows.map((r) => Number(r.headroom));
    check(rooms.every((v, i) => i === 0 || rooms[i - 1] >= v), 'headroom falls down the table');
    equal(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('matrix_sort'), 'headroom',
        'the URL keeps the sort');
    // A click on the time heading.
    await page.click('#matrix button.sort[data-sort="time"]');
    await page.waitForSelector('#matrix table[data-sort="time"]', {timeout: TIMEOUT_MS});
    await waitForResults(page);
    checkMatrix(await matrixShown(page), await cliJson('matrix',
        matrixBody(run, {...extra, sort: 'time'})), 'by time');
    // Filters: NVLink only, then a highest list price.
    await page.selectOption('#matrix_cards', 'nvlink');
    await waitForResults(page);
    await page.waitForFunction(() => !document.querySelector('#matrix tr[data-gpu="l40s"]'),
        null, {timeout: TIMEOUT_MS});
    const nvlink = await cliJson('matrix', matrixBody(run, {...extra, sort: 'time', nvlink: true}));
    checkMatrix(await matrixShown(page), nvlink, 'NVLink only');
    check(nvlink.rows.length < cli.rows.length && nvlink.rows.every((r) => r.link !== 'none'),
        'NVLink only keeps the linked cards');
    await page.selectOption('#matrix_cards', '');
    await page.fill('#matrix_max_price', '20000');
    await waitForResults(page);
    await page.waitForFunction(() => !document.querySelector('#matrix tr[data-gpu="h200-nvl"]'),
        null, {timeout: TIMEOUT_MS});
    const cheap = await cliJson('matrix', matrixBody(run, {...extra, sort: 'time', max_price: '20000'}));
    checkMatrix(await matrixShown(page), cheap, 'list price up to 20,000 USD');
    check(cheap.rows.every((r) => r.price_USD !== null && r.price_USD <= 20000),
        'the price filter keeps cards listed at 20,000 USD or less');
    await page.screenshot({path: join(SCREENSHOTS, `matrix-filtered-${size}.png`), fullPage: true});
    // A micro-batch 64 does not divide: the page asks for 72 sequences per step (3 × 8 × 3).
    await page.fill('#matrix_max_price', '');
    await page.fill('#micro_batch', '3');
    await waitForResults(page);
    await page.waitForSelector('#matrix tr[data-gpu="h200-nvl"]', {timeout: TIMEOUT_MS});
    const odd = await cliJson('matrix', {...matrixBody(run, {...extra, sort: 'time'}),
      micro_batch: '3', global_batch: '72'});
    checkMatrix(await matrixShown(page), odd, 'micro-batch 3');
    equal(await page.locator('#form-error').isHidden(), true, 'no error for micro-batch 3');
    await page.fill('#micro_batch', '1');
    await waitForResults(page);
    // A bad rental price: the server's message at the prices field.
    await page.fill('#matrix_prices', 'h100sxm=2');
    await waitForResults(page);
    const error = await page.locator('#error-matrix_prices').textContent();
    check(error.includes('did you mean h100-sxm'), `the prices field shows the error, got "${error}"`);
    await page.close();
    // German: numbers with a decimal comma, the same rows.
    const de = await openPage(env.context, env.origin,
        'model=llama-3.1-70b&method=lora&cards=h200-nvl:1&lang=de', viewport);
    await waitForMatrix(de);
    const deCli = await cliJson('matrix', {...matrixBody(run), lang: 'de'});
    checkMatrix(await matrixShown(de), deCli, 'German', 'de');
    const heading = await de.locator('#matrix-heading').textContent();
    equal(heading, 'Alle Karten', 'German heading');
    await de.locator('#matrix-heading').scrollIntoViewIfNeeded();
    await de.screenshot({path: join(SCREENSHOTS, `matrix-${size}-de.png`), fullPage: true});
    await de.locator('section[aria-labelledby="matrix-heading"]').screenshot(
        {path: join(SCREENSHOTS, `matrix-section-${size}-de.png`)});
    await de.close();
  });
}

// ---- issue 18: the user's runs, limits and derivations, exports, the phone's summary bar ------

// A file the page offers for download (a click on `selector`): its name and text.
async function downloaded(page, selector) {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return {name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8')};
}

async function waitFor(page, fn, arg) {
  await page.waitForFunction(fn, arg, {timeout: TIMEOUT_MS});
}

// A simple CSV reader for the page's exports (fields quoted when they hold , " or a line break).
function parseCsv(text) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') field += text[++i];
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), field = '';
    else if (c === '\n') row.push(field.replace(/\r$/, '')), rows.push(row), row = [], field = '';
    else field += c;
  }
  return rows;
}

const TEAM_HASH = 'model=qwen3-14b&method=qlora&rank=8&seq=4096&micro_batch=2' +
    '&recompute=selective&optimizer=adamw-8bit&cards=l40s:1,h100-sxm:2';

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`the user's runs (${size}): "add" keeps every setting, the plan and the report use the ` +
      'runs and cards of the page', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const page = await openPage(env.context, env.origin, TEAM_HASH, viewport);
    await waitForPlan(page);
    // The plan tries the form's cards, as POST /api/plan?gpu=... does for the seed's runs.
    const api = await fetch(`${env.origin}/api/plan?lang=en&gpu=l40s,h100-sxm`, {method: 'POST',
      headers: {'Content-Type': 'application/yaml'}, body: SEED_RUNS});
    const plan = await api.json();
    equal(api.status, 200, 'plan with the cards: API status');
    for (const run of plan.runs) {
      const row = page.locator(`#plan tr[data-run="${run.run}"]`);
      equal(await row.getAttribute('data-gpu'), run.recommendation?.gpu ?? null,
          `plan: card for "${run.run}"`);
      check(['l40s', 'h100-sxm', null].includes(await row.getAttribute('data-gpu')),
          `plan: "${run.run}" on a card the form did not choose`);
    }
    check((await page.textContent('#plan-cards')).includes('L40S'),
        'the plan names the cards it tried');
    // Add this run: every setting of the form, and its cards as the run's candidates.
    await page.click('#add-run');
    await waitForPlan(page);
    const runs = await page.inputValue('#runs');
    const added = '  - name: qwen3-14b qlora\n    model: qwen3-14b\n    method: qlora\n' +
        '    seq: 4096\n    rank: 8\n    optimizer: adamw-8bit\n    precision: bf16\n' +
        '    micro_batch: 2\n    recompute: selective\n    gpus: [l40s, h100-sxm]\n';
    check(runs === SEED_RUNS + added, `the added run, got:\n${runs.slice(SEED_RUNS.length)}`);
    const row = page.locator('#plan tr[data-run="qwen3-14b qlora"]');
    equal(await row.count(), 1, 'the added run is planned');
    // The same run once more gets a name of its own.
    await page.click('#add-run');
    await waitForPlan(page);
    check((await page.inputValue('#runs')).includes('- name: qwen3-14b qlora (2)\n'),
        'a second copy of the run is named apart');
    await page.fill('#runs', runs);
    await page.locator('#runs').dispatchEvent('input');
    await waitForPlan(page);
    // The report: the page posts its runs and cards; the file is `ftplan report` of them.
    await page.click('#report-html');
    await waitFor(page, () => document.body.dataset.reportBusy === 'false');
    const saved = await downloaded(page, '#report-save');
    equal(saved.name, 'ftplan-report-en.html', 'the report file name');
    const cli = await new Promise((done, fail) => {
      const child = execFile(BIN, ['report', '-', '--format', 'html', '--lang', 'en', '--gpu',
        'l40s', '--gpu', 'h100-sxm'], {maxBuffer: 64 << 20},
      (error, stdout) => (error ? fail(error) : done(stdout)));
      child.stdin.end(runs);
    });
    // The same file, but where the command line names its file the API names the request body.
    check(cli.includes('<code>standard input</code>') && saved.text ===
        cli.replace('<code>standard input</code>', '<code>the request body</code>'),
    'the report the page offers is `ftplan report` of its runs');
    check(saved.text.includes('qwen3-14b qlora') && !SEED_RUNS.includes('qwen3-14b'),
        'the report holds the run only the page has');
    // Opened in a tab: the report's own style applies (its hash is in the page's policy).
    const sheet = /<style>([\s\S]*?)<\/style>/.exec(saved.text)[1];
    const hash = createHash('sha256').update(sheet, 'utf8').digest('base64');
    check(readFileSync(join(ROOT, 'web/index.html'), 'utf8').includes(`'sha256-${hash}'`),
        `web/index.html's style-src lacks the report style sheet's hash 'sha256-${hash}'`);
    const [tab] = await Promise.all([env.context.waitForEvent('page'), page.click('#report-open')]);
    const tabErrors = [];
    tab.on('console', (m) => ['error', 'warning'].includes(m.type()) && tabErrors.push(m.text()));
    await tab.waitForLoadState('load');
    const style = await tab.evaluate(() => ({h1: document.querySelector('h1').textContent,
      styled: getComputedStyle(document.querySelector('main')).maxWidth,
      text: document.body.textContent.includes('qwen3-14b qlora')}));
    check(style.h1.includes('L40S') && style.text, `the opened report: ${JSON.stringify(style)}`);
    check(style.styled !== 'none', `the report's style sheet applies (main max-width ${style.styled})`);
    await tab.screenshot({path: join(SCREENSHOTS, `report-of-runs-${size}.png`)});
    await tab.close();
    equal(tabErrors, [], 'console of the opened report');
    await page.locator('#plan').scrollIntoViewIfNeeded();
    await page.screenshot({path: join(SCREENSHOTS, `runs-plan-report-${size}.png`)});
    // A bad runs document: the report says why, naming the key.
    await page.fill('#runs', 'runs:\n  - name: a\n    model: llama-3.1-8b\n    method: lorra\n');
    await page.click('#report-md');
    await waitFor(page, () => document.body.dataset.reportBusy === 'false');
    const error = await page.textContent('#report-result');
    check(error.includes('runs[0].method') || error.includes('lorra'),
        `the report's error names the key, got "${error}"`);
    await page.close();
  });

  test(`limits and derivations (${size}): /api/max as the CLI's, the peak's formula in a dialog`,
      async (env) => {
    const run = {model: 'llama-3.1-8b', method: 'lora'};
    const card = {gpu: 'rtx-pro-6000', count: 1};
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=lora&cards=rtx-pro-6000:1', viewport);
    await page.click('#max-micro-batch');
    await page.click('#max-seq');
    await waitForResults(page);
    for (const solve of ['micro-batch', 'seq']) {
      const cli = await cliJson('max', {...fitBody(run, card), lang: 'en', solve});
      const name = solve === 'seq' ? 'longest_seq' : 'largest_micro_batch';
      const shown = page.locator(`#limits [data-figure="${name}"]`);
      equal(Number(await shown.getAttribute('data-value')), cli.largest, `${solve}: largest`);
      const binding = page.locator('#limits td').nth(solve === 'seq' ? 1 : 0)
          .locator('[data-figure=binding]');
      equal(await binding.getAttribute('data-value'), cli.binding, `${solve}: what binds it`);
    }
    await page.locator('#limits').scrollIntoViewIfNeeded();
    await page.screenshot({path: join(SCREENSHOTS, `limits-${size}.png`)});
    // The peak's derivation: by keyboard, in a modal dialog, with the API's formula.
    const peak = page.locator('#memory button.explain[data-explain="memory.peak"]').first();
    await peak.focus();
    await page.keyboard.press('Enter');
    await waitFor(page, () => document.getElementById('explain-dialog').open &&
        document.getElementById('explain-dialog').dataset.busy === 'false');
    const api = (await apiJson(env.origin, '/api/explain', {figure: 'memory.peak',
      ...fitBody(run, card), lang: 'en', depth: 1})).data;
    const shown = await page.evaluate(() => ({
      formula: document.querySelector('#explain-body .formula')?.textContent,
      source: document.querySelector('#explain-body .source')?.textContent,
      value: Number(document.querySelector('#explain-body [data-figure=explained_value]')
          ?.dataset.value),
      focus: document.activeElement.closest('dialog')?.id}));
    equal(shown.formula, api.figures[0].formula, 'the peak\'s formula');
    equal(shown.source, api.figures[0].source, 'the peak\'s source');
    equal(shown.value, api.figures[0].value, 'the peak\'s value');
    equal(shown.focus, 'explain-dialog', 'the focus is in the dialog');
    await page.screenshot({path: join(SCREENSHOTS, `explain-peak-${size}.png`)});
    await page.keyboard.press('Escape');
    equal(await page.evaluate(() => document.getElementById('explain-dialog').open), false,
        'Escape closes the dialog');
    equal(await page.evaluate(() => document.activeElement.dataset.explain), 'memory.peak',
        'the focus returns to the figure');
    // The step time too.
    await page.locator('#step button.explain[data-explain="perf.step_seconds"]').first().click();
    await waitFor(page, () => document.getElementById('explain-dialog').dataset.busy === 'false');
    check((await page.textContent('#explain-body')).includes('perf.step_seconds'),
        'the step time\'s derivation');
    await page.click('#explain-close');
    await page.close();
  });

  test(`exports (${size}): each table as CSV and JSON, equal to the table's figures`,
      async (env) => {
    const page = await openPage(env.context, env.origin, 'cards=rtx-pro-6000:1,h200-nvl:1',
        viewport);
    await waitForMatrix(page);
    await waitForPlan(page);
    await page.click('#max-micro-batch');
    await waitForResults(page);
    // Every table of the results has its two buttons.
    const counts = await page.evaluate(() => ({
      tables: document.querySelectorAll('#results table').length,
      csv: document.querySelectorAll('#results button.export[data-export=csv]').length,
      json: document.querySelectorAll('#results button.export[data-export=json]').length}));
    check(counts.tables >= 6, `tables shown: ${counts.tables}`);
    equal([counts.csv, counts.json], [counts.tables, counts.tables], 'export buttons per table');
    // The scaling table: its figures are the API's sweep.
    const body = {...fitBody({model: 'llama-3.1-8b', method: 'lora'}, {gpu: 'x', count: 1})};
    delete body.gpus;
    const sweep = await apiJson(env.origin, '/api/scale',
        {...body, lang: 'en', gpu: ['rtx-pro-6000', 'h200-nvl'], sweep: true});
    const json = await downloaded(page, '#scale button.export[data-export=json]');
    equal(json.name, 'ftplan-scaling.json', 'the JSON file name');
    const table = JSON.parse(json.text);
    for (const p of sweep.data.sweep.filter((x) => x.verdict !== 'does-not-fit')) {
      const row = table.rows.find((r) => r[table.columns[0]].startsWith(`${p.gpus} `));
      const cell = row?.[table.columns[['rtx-pro-6000', 'h200-nvl'].indexOf(p.gpu) + 1]];
      equal(cell?.tokens_per_second, p.tokens_per_second, `scaling ${p.gpu} × ${p.gpus}: tokens/s`);
      equal(cell?.scaling_efficiency, p.scaling_efficiency, `scaling ${p.gpu} × ${p.gpus}: efficiency`);
    }
    const csv = parseCsv((await downloaded(page, '#scale button.export[data-export=csv]')).text);
    const header = csv[0];
    const column = header.indexOf(`${table.columns[1]}: tokens_per_second`);
    check(column > 0, `CSV header: ${header}`);
    equal(csv.slice(1).map((r) => Number(r[column])),
        table.rows.map((r) => r[table.columns[1]].tokens_per_second ?? 0), 'CSV vs JSON');
    // The matrix: a row per card with the API's memory and fewest cards.
    const matrix = JSON.parse((await downloaded(page,
        '#matrix button.export[data-export=json]')).text);
    const shownMatrix = await matrixShown(page);
    equal(matrix.rows.length, shownMatrix.rows?.length ?? shownMatrix.length, 'matrix rows');
    const memory = matrix.columns.find((c) => c === 'memory');
    check(memory && matrix.rows.every((r) => typeof r[memory] === 'number'),
        'the matrix\'s memory column holds numbers');
    // The inference sweep and the limits: each row's figures as the table's data-values.
    for (const [id, selector] of [['infer', '#infer'], ['limits', '#limits'], ['plan', '#plan']]) {
      const data = JSON.parse((await downloaded(page,
          `${selector} button.export[data-export=json]`)).text);
      const values = await page.locator(`${selector} table`).first().evaluate((t) =>
        [...t.querySelectorAll('tbody [data-figure]')].map((el) => el.dataset.value)
            .filter((v) => v !== '' && Number.isFinite(Number(v))).map(Number));
      const exported = JSON.stringify(data.rows);
      check(values.length > 0 && values.every((v) => exported.includes(String(v))),
          `${id}: every figure of the table is in its JSON`);
      equal(data.rows.length, await page.locator(`${selector} table`).first()
          .locator('tbody tr').count(), `${id}: rows`);
    }
    // German: the CSV keeps decimal points and commas between fields.
    await page.selectOption('#lang', 'de');
    await waitForResults(page);
    const german = (await downloaded(page, '#scale button.export[data-export=csv]')).text;
    check(/\d\.\d/.test(german) && !/\d,\d{3}\b/.test(german.split('\n')[1] ?? ''),
        `German CSV in decimal points: ${german.slice(0, 200)}`);
    await page.locator('#scale').scrollIntoViewIfNeeded();
    await page.screenshot({path: join(SCREENSHOTS, `exports-${size}.png`)});
    await page.close();
  });

  test(`summary bar (${size}): in view after an edit, with the new verdict`, async (env) => {
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=lora&cards=rtx-pro-6000:1', viewport);
    const before = await page.locator('#summary [data-verdict]').first().getAttribute('data-verdict');
    equal(before, 'fits', 'the summary before the edit');
    await page.selectOption('#method', 'full');
    await page.focus('#method');
    await waitForResults(page);
    const cli = await cliJson('fit', fitBody({model: 'llama-3.1-8b', method: 'full'},
        {gpu: 'rtx-pro-6000', count: 1}));
    const bar = await page.locator('#summary').evaluate((el) => {
      const box = el.getBoundingClientRect();
      return {top: box.top, bottom: box.bottom, height: box.height,
        position: getComputedStyle(el).position,
        verdict: el.querySelector('[data-verdict]')?.dataset.verdict,
        text: el.textContent,
        step: el.querySelector('[data-figure=summary_step_seconds]')?.dataset.value};
    });
    equal(bar.verdict, cli.verdict, 'the summary\'s verdict after the edit');
    check(bar.text.includes(`needs ${gbText(-cli.memory_GB.headroom)} more`),
        `the summary's shortfall: "${bar.text}"`);
    check(Number(bar.step) > 0, 'the summary shows the step time');
    if (viewport.width < 640) {
      equal(bar.position, 'fixed', 'the bar stays at the bottom of a phone');
      check(bar.top >= 0 && bar.bottom <= viewport.height + 0.5 && bar.height < viewport.height / 3,
          `the bar is within the screen: ${JSON.stringify(bar)}`);
      // The method select the reader edited is not hidden under the bar.
      const method = await page.locator('#method').evaluate((el) => el.getBoundingClientRect());
      check(method.bottom <= bar.top || method.top >= bar.bottom || method.top < 0,
          'the bar covers the edited field');
    }
    await page.screenshot({path: join(SCREENSHOTS, `summary-bar-${size}.png`)});
    await page.close();
  });
}

// ---- memory units (GB, GiB, MiB), advanced options, accessibility --------------------------------

// A memory figure as the page shows it in `unit`: GB from the API's GB figure (1e9 bytes, as the
// CLI prints it), GiB and MiB from its exact bytes; MiB whole and without a group separator, as
// nvidia-smi prints it.
function memoryText(gb, bytes, unit, lang = 'en') {
  const value = unit === 'GB' ? gb : bytes / {GiB: 2 ** 30, MiB: 2 ** 20}[unit];
  const digits = unit === 'MiB' ? 0 : 1;
  const text = new Intl.NumberFormat(lang === 'de' ? 'de-DE' : 'en-US', {minimumFractionDigits: digits,
    maximumFractionDigits: digits, useGrouping: unit !== 'MiB'}).format(value);
  return `${text} ${unit}`;
}

// Every memory figure of the results, with its raw value (GB), its bytes and its text.
async function memoryFigures(page) {
  return page.evaluate(() => {
    const pick = (selector) => [...document.querySelectorAll(selector)].map((el) =>
      ({value: Number(el.dataset.value), bytes: Number(el.dataset.bytes), text: el.textContent}));
    return {
      card: pick('#memory article dl [data-figure]'),
      legend: pick('#memory article .legend [data-figure]'),
      mig: pick('#mig tr[data-profile] td:nth-child(2) [data-figure], #mig tr[data-profile] td:nth-child(3) [data-figure]'),
      matrix: pick('#matrix tbody [data-figure="memory_GB"]'),
      headroom: pick('#matrix tbody [data-figure="headroom"]'),
    };
  });
}

function checkUnit(figures, unit, lang, what) {
  for (const part of ['card', 'legend', 'mig', 'matrix']) {
    check(figures[part].length > 0, `${what}: the page shows ${part} memory figures`);
    for (const f of figures[part]) {
      check(Number.isInteger(f.bytes), `${what}: a ${part} figure has its bytes (${f.bytes})`);
      equal(f.text, memoryText(f.value, f.bytes, unit, lang), `${what}: a ${part} figure in ${unit}`);
    }
  }
  check(figures.headroom.length > 0, `${what}: the matrix shows headroom`);
  for (const f of figures.headroom) {
    const text = memoryText(Math.abs(f.value), Math.abs(f.bytes), unit, lang);
    check(f.text.includes(text), `${what}: the matrix's headroom "${f.text}" in ${unit} (${text})`);
  }
}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`memory units (${size}): GiB and MiB convert every memory figure, kept in the URL`,
      async (env) => {
        mkdirSync(SCREENSHOTS, {recursive: true});
        const run = {model: 'llama-3.1-8b', method: 'qlora'};
        const page = await openPage(env.context, env.origin,
            'model=llama-3.1-8b&method=qlora&cards=h200-nvl:1&unit=GiB', viewport);
        await waitForMatrix(page);
        equal(await page.inputValue('#unit'), 'GiB', 'the unit from the URL');
        const cli = await cliJson('fit', fitBody(run, {gpu: 'h200-nvl', count: 1}));
        const peak = await page.locator('#memory [data-figure=peak]');
        equal(Number(await peak.getAttribute('data-value')), cli.memory_GB.peak,
            'the raw value stays the API\'s GB');
        equal(await peak.textContent(), memoryText(cli.memory_GB.peak, cli.memory_bytes.peak, 'GiB'),
            'the peak in GiB');
        check(Math.abs(cli.memory_GB.peak * 1e9 / 2 ** 30 - cli.memory_GB.peak) > 0.1,
            'GiB and GB differ for this figure');
        // The peak's range: the model's error spread, widened to the allocator's reserve.
        for (const [i, end] of [[0, 'peak_low'], [1, 'peak_high']]) {
          const shown = page.locator(`#memory [data-figure=${end}]`);
          equal(Number(await shown.getAttribute('data-value')), cli.memory_GB.peak_range[i],
              `${end}: the API's peak_range`);
          equal(await shown.textContent(),
              memoryText(cli.memory_GB.peak_range[i], cli.memory_bytes.peak_range[i], 'GiB'),
              `${end} in GiB`);
        }
        check(cli.memory_GB.peak_range[0] < cli.memory_GB.peak &&
            cli.memory_GB.peak < cli.memory_GB.peak_range[1], 'the peak lies inside its range');
        checkUnit(await memoryFigures(page), 'GiB', 'en', 'GiB');
        // The MIG profile named after 141 GB shows the data's bytes, and a note says why.
        const api = await apiJson(env.origin, '/api/mig', (({gpus, ...b}) => b)(
            fitBody(run, {gpu: 'h200-nvl', count: 1})));
        const whole = api.data.instances.find((i) => i.profile === '7g.141gb');
        check(whole, 'the H200 NVL has a 7g.141gb profile');
        equal(await page.locator('#mig tr[data-profile="7g.141gb"] [data-figure=memory]').textContent(),
            memoryText(whole.capacity_GB, whole.capacity_bytes, 'GiB'), 'the 7g.141gb instance in GiB');
        const note = await page.locator('#mig-units-note');
        check(await note.isVisible() && (await note.textContent()).includes('7g.141gb'),
            'the note on rounded profile names is shown');
        await page.screenshot({path: join(SCREENSHOTS, `units-gib-${size}.png`), fullPage: true});
        // MiB: no request, every figure again, and the URL keeps it.
        const before = env.requests.length;
        await page.selectOption('#unit', 'MiB');
        await waitForResults(page);
        equal(env.requests.length, before, 'a unit change asks the server nothing');
        equal(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('unit'), 'MiB',
            'the URL keeps the unit');
        checkUnit(await memoryFigures(page), 'MiB', 'en', 'MiB');
        const option = await page.locator('#cards select option[value="h200-nvl"]').textContent();
        check(option.endsWith(' MiB'), `the card menu shows MiB: "${option}"`);
        await page.screenshot({path: join(SCREENSHOTS, `units-mib-${size}.png`), fullPage: true});
        // A reload restores it; German uses decimal commas.
        const link = new URLSearchParams(new URL(page.url()).hash.slice(1));
        link.set('unit', 'GiB');
        link.set('lang', 'de');
        await page.close();
        const de = await openPage(env.context, env.origin, link.toString(), viewport);
        await waitForMatrix(de);
        equal(await de.inputValue('#unit'), 'GiB', 'the unit after a reload');
        checkUnit(await memoryFigures(de), 'GiB', 'de', 'German GiB');
        await de.close();
      });
}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`advanced options (${size}): two set give \`ftplan fit\`'s figures with them, sent only ` +
      'when changed, kept in the URL', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const run = {model: 'llama-3.1-8b', method: 'full', cards: [{gpu: 'rtx-pro-6000', count: 1}]};
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=full&cards=rtx-pro-6000:1', viewport);
    const bodies = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
    });
    const advanced = ['offload_optimizer', 'grad_accum', 'stack', 'attention', 'compile', 'loss',
      'peak', 'pure_bf16', 'offload_params', 'offload_activations', 'no_compile', 'lora_dropout',
      'quant_block', 'no_double_quant', 'recompute_layers'];
    equal(await page.locator('#advanced').evaluate((el) => el.open), false,
        'the advanced group starts collapsed');
    // Defaults shown as the CLI's.
    equal(await page.inputValue('#grad_accum'), '1', 'grad_accum starts at the CLI\'s 1');
    equal(await page.inputValue('#stack'), 'hf', 'the stack starts at the CLI\'s hf');
    // The page offers every stack the CLI knows, and no other.
    const cliStacks = (await cliJson('stacks', {})).stacks.map((s) => s.name).sort();
    const pageStacks = (await page.locator('#stack option').evaluateAll(
        (options) => options.map((o) => o.value))).sort();
    equal(JSON.stringify(pageStacks), JSON.stringify(cliStacks),
        'the stack menu lists the CLI\'s stacks');
    equal(await page.inputValue('#peak'), 'reserved', 'the peak starts at the CLI\'s reserved');
    await page.fill('#micro_batch', '2');
    await waitForResults(page);
    const plain = bodies.at(-1);
    check(plain && advanced.every((key) => !(key in plain)),
        `an unchanged advanced option is not sent: ${JSON.stringify(plain)}`);
    await page.fill('#micro_batch', '1');
    await page.click('#advanced > summary');
    await page.check('#offload_optimizer');
    await page.fill('#grad_accum', '4');
    await waitForResults(page);
    const sent = bodies.at(-1);
    equal([sent.offload_optimizer, sent.grad_accum], [true, '4'], 'the two options in the body');
    check(advanced.filter((key) => key in sent).length === 2,
        `only the changed options are sent: ${JSON.stringify(sent)}`);
    const base = fitBody(run, run.cards[0]);
    const [cli, plainCli] = await Promise.all([
      cliJson('fit', {...base, offload_optimizer: true, grad_accum: '4'}), cliJson('fit', base)]);
    check(cli.memory_GB.peak !== plainCli.memory_GB.peak,
        'the options change the peak (else this test would prove nothing)');
    const shown = await memoryShown(page, 'rtx-pro-6000', 1);
    equal(shown.verdict, cli.verdict, 'the verdict with the options');
    for (const key of ['capacity', 'model_states', 'peak', 'free', 'headroom']) {
      equal(shown.figures[key]?.value, cli.memory_GB[key], `${key} with the options`);
      equal(shown.figures[key]?.text, gbText(cli.memory_GB[key]), `${key} as shown`);
    }
    if ('states_on_card' in shown.figures) {
      equal(shown.figures.states_on_card.value, cli.memory_GB.states_on_card, 'states on the card');
    }
    const params = new URLSearchParams(new URL(page.url()).hash.slice(1));
    equal([params.get('offload_optimizer'), params.get('grad_accum')], ['on', '4'],
        'the URL keeps the two options');
    check(!params.has('stack') && !params.has('peak'), 'the URL leaves out unchanged options');
    await page.screenshot({path: join(SCREENSHOTS, `advanced-${size}.png`), fullPage: true});
    // The link opens the group with the options set, and the same figures.
    const hash = new URL(page.url()).hash.slice(1);
    await page.close();
    const again = await openPage(env.context, env.origin, hash, viewport);
    equal(await again.locator('#advanced').evaluate((el) => el.open), true,
        'a link with advanced options opens their group');
    equal(await again.isChecked('#offload_optimizer'), true, 'the switch from the URL');
    equal(await again.inputValue('#grad_accum'), '4', 'grad_accum from the URL');
    equal((await memoryShown(again, 'rtx-pro-6000', 1)).figures.peak?.value, cli.memory_GB.peak,
        'the peak after the link');
    await again.close();
  });
}

// Unsloth offloads its checkpoints by default; the page's switch keeps them on the card, as the
// command line's --no-offload-activations does, and gives `ftplan fit`'s figures.
test('unsloth: its offloaded checkpoints by default, on the card with the switch, as the CLI',
async (env) => {
  const run = {model: 'llama-3.1-8b', method: 'qlora', cards: [{gpu: 'l40s', count: 1}]};
  const page = await openPage(env.context, env.origin, 'model=llama-3.1-8b&method=qlora&cards=l40s:1');
  const bodies = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
  });
  await page.click('#advanced > summary');
  await page.selectOption('#stack', 'unsloth');
  await waitForResults(page);
  check(!('no_offload_activations' in bodies.at(-1)), 'the switch is not sent while off');
  await page.check('#no_offload_activations');
  await waitForResults(page);
  equal(bodies.at(-1).no_offload_activations, true, 'the switch in the body');
  const base = {...fitBody(run, run.cards[0]), stack: 'unsloth'};
  const [onCard, offloaded] = await Promise.all([
    cliJson('fit', {...base, no_offload_activations: true}), cliJson('fit', base)]);
  equal([onCard.options.offload_activations, offloaded.options.offload_activations], [false, true],
      'the CLI offloads by default on unsloth and not with the switch');
  check(onCard.memory_GB.peak > offloaded.memory_GB.peak,
      'activations kept on the card raise the peak');
  equal((await memoryShown(page, 'l40s', 1)).figures.peak?.value, onCard.memory_GB.peak,
      'the page shows the peak with activations on the card');
  await page.close();
});

// How the optimizer update runs: the stack's unless chosen; foreach gives the CLI's figures, with
// the update's temporaries as its peak for a full fine-tune, and becomes a run's key.
test('optimizer update: the stack\'s by default, foreach from the page as the CLI\'s ' +
    '--optimizer-impl', async (env) => {
  const run = {model: 'llama-3.2-3b', method: 'full', cards: [{gpu: 'h200-nvl', count: 1}]};
  const page = await openPage(env.context, env.origin,
      'model=llama-3.2-3b&method=full&cards=h200-nvl:1');
  const bodies = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
  });
  await page.click('#advanced > summary');
  equal(await page.inputValue('#optimizer_impl'), '', 'the stack\'s implementation by default');
  await page.fill('#micro_batch', '2');
  await waitForResults(page);
  check(!('optimizer_impl' in bodies.at(-1)), 'not sent while the stack\'s');
  await page.selectOption('#optimizer_impl', 'foreach');
  await waitForResults(page);
  equal(bodies.at(-1).optimizer_impl, 'foreach', 'the choice in the body');
  const base = {...fitBody(run, run.cards[0]), micro_batch: '2'};
  const [foreach, fused] = await Promise.all([
    cliJson('fit', {...base, optimizer_impl: 'foreach'}), cliJson('fit', base)]);
  equal([foreach.options.optimizer_impl, fused.options.optimizer_impl], ['foreach', 'fused'],
      'the CLI runs hf fused unless told');
  check(foreach.memory_GB.peak > fused.memory_GB.peak, 'the foreach update raises the peak');
  equal((await memoryShown(page, 'h200-nvl', 1)).figures.peak?.value, foreach.memory_GB.peak,
      'the page shows the peak with the foreach update');
  const params = new URLSearchParams(new URL(page.url()).hash.slice(1));
  equal(params.get('optimizer_impl'), 'foreach', 'the URL keeps the choice');
  await page.close();
});

// How a mixture-of-experts layer runs its experts: the stack's unless chosen; one after the other
// gives the CLI's --experts-impl loop figures.
test('experts: the stack\'s by default, one after the other from the page as the CLI\'s ' +
    '--experts-impl loop', async (env) => {
  const run = {model: 'mixtral-8x7b', method: 'qlora', cards: [{gpu: 'h200-nvl', count: 1}]};
  const page = await openPage(env.context, env.origin,
      'model=mixtral-8x7b&method=qlora&cards=h200-nvl:1');
  const bodies = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
  });
  await page.click('#advanced > summary');
  equal(await page.inputValue('#experts_impl'), '', 'the stack\'s experts by default');
  await page.selectOption('#experts_impl', 'loop');
  await waitForResults(page);
  equal(bodies.at(-1).experts_impl, 'loop', 'the choice in the body');
  const base = fitBody(run, run.cards[0]);
  const [loop, grouped] = await Promise.all([
    cliJson('fit', {...base, experts_impl: 'loop'}), cliJson('fit', base)]);
  equal([loop.options.experts_impl, grouped.options.experts_impl], ['loop', 'grouped'],
      'the CLI runs hf grouped unless told');
  check(loop.memory_GB.peak < grouped.memory_GB.peak,
      'one expert at a time holds fewer activation gradients');
  equal((await memoryShown(page, 'h200-nvl', 1)).figures.peak?.value, loop.memory_GB.peak,
      'the page shows the peak with the experts one after the other');
  await page.close();
});

// Older bitsandbytes kept each 4-bit layer's input: the page's switch, sent only for QLoRA, gives
// the CLI's --quant-keeps-input figures and becomes a run's key.
test('quantized layers that keep their inputs: the switch as the CLI\'s --quant-keeps-input',
async (env) => {
  const run = {model: 'llama-3.1-8b', method: 'qlora', cards: [{gpu: 'l40s', count: 1}]};
  const page = await openPage(env.context, env.origin, 'model=llama-3.1-8b&method=qlora&cards=l40s:1');
  const bodies = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
  });
  await page.click('#advanced > summary');
  await page.fill('#micro_batch', '2');
  await page.selectOption('#recompute', 'none');  // every block's inputs kept: they count
  await waitForResults(page);
  check(!('quant_keeps_input' in bodies.at(-1)), 'the switch is not sent while off');
  await page.check('#quant_keeps_input');
  await waitForResults(page);
  equal(bodies.at(-1).quant_keeps_input, true, 'the switch in the body');
  const base = {...fitBody(run, run.cards[0]), micro_batch: '2', recompute: 'none'};
  const [kept, now] = await Promise.all([
    cliJson('fit', {...base, quant_keeps_input: true}), cliJson('fit', base)]);
  check(kept.memory_GB.peak > now.memory_GB.peak, 'the kept inputs raise the peak');
  equal((await memoryShown(page, 'l40s', 1)).figures.peak?.value, kept.memory_GB.peak,
      'the page shows the peak with the inputs kept');
  await page.close();
});

// A memory switch of the advanced options, with one field set beside it: not sent while off, sent
// when checked, and the page then shows the CLI's peak with the option, which is lower.
async function memorySwitchAsCli(env, {run, hash, field, value, box, extra, why}) {
  const card = run.cards[0];
  const page = await openPage(env.context, env.origin, hash);
  const bodies = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
  });
  await page.click('#advanced > summary');
  await page.fill(`#${field}`, value);
  await waitForResults(page);
  check(!(box in bodies.at(-1)), 'the switch is not sent while off');
  await page.check(`#${box}`);
  await waitForResults(page);
  equal(bodies.at(-1)[box], true, 'the switch in the body');
  const base = {...fitBody(run, card), ...extra, [field]: value};
  const [on, off] = await Promise.all([cliJson('fit', {...base, [box]: true}), cliJson('fit', base)]);
  check(on.memory_GB.peak < off.memory_GB.peak, why);
  equal((await memoryShown(page, card.gpu, card.count)).figures.peak?.value, on.memory_GB.peak,
      `the page shows the peak with ${box}`);
  await page.close();
}

// FSDP with gradient accumulation: the Trainer accumulates unsharded gradients in no_sync unless
// Accelerate's sync_each_batch is on. The page's switch gives the CLI's --sync-each-batch figures.
test('gradients synced every micro-batch: the switch as the CLI\'s --sync-each-batch',
    (env) => memorySwitchAsCli(env, {
      run: {model: 'llama-3.1-8b', method: 'full', cards: [{gpu: 'h100-sxm', count: 8}]},
      hash: 'model=llama-3.1-8b&method=full&cards=h100-sxm:8', field: 'grad_accum', value: '4',
      box: 'sync_each_batch', extra: {shard: 'auto'}, why: 'sharded gradients lower the peak'}));

// The Trainer's reentrant checkpoints around all-frozen FSDP1 units keep each finished block's
// input to the end of the backward pass; the page's switch gives the CLI's --non-reentrant figures.
test('non-reentrant checkpoints: the switch as the CLI\'s --non-reentrant',
    (env) => memorySwitchAsCli(env, {
      run: {model: 'mistral-7b-v0.1', method: 'lora', cards: [{gpu: 'h100-sxm', count: 2}]},
      hash: 'model=mistral-7b-v0.1&method=lora&cards=h100-sxm:2&shard=fsdp', field: 'micro_batch',
      value: '4', box: 'non_reentrant', extra: {shard: 'fsdp'},
      why: 'no block input kept to the end: a lower peak'}));

// The options that describe a real run's data and base (issue: every option on the page): the
// quantized base's format, modules trained in full, lm_head as a target, the mean sample length,
// packing and the optimizer step in backward give `ftplan fit` and `ftplan step`'s figures, are
// sent only for the methods and objectives that read them, and become a run's keys.
test('the options of real runs: base format, modules trained in full, lm_head as a target, mean ' +
    'length, pasted lengths, packing, optimizer in backward give `ftplan fit` and `ftplan step`\'s ' +
    'figures',
async (env) => {
  const run = {model: 'llama-3.1-8b', method: 'qlora', cards: [{gpu: 'l40s', count: 1}]};
  const page = await openPage(env.context, env.origin, 'model=llama-3.1-8b&method=qlora&cards=l40s:1');
  const bodies = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/api/fit')) bodies.push(JSON.parse(request.postData()));
  });
  const added = ['base_quant', 'train_modules', 'seq_mean', 'packing', 'padding_free',
    'optimizer_in_backward', 'quant_block'];
  await page.fill('#micro_batch', '2');
  await waitForResults(page);
  check(added.every((key) => !(key in bodies.at(-1))),
      `unchanged, none is sent: ${JSON.stringify(bodies.at(-1))}`);
  equal(await page.inputValue('#base_quant'), 'nf4', 'the base starts at the CLI\'s nf4');
  await page.click('#advanced > summary');
  await page.selectOption('#base_quant', 'gptq-int4');
  await page.selectOption('#train_modules', 'lm_head');
  await page.fill('#seq_mean', '700');
  await page.check('#packing');
  await page.check('#optimizer_in_backward');
  await page.check('input[name=target][value=embed_tokens]');
  await waitForResults(page);
  const sent = bodies.at(-1);
  equal([sent.base_quant, sent.train_modules, sent.seq_mean, sent.packing,
    sent.optimizer_in_backward, sent.targets],
  ['gptq-int4', 'lm_head', '700', true, true, 'q,k,v,o,gate,up,down,embed_tokens'],
  'the options in the body');
  const options = {base_quant: 'gptq-int4', train_modules: 'lm_head', seq_mean: '700',
    packing: true, optimizer_in_backward: true, targets: 'q,k,v,o,gate,up,down,embed_tokens'};
  const body = {...fitBody(run, run.cards[0]), micro_batch: '2'};
  const stepBody = {...body};
  delete stepBody.gpus;
  const [fit, plainFit, step, plainStep] = await Promise.all([
    cliJson('fit', {...body, ...options}), cliJson('fit', body),
    cliJson('step', {...stepBody, ...options}), cliJson('step', stepBody)]);
  check(fit.memory_GB.peak !== plainFit.memory_GB.peak, 'the options change the peak');
  check(step.step_seconds !== plainStep.step_seconds, 'the options change the step');
  const shown = await memoryShown(page, 'l40s', 1);
  for (const key of ['model_states', 'peak', 'headroom']) {
    equal(shown.figures[key]?.value, fit.memory_GB[key], `${key} with the options`);
  }
  const shownStep = await stepShown(page, 'l40s');
  equal(Number(shownStep.figures.step_seconds?.value), step.step_seconds, 'the step with the options');
  // Kept in the link.
  const params = new URLSearchParams(new URL(page.url()).hash.slice(1));
  equal([params.get('base_quant'), params.get('seq_mean'), params.get('packing')],
      ['gptq-int4', '700', 'on'], 'the URL keeps the options');
  // A run of the plan with the same keys, which the server reads.
  await page.fill('#runs', SEED_RUNS);
  await page.locator('#runs').dispatchEvent('input');
  await page.click('#add-run');
  await waitForPlan(page);
  const all = (await page.inputValue('#runs')).slice(SEED_RUNS.length);
  for (const line of ['base_quant: gptq-int4', 'train_modules: lm_head', 'seq_mean: 700',
    'packing: true', 'optimizer_in_backward: true',
    'targets: q,k,v,o,gate,up,down,embed_tokens']) {
    check(all.includes(`\n    ${line}\n`), `the run lacks "${line}":\n${all}`);
  }
  equal(await page.locator('#error-runs').isVisible(), false, 'the server reads every key of the run');
  // Pasted lengths (one count per line) replace the sequence length: the longest sets the peak,
  // as `ftplan fit --lengths FILE` gives it; the mean length goes (it and a lengths file exclude
  // each other).
  await page.fill('#seq_mean', '');
  await page.fill('#lengths', '100\n300\n100\n100\n');
  await waitForResults(page);
  const withLengths = bodies.at(-1);
  check(withLengths.lengths === '100\n300\n100\n100\n' && !('seq' in withLengths),
      `the lengths are sent in place of seq: ${JSON.stringify(withLengths)}`);
  equal(await page.locator('#seq').isDisabled(), true, 'the sequence length rests beside lengths');
  mkdirSync(SCREENSHOTS, {recursive: true});
  await page.locator('#advanced').screenshot({path: join(SCREENSHOTS, 'real-run-options.png')});
  const lengthsFile = join(mkdtempSync(join(tmpdir(), 'ftplan-lengths-')), 'lengths.txt');
  writeFileSync(lengthsFile, '100\n300\n100\n100\n');
  const lengthOptions = {...options};
  delete lengthOptions.seq_mean;
  const bodyNoSeq = {...body};
  delete bodyNoSeq.seq;
  const lengthsFit = await cliJson('fit', {...bodyNoSeq, ...lengthOptions, lengths: lengthsFile});
  equal(lengthsFit.seq, 300, 'the CLI takes the longest');
  equal((await memoryShown(page, 'l40s', 1)).figures.peak?.value, lengthsFit.memory_GB.peak,
      'the peak with the pasted lengths');
  await page.click('#add-run');
  await waitForPlan(page);
  const withRun = (await page.inputValue('#runs')).slice(SEED_RUNS.length);
  check(/\n {4}seq: 300 {2}#/.test(withRun) && withRun.includes(`\n    seq_mean: ${lengthsFit.seq_mean}\n`),
      `the run keeps the longest and the mean of the lengths:\n${withRun}`);
  equal(await page.locator('#error-runs').isVisible(), false, 'the server reads that run too');
  await page.fill('#lengths', '');
  await waitForResults(page);
  equal(await page.locator('#seq').isDisabled(), false, 'without lengths the field is back');
  // Methods and objectives that do not read them: a full fine-tune sends no base format or
  // modules to train; an online objective no mean length or packing (its fields are hidden).
  await page.selectOption('#method', 'full');
  await waitForResults(page);
  check(!('base_quant' in bodies.at(-1)) && !('train_modules' in bodies.at(-1)),
      `full sends no adapter options: ${JSON.stringify(bodies.at(-1))}`);
  await page.selectOption('#objective', 'grpo');
  await waitForResults(page);
  check(await page.locator('#seq_mean').isHidden(), 'an online objective hides the mean length');
  check(!('seq_mean' in bodies.at(-1)) && !('packing' in bodies.at(-1)),
      `an online objective sends no lengths: ${JSON.stringify(bodies.at(-1))}`);
  equal(await page.locator('#form-error').isVisible(), false, 'no error for the online objective');
  await page.close();
});

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`removing a card row (${size}): the focus moves to the next row's menu, or to "Add a card"`,
      async (env) => {
        mkdirSync(SCREENSHOTS, {recursive: true});
        const page = await openPage(env.context, env.origin,
            'model=llama-3.1-8b&method=lora&cards=rtx-pro-6000:1,h200-nvl:2,l40s:1', viewport);
        const rows = page.locator('#cards > li');
        equal(await rows.count(), 3, 'three card rows');
        // The first row's button, by keyboard: the row that takes its place has the focus.
        await rows.nth(0).locator('button.remove').focus();
        await page.keyboard.press('Enter');
        await waitForResults(page);
        equal(await rows.count(), 2, 'two rows after the removal');
        const first = await page.evaluate(() => ({
          tag: document.activeElement.tagName, value: document.activeElement.value,
          label: document.activeElement.getAttribute('aria-label'),
          row: [...document.querySelectorAll('#cards > li')]
              .indexOf(document.activeElement.closest('li'))}));
        equal(first, {tag: 'SELECT', value: 'h200-nvl', label: 'Card 1', row: 0},
            'the focus after removing the first row');
        const ring = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
        check(ring !== 'none', `the focused menu shows a focus ring (${ring})`);
        equal(await page.locator('#memory article').count(), 2, 'two results after the removal');
        // The last row's button, by pointer: no row follows, so "Add a card" has the focus.
        await rows.nth(1).locator('button.remove').click();
        await waitForResults(page);
        equal(await page.evaluate(() => document.activeElement.id), 'add-card',
            'the focus after removing the last row');
        equal(await page.locator('#memory article').count(), 1, 'one result after the removal');
        await page.screenshot({path: join(SCREENSHOTS, `card-removed-${size}.png`)});
        await page.close();
      });

  test(`memory bar (${size}): every part readable without hover, in a visible legend and the ` +
      'bar\'s accessible name', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const run = {model: 'llama-3.1-8b', method: 'qlora', cards: [{gpu: 'rtx-pro-6000', count: 1}]};
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=qlora&cards=rtx-pro-6000:1', viewport);
    const cli = await cliJson('fit', fitBody(run, run.cards[0]));
    const m = cli.memory_GB;
    const parts = Object.entries({...m.breakdown, activations: m.activations,
      overhead: m.overhead}).filter(([, value]) => value > 0);
    check(parts.length >= 4, `the run has several parts: ${JSON.stringify(parts)}`);
    const box = page.locator('#memory article[data-gpu="rtx-pro-6000"]');
    const shown = await box.evaluate((el) => ({
      name: el.querySelector('.bar').getAttribute('aria-label'),
      role: el.querySelector('.bar').getAttribute('role'),
      segments: el.querySelectorAll('.bar .seg').length,
      legend: [...el.querySelectorAll('.legend li')].map((li) => {
        const r = li.getBoundingClientRect();
        const value = li.querySelector('[data-figure]');
        return {text: li.textContent, figure: value?.dataset.figure, value: Number(value?.dataset.value),
          left: r.left, right: r.right, height: r.height,
          size: parseFloat(getComputedStyle(li).fontSize),
          swatch: getComputedStyle(li.querySelector('.swatch')).backgroundColor};
      }),
    }));
    equal(shown.role, 'img', 'the bar is an image with a name');
    equal(shown.legend.length, shown.segments, 'a legend entry for every segment');
    equal(shown.legend.map((x) => [x.figure, x.value]).sort(),
        parts.map(([key, value]) => [key, value]).sort(), 'the legend\'s parts are the CLI\'s');
    for (const entry of shown.legend) {
      check(entry.text.endsWith(gbText(entry.value)), `the legend shows the value: "${entry.text}"`);
      check(shown.name.includes(entry.text.trim()),
          `the bar's name "${shown.name}" says "${entry.text.trim()}"`);
      check(entry.height > 0 && entry.left >= 0 && entry.right <= viewport.width,
          `the legend entry "${entry.text}" is on the screen`);
      check(entry.size >= 12, `the legend is readable: ${entry.size} px`);
    }
    check(new Set(shown.legend.map((x) => x.swatch)).size === shown.legend.length,
        'each part has its own colour');
    check(shown.name.includes(gbText(m.peak)) && shown.name.includes(gbText(m.capacity)),
        `the bar's name gives the peak and the capacity: "${shown.name}"`);
    // The name as the accessibility tree gives it.
    equal(await page.getByRole('img', {name: shown.name, exact: true}).count(), 1,
        'the accessibility tree has the bar by its name');
    await box.screenshot({path: join(SCREENSHOTS, `memory-bar-${size}.png`)});
    await page.close();
  });
}

// ---- charts that stay readable, one meaning of "step", the runs list, exact MiB -----------------

// The text of every chart of the results as rendered: its size in CSS pixels (the computed font
// size through the SVG's scaling: getScreenCTM), its box, and the HTML text of the chart boxes.
async function chartTexts(page) {
  return page.evaluate(() => {
    const svgText = [...document.querySelectorAll('#results svg.chart text')].map((el) => {
      const m = el.getScreenCTM();
      const box = el.getBoundingClientRect();
      const turned = Math.abs(m.b) > Math.abs(m.a);
      return {text: el.textContent, cls: el.getAttribute('class') ?? '',
        px: parseFloat(getComputedStyle(el).fontSize) * Math.hypot(m.a, m.b),
        // A text's box is at least as tall (or, turned, as wide) as its letters.
        extent: turned ? box.width : box.height, chart: el.closest('section')?.id ?? ''};
    });
    const htmlText = [...document.querySelectorAll('#results figure.chart-box')].flatMap((box) =>
      [...box.querySelectorAll('li, p, figcaption')].filter((el) => el.textContent.trim())
          .map((el) => ({text: el.textContent.trim().slice(0, 40),
            px: parseFloat(getComputedStyle(el).fontSize)})));
    const charts = [...document.querySelectorAll('#results svg.chart')].map((svg) => ({
      yTitle: svg.querySelector('text.y-title')?.textContent ?? '',
      width: svg.getBoundingClientRect().width,
      viewBox: svg.viewBox.baseVal.width}));
    return {svgText, htmlText, charts};
  });
}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`chart text (${size}): no chart text under 11 CSS px, a y-axis title on every chart`,
      async (env) => {
        mkdirSync(SCREENSHOTS, {recursive: true});
        // A scaling chart and the inference sweep's chart (inside a card's box: the narrowest).
        const page = await openPage(env.context, env.origin,
            'model=llama-3.1-8b&method=lora&cards=h200-nvl:2,rtx-pro-6000:2&infer_gpu=h200-nvl',
            viewport);
        for (const metric of ['tokens_per_second', 'scaling_efficiency']) {
          await page.selectOption('#metric', metric);
          await waitForResults(page);
          const shown = await chartTexts(page);
          equal(shown.charts.length, 2, `${metric}: the scaling and the inference chart`);
          for (const chart of shown.charts) {
            check(chart.yTitle.length > 0, `${metric}: a chart without a y-axis title`);
            // Laid out at its width: one viewBox unit per CSS pixel.
            check(Math.abs(chart.width - chart.viewBox) <= 1,
                `${metric}: a chart drawn for ${chart.viewBox} px shown at ${chart.width} px`);
          }
          check(shown.svgText.length > 15, `${metric}: chart texts found: ${shown.svgText.length}`);
          for (const text of shown.svgText) {
            check(text.px >= 11, `${metric}: "${text.text}" (${text.cls}, #${text.chart}) renders ` +
                `at ${text.px.toFixed(2)} px`);
            check(text.extent >= 11, `${metric}: "${text.text}" is ${text.extent.toFixed(2)} px tall`);
          }
          for (const text of shown.htmlText) {
            check(text.px >= 11, `${metric}: "${text.text}" under a chart at ${text.px} px`);
          }
        }
        await page.locator('#scale figure').screenshot(
            {path: join(SCREENSHOTS, `chart-text-scale-${size}.png`)});
        await page.locator('#infer figure').screenshot(
            {path: join(SCREENSHOTS, `chart-text-infer-${size}.png`)});
        // A narrower window draws the chart again for its width (a turned phone).
        await page.setViewportSize({width: 360, height: 740});
        await page.waitForFunction(() => [...document.querySelectorAll('#results svg.chart')]
            .every((svg) => Math.abs(svg.getBoundingClientRect().width - svg.viewBox.baseVal.width) <= 1),
        null, {timeout: TIMEOUT_MS});
        const narrow = await chartTexts(page);
        check(narrow.svgText.every((text) => text.px >= 11),
            `at 360 px a chart text renders smaller than 11 px: ${JSON.stringify(
                narrow.svgText.filter((text) => text.px < 11))}`);
        await page.close();
        // Empty states: each chart says why it has nothing to draw.
        for (const [id, hash] of [['scale', 'model=llama-3.1-405b&method=full&cards=rtx-pro-6000:1'],
          ['infer', 'model=llama-3.3-70b&method=lora&cards=h200-nvl:1&context=131072']]) {
          const none = await openPage(env.context, env.origin, hash, viewport);
          await none.locator(`#${id} .chart-empty`).waitFor();
          const empty = await none.locator(`#${id} .chart-empty`).evaluate((el) =>
            ({text: el.textContent, px: parseFloat(getComputedStyle(el).fontSize),
              svg: el.closest('figure').querySelectorAll('svg').length}));
          check(empty.text.includes('nothing to draw') && empty.px >= 11 && empty.svg === 0,
              `#${id}: the empty chart says why, readably: ${JSON.stringify(empty)}`);
          await none.close();
        }
      });

  test(`chart lines that coincide (${size}): a dash pattern and a marker per card, the legend ` +
      'the same, and the part of a line past its NVLink domain marked as PCIe', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    // 8B LoRA trains data parallel: both card types scale almost perfectly, and at 1 card both
    // points sit at 100 %, one on the other.
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=lora&cards=h200-nvl:1,rtx-pro-6000:1&metric=scaling_efficiency',
        viewport);
    await page.locator('#scale svg.chart').waitFor();
    // The chart at the top of the window (on a phone, clear of the summary bar at the bottom).
    await page.locator('#scale svg.chart').evaluate((svg) => svg.scrollIntoView({block: 'start'}));
    const shown = await page.evaluate(() => {
      const svg = document.querySelector('#scale svg.chart');
      const style = (el) => getComputedStyle(el);
      const series = [...svg.querySelectorAll('path.series:not(.beyond)')].map((p) => ({
        series: p.dataset.series, gpu: p.dataset.gpu, dash: style(p).strokeDasharray,
        stroke: style(p).stroke, width: style(p).strokeWidth}));
      const points = [...svg.querySelectorAll('.point')].map((el) => {
        const box = el.getBoundingClientRect();
        return {series: [...el.classList].find((c) => c.startsWith('series-')).slice(7),
          shape: el.dataset.marker, title: el.querySelector('title').textContent,
          x: box.left + box.width / 2, y: box.top + box.height / 2, size: box.width};
      });
      const legend = [...document.querySelectorAll('#scale .chart-legend li:not([data-beyond])')]
          .map((li) => ({series: li.dataset.series, gpu: li.dataset.gpu, text: li.textContent,
            dash: style(li.querySelector('path.series')).strokeDasharray,
            stroke: style(li.querySelector('path.series')).stroke,
            shape: li.querySelector('[data-marker]').dataset.marker}));
      return {series, points, legend};
    });
    equal(shown.series.map((x) => x.gpu), ['h200-nvl', 'rtx-pro-6000'], 'a line per card type');
    const [a, b] = shown.series;
    check(a.dash !== b.dash, `the two lines have one dash pattern: ${a.dash}`);
    check(a.stroke !== b.stroke, 'the two lines have one colour');
    const shapes = (series) => [...new Set(shown.points.filter((p) => p.series === series)
        .map((p) => p.shape))];
    equal(shapes(a.series).length, 1, 'one marker shape for the first line');
    equal(shapes(b.series).length, 1, 'one marker shape for the second line');
    check(shapes(a.series)[0] !== shapes(b.series)[0], 'the lines have different markers');
    // The legend draws each line as the chart does: colour, dash pattern and marker.
    equal(shown.legend.map((x) => [x.gpu, x.dash, x.stroke, x.shape]),
        shown.series.map((x) => [x.gpu, x.dash, x.stroke, shapes(x.series)[0]]),
        'the legend matches the lines');
    check(shown.legend[0].text.includes('H200 NVL') && shown.legend[1].text.includes('RTX PRO 6000'),
        `the legend names the cards: ${shown.legend.map((x) => x.text)}`);
    // The two points at 1 card coincide; the one drawn over the other leaves it visible: the
    // pixels around them show both colours.
    const one = shown.points.filter((p) => / × 1:/.test(p.title));
    equal(one.length, 2, 'a point per card at 1 card');
    check(Math.hypot(one[0].x - one[1].x, one[0].y - one[1].y) < 1,
        `the two points at 1 card coincide: ${JSON.stringify(one)}`);
    const clip = {x: Math.round(one[0].x) - 7, y: Math.round(one[0].y) - 7, width: 14, height: 14};
    const png = await page.screenshot({clip});
    const counts = await page.evaluate(async ({data, colours}) => {
      const image = new Image();
      image.src = `data:image/png;base64,${data}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const g = canvas.getContext('2d');
      g.drawImage(image, 0, 0);
      const pixels = g.getImageData(0, 0, image.width, image.height).data;
      return colours.map((colour) => {
        const [r, gr, bl] = colour.match(/\d+/g).map(Number);
        let n = 0;
        for (let i = 0; i < pixels.length; i += 4) {
          if (Math.hypot(pixels[i] - r, pixels[i + 1] - gr, pixels[i + 2] - bl) < 60) n++;
        }
        return n;
      });
    }, {data: png.toString('base64'), colours: [a.stroke, b.stroke]});
    check(counts[0] >= 12 && counts[1] >= 12,
        `both coinciding points are visible (pixels of each colour: ${counts})`);
    await page.locator('#scale figure').screenshot(
        {path: join(SCREENSHOTS, `chart-coinciding-${size}.png`)});
    await page.close();
    // H200 NVL: NVLink up to the bridge's 4 cards, PCIe at 8 (the API's links): the part past the
    // domain is its own dotted segment with open points, labelled PCIe in the chart and the legend.
    const nv = await openPage(env.context, env.origin,
        'model=llama-3.3-70b&method=lora&cards=h200-nvl:2,rtx-pro-6000:2', viewport);
    await nv.locator('#scale svg.chart').waitFor();
    const body = {...fitBody({model: 'llama-3.3-70b', method: 'lora'}, {gpu: 'x', count: 1}),
      gpu: ['h200-nvl', 'rtx-pro-6000'], sweep: true};
    delete body.gpus;
    const api = (await apiJson(env.origin, '/api/scale', body)).data.sweep;
    const card = (await apiJson(env.origin, '/api/gpus')).data.gpus.find((g) => g.id === 'h200-nvl');
    const domain = card.nvlink.bridge_max_cards;
    check(domain >= 2 && domain < 8, `the H200 NVL's NVLink bridge joins ${domain} cards`);
    const fits = (gpu) => api.filter((p) => p.gpu === gpu && p.verdict !== 'does-not-fit');
    for (const p of fits('h200-nvl').filter((x) => x.gpus > 1)) {
      equal(/NVLink/.test(p.link), p.gpus <= domain,
          `the API: ${p.gpus} H200 NVL on NVLink only within the domain (${p.link})`);
    }
    const marked = await nv.evaluate(() => {
      const svg = document.querySelector('#scale svg.chart');
      const ends = (d) => d.match(/-?[\d.]+,-?[\d.]+/g).map((xy) => Number(xy.split(',')[0]));
      return {
        line: Object.fromEntries([...svg.querySelectorAll('path.series:not(.beyond)')].map((p) =>
          [p.dataset.gpu, Math.max(...ends(p.getAttribute('d')))])),
        beyond: [...svg.querySelectorAll('path.series.beyond')].map((p) => ({gpu: p.dataset.gpu,
          from: Number(p.dataset.from), to: Number(p.dataset.to), link: p.dataset.link,
          dash: getComputedStyle(p).strokeDasharray, right: Math.max(...ends(p.getAttribute('d')))})),
        open: [...svg.querySelectorAll('.point.beyond')].map((el) =>
          ({title: el.querySelector('title').textContent, fill: getComputedStyle(el).fill})),
        labels: [...svg.querySelectorAll('text.link-label')].map((el) =>
          ({gpu: el.dataset.gpu, text: el.textContent})),
        legend: [...document.querySelectorAll('#scale .chart-legend li[data-beyond]')].map((li) =>
          ({gpu: li.dataset.gpu, text: li.textContent,
            dash: getComputedStyle(li.querySelector('path.series')).strokeDasharray})),
        name: svg.getAttribute('aria-label'),
        lineDash: getComputedStyle(svg.querySelector('path.series[data-gpu="h200-nvl"]:not(.beyond)'))
            .strokeDasharray,
      };
    });
    const past = fits('h200-nvl').filter((p) => p.gpus > domain);
    equal(marked.beyond.map((x) => [x.gpu, x.to, x.link]),
        past.map((p) => ['h200-nvl', p.gpus, p.link]), 'the segments past the NVLink domain');
    equal(marked.beyond[0].from, domain, 'the dotted part starts at the domain\'s last card');
    check(marked.line['h200-nvl'] < marked.beyond[0].right,
        'the H200 NVL\'s NVLink line ends where its PCIe part starts');
    check(marked.beyond.every((x) => x.dash !== marked.lineDash),
        'the part on PCIe is drawn apart from the NVLink line');
    check(marked.open.length === past.length && marked.open.every((x) => x.title.includes('PCIe')),
        `the points past the domain are open, their tooltips say PCIe: ${JSON.stringify(marked.open)}`);
    equal(marked.labels, [{gpu: 'h200-nvl', text: 'PCIe'}], 'the chart labels the PCIe part');
    equal(marked.legend.length, 1, 'the legend explains the dotted part');
    check(marked.legend[0].text.includes(`beyond ${domain} cards`) &&
        marked.legend[0].text.includes(past[0].link) && marked.legend[0].dash === marked.beyond[0].dash,
    `the legend's dotted entry: ${JSON.stringify(marked.legend)}`);
    check(marked.name.includes(`PCIe`) && marked.name.includes(`up to ${domain} cards`),
        `the chart's accessible name says where the link changes: ${marked.name}`);
    equal(fits('rtx-pro-6000').filter((p) => p.gpus > 1 && !/PCIe/.test(p.link)), [],
        'the RTX PRO 6000 is on PCIe throughout');
    check(!marked.beyond.some((x) => x.gpu === 'rtx-pro-6000'), 'a PCIe-only line has no dotted part');
    await nv.locator('#scale figure').screenshot(
        {path: join(SCREENSHOTS, `chart-nvlink-domain-${size}.png`)});
    await nv.close();
  });
}

// Every figure of `selector` with the words that label it: the text between it and the figure
// before it in its block (or the block's start), the text up to the next figure (or the block's
// end), and the heading of its row or column, or its term in a list.
async function labelledFigures(page, selector) {
  return page.evaluate((selector) => {
    const blockOf = (el) => el.closest('p, li, dd, td, th, h3, h4, figcaption') ?? el.parentElement;
    const out = [];
    for (const root of document.querySelectorAll(selector)) {
      for (const el of root.querySelectorAll('[data-figure]')) {
        if (el.parentElement.closest('[data-figure]')) continue;
        const block = blockOf(el);
        const figures = [...block.querySelectorAll('[data-figure]')]
            .filter((f) => !f.parentElement.closest('[data-figure]'));
        const i = figures.indexOf(el);
        const range = document.createRange();
        range.selectNodeContents(block);
        if (i > 0) range.setStartAfter(figures[i - 1]);
        range.setEndBefore(el);
        const before = range.toString();
        range.selectNodeContents(block);
        range.setStartAfter(el);
        if (i + 1 < figures.length) range.setEndBefore(figures[i + 1]);
        const after = range.toString();
        let heading = '';
        if (block.tagName === 'DD') heading = block.previousElementSibling?.textContent ?? '';
        if (block.tagName === 'TD') {
          const column = block.closest('table').tHead?.rows[0]?.cells[block.cellIndex];
          heading = `${column?.textContent ?? ''} ${block.parentElement.querySelector('th')?.textContent ?? ''}`;
        }
        out.push({figure: el.dataset.figure, value: Number(el.dataset.value), text: el.textContent,
          before, after, heading});
      }
    }
    return out;
  }, selector);
}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`one meaning of "step" (${size}): a step is the optimizer step; every figure per ` +
      'micro-batch says "micro-batch", in English and German', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    // Gradient accumulation over 4 micro-batches: a step's figures are 4 micro-batches' and more.
    const run = {model: 'llama-3.1-8b', method: 'lora'};
    const body = {...fitBody(run, {gpu: 'rtx-pro-6000', count: 1}), grad_accum: '4'};
    delete body.gpus;
    const step = await cliJson('step', body);
    equal(step.grad_accum, 4, 'the CLI accumulates 4 micro-batches');
    check(step.step_seconds > 3.9 * step.micro_batch_seconds,
        'a step is 4 micro-batches and the update (else this test could not tell them apart)');
    const perMicroBatch = {micro_batch_seconds: step.micro_batch_seconds,
      tokens_per_micro_batch: step.tokens_per_micro_batch,
      host_seconds_per_micro_batch: step.host_seconds_per_micro_batch,
      forward_seconds: step.forward_seconds, backward_seconds: step.backward_seconds};
    const perStep = {step_seconds: step.step_seconds, tokens_per_step: step.tokens_per_step};
    const same = (a, b) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
    const words = {en: {step: /\bsteps?\b/i, micro: /micro-batch/i},
      de: {step: /schritt/i, micro: /micro-batch/i}};
    for (const lang of ['en', 'de']) {
      const page = await openPage(env.context, env.origin,
          `model=llama-3.1-8b&method=lora&cards=rtx-pro-6000:1&grad_accum=4&lang=${lang}`, viewport);
      const w = words[lang];
      const figures = await labelledFigures(page, '#step, #summary, #memory');
      const found = {micro: [], step: []};
      for (const f of figures) {
        // A figure's own text may hold its label too ("step 1.2 s" in the summary).
        const own = f.text.replace(/[\d.,\s]+/g, ' ');
        const label = `${f.heading} ${f.before} ${own} ${f.after}`;
        const micro = Object.entries(perMicroBatch).find(([, v]) => same(f.value, v));
        const whole = Object.entries(perStep).find(([, v]) => same(f.value, v));
        if (micro) {
          found.micro.push(micro[0]);
          check(w.micro.test(label), `${lang}: ${f.figure} ${f.text} is ${micro[0]}, per ` +
              `micro-batch, but its label does not say so: "${label.trim()}"`);
        }
        if (whole) {
          found.step.push(whole[0]);
          const named = `${f.heading} ${f.before} ${own}`;
          check(w.step.test(named) && !w.micro.test(named), `${lang}: ${f.figure} ${f.text} is ` +
              `${whole[0]}, per step, labelled "${named.trim()}"`);
        }
      }
      check(found.micro.includes('micro_batch_seconds') && found.micro.includes('tokens_per_micro_batch'),
          `${lang}: the page shows the micro-batch's time and tokens: ${found.micro}`);
      check(found.step.includes('step_seconds') && found.step.includes('tokens_per_step'),
          `${lang}: the page shows the step's time and tokens: ${found.step}`);
      // The words that name a part of the step do not call it a step: the update is the
      // optimizer's update, the grad-accum field counts micro-batches per optimizer step.
      const text = await page.locator('#step').innerText();
      check(!/optimizer step:|Optimiererschritt:/.test(text),
          `${lang}: the optimizer's update is not called a step: ${text.slice(0, 300)}`);
      const unit = await page.textContent('label[for=grad_accum] .unit');
      check(w.micro.test(unit) && w.step.test(unit), `${lang}: the accumulation's unit: ${unit}`);
      const note = await page.textContent('#step-heading + p');
      check(w.step.test(note) && w.micro.test(note), `${lang}: the step section says what a step is`);
      // The derivation of the step time: per micro-batch inputs say so, the figure is a step's.
      await page.locator('#step button.explain[data-explain="perf.step_seconds"]').click();
      await waitFor(page, () => document.getElementById('explain-dialog').dataset.busy === 'false');
      const explained = await page.evaluate(() => ({
        label: document.querySelector('#explain-body h3').textContent,
        inputs: [...document.querySelectorAll('#explain-body table.inputs tr')].map((tr) =>
          tr.querySelector('th').textContent)}));
      check(/optimizer step/.test(explained.label), `the step time's derivation: ${explained.label}`);
      check(explained.inputs.filter((name) => /forward|backward/.test(name))
          .every((name) => /micro-batch/.test(name)), `per micro-batch inputs: ${explained.inputs}`);
      await page.click('#explain-close');
      await page.locator('#step').scrollIntoViewIfNeeded();
      await page.screenshot({path: join(SCREENSHOTS, `step-meaning-${size}-${lang}.png`)});
      await page.close();
    }
  });

}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`"add the run above" (${size}): the advanced options go with the run, and its plan ` +
      'equals the CLI with the same options', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=lora&cards=h200-nvl:1', viewport);
    await waitForPlan(page);
    await page.click('#advanced > summary');
    await page.fill('#grad_accum', '4');
    await page.check('#pure_bf16');
    await waitForResults(page);
    await page.click('#add-run');
    await waitForPlan(page);
    const runs = await page.inputValue('#runs');
    const added = runs.slice(SEED_RUNS.length);
    check(added.includes('    pure_bf16: true\n') &&
        /\n {4}global_batch: 4 {2}# micro-batch 1 × gradient accumulation 4 × 1 card/.test(added),
    `the added run carries the two options:\n${added}`);
    const row = page.locator('#plan tr[data-run="llama-3.1-8b lora"]');
    equal(await row.count(), 1, 'the added run is planned');
    equal([await row.getAttribute('data-gpu'), await row.getAttribute('data-count')],
        ['h200-nvl', '1'], 'the plan puts it on one H200 NVL');
    const shownStep = Number(await row.locator('[data-figure=step_seconds]').getAttribute('data-value'));
    // The CLI with the same options: its step on that card (the plan's figures to 4 decimals).
    const body = {...fitBody({model: 'llama-3.1-8b', method: 'lora'}, {gpu: 'h200-nvl', count: 1})};
    delete body.gpus;
    const options = {grad_accum: '4', pure_bf16: true};
    const [step, plainStep, fit, plainFit] = await Promise.all([
      cliJson('step', {...body, ...options}), cliJson('step', body),
      cliJson('fit', {...body, ...options}), cliJson('fit', body)]);
    const round4 = (v) => Math.round(v * 1e4) / 1e4;
    equal(shownStep, round4(step.step_seconds), 'the plan\'s step = `ftplan step` with the options');
    check(round4(plainStep.step_seconds) !== shownStep, 'without the options the step differs');
    // The plan of the page's list (the API, as the page asks it): the accumulation and the peak.
    const reply = await fetch(`${env.origin}/api/plan?lang=en&gpu=h200-nvl`, {method: 'POST',
      headers: {'Content-Type': 'application/yaml'}, body: runs});
    const plan = (await reply.json()).runs.find((r) => r.run === 'llama-3.1-8b lora');
    equal(plan.recommendation.grad_accum, 4, 'the plan accumulates 4 micro-batches');
    equal(plan.options.pure_bf16, true, 'the plan trains in pure BF16');
    equal(plan.recommendation.memory_GB.peak, fit.memory_GB.peak,
        'the plan\'s peak = `ftplan fit` with the options');
    check(plainFit.memory_GB.peak !== fit.memory_GB.peak, 'without pure BF16 the peak differs');
    // The report of the list holds the run with the same step time.
    const report = await fetch(`${env.origin}/api/report?lang=en&format=md&gpu=h200-nvl`,
        {method: 'POST', headers: {'Content-Type': 'application/yaml'}, body: runs});
    const md = await report.text();
    check(report.ok && md.includes('llama-3.1-8b lora'), 'the report holds the added run');
    await page.locator('#plan').scrollIntoViewIfNeeded();
    await page.screenshot({path: join(SCREENSHOTS, `add-run-advanced-${size}.png`)});
    // Every changed option becomes a key of the run (the same as the API's body).
    await page.fill('#runs', SEED_RUNS);
    await page.locator('#runs').dispatchEvent('input');
    await page.selectOption('#method', 'qlora');
    await page.selectOption('#stack', 'unsloth');
    await page.selectOption('#attention', 'eager');
    await page.selectOption('#compile', 'off');
    await page.selectOption('#loss', 'chunked');
    await page.selectOption('#peak', 'allocated');
    await page.fill('#grad_accum', '1');
    await page.fill('#lora_dropout', '0.1');
    await page.fill('#quant_block', '128');
    await page.uncheck('#double_quant');
    await page.uncheck('#pure_bf16');
    for (const id of ['offload_optimizer', 'offload_params', 'offload_activations']) {
      await page.check(`#${id}`);
    }
    await waitForResults(page);
    await page.click('#add-run');
    await waitForPlan(page);
    const all = (await page.inputValue('#runs')).slice(SEED_RUNS.length);
    for (const line of ['stack: unsloth', 'attention: eager', 'compile: false', 'loss: chunked',
      'peak: allocated', 'lora_dropout: 0.1', 'quant_block: 128', 'double_quant: false',
      'offload_optimizer: true', 'offload_params: true', 'offload_activations: true']) {
      check(all.includes(`\n    ${line}\n`), `the run lacks "${line}":\n${all}`);
    }
    check(!all.includes('global_batch') && !all.includes('pure_bf16'),
        `options back at their defaults stay out:\n${all}`);
    const error = await page.locator('#error-runs').isVisible();
    equal(error, false, 'the server reads every key of the run');
    await page.close();
  });

}

for (const viewport of [{width: 1440, height: 900}, {width: 390, height: 844}]) {
  const size = `${viewport.width}x${viewport.height}`;

  test(`MiB as nvidia-smi prints it (${size}): every MiB figure is the API's bytes / 2^20, ` +
      'not a conversion of its rounded GB', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const run = {model: 'llama-3.1-8b', method: 'qlora'};
    const page = await openPage(env.context, env.origin,
        'model=llama-3.1-8b&method=qlora&cards=h200-nvl:1&unit=MiB', viewport);
    await waitForMatrix(page);
    const mib = (bytes) => `${Math.round(bytes / 2 ** 20)} MiB`;
    const fromGB = (gb) => `${Math.round((gb * 1e9) / 2 ** 20)} MiB`;
    const body = fitBody(run, {gpu: 'h200-nvl', count: 1});
    const fit = (await apiJson(env.origin, '/api/fit', body)).data;
    const shown = await memoryShown(page, 'h200-nvl', 1);
    let apart = 0; // figures where the rounded GB would have given another MiB
    const compare = (what, text, gb, bytes) => {
      check(Number.isInteger(bytes), `${what}: the API gives its bytes (${bytes})`);
      equal(text, mib(bytes), `${what} in MiB`);
      if (fromGB(gb) !== mib(bytes)) apart++;
    };
    for (const key of ['capacity', 'model_states', 'peak', 'free', 'headroom']) {
      compare(`fit ${key}`, shown.figures[key].text, fit.memory_GB[key], fit.memory_bytes[key]);
    }
    for (const [key, bytes] of Object.entries(fit.memory_bytes.breakdown).filter(([, b]) => b > 0)) {
      compare(`fit ${key}`, shown.figures[key].text, fit.memory_GB.breakdown[key], bytes);
    }
    for (const key of ['activations', 'overhead']) {
      compare(`fit ${key}`, shown.figures[key].text, fit.memory_GB[key], fit.memory_bytes[key]);
    }
    // MIG instances, the inference figures, the card menu (the catalog's nvidia-smi figure).
    const mig = (await apiJson(env.origin, '/api/mig', (({gpus, ...b}) => b)(body))).data;
    for (const i of mig.instances) {
      const row = page.locator(`#mig tr[data-profile="${i.profile}"]`);
      compare(`MIG ${i.profile} memory`, await row.locator('[data-figure=memory]').textContent(),
          i.capacity_GB, i.capacity_bytes);
      compare(`MIG ${i.profile} free`, await row.locator('[data-figure=free]').textContent(),
          i.free_GB, i.free_bytes);
    }
    const infer = (await apiJson(env.origin, '/api/infer', {model: 'llama-3.1-8b', gpu: 'h200-nvl',
      gpus: '1', context: '2048', batch: '1', weights: 'bf16', kv_dtype: 'bf16'})).data;
    const inferShownNow = await inferShown(page);
    compare('infer KV cache', inferShownNow.figures.kv_cache_GB.text, infer.kv_cache_GB,
        infer.kv_cache_bytes);
    compare('infer weights', inferShownNow.figures.weights_GB.text, infer.weights_GB,
        infer.weights_bytes);
    const gpu = (await apiJson(env.origin, '/api/gpus')).data.gpus.find((g) => g.id === 'h200-nvl');
    const option = await page.locator('#cards select option[value="h200-nvl"]').textContent();
    check(option.endsWith(` — ${mib(gpu.memory.visible_bytes)}`) &&
        mib(gpu.memory.visible_bytes) === `${gpu.memory.visible_MiB.value} MiB`,
    `the card menu shows nvidia-smi's ${gpu.memory.visible_MiB.value} MiB: "${option}"`);
    // The peak's derivation: the figure in MiB from its bytes.
    await page.locator('#memory button.explain[data-explain="memory.peak"]').click();
    await waitFor(page, () => document.getElementById('explain-dialog').dataset.busy === 'false');
    const explain = (await apiJson(env.origin, '/api/explain', {...body, figure: 'memory.peak',
      depth: 1, lang: 'en'})).data.figures[0];
    equal(await page.textContent('#explain-body [data-figure=explained_value]'), mib(explain.bytes),
        'the explained peak in MiB');
    equal(explain.bytes, fit.memory_bytes.peak, 'the derivation\'s bytes are the fit\'s');
    check((await page.textContent('#explain-body')).includes('Inputs in GB'),
        'the derivation says its inputs stay in GB');
    await page.screenshot({path: join(SCREENSHOTS, `mib-exact-${size}.png`)});
    await page.click('#explain-close');
    check(apart > 0, 'no figure here tells bytes from rounded GB: pick another run');
    await page.close();
  });
}

// Files people already have: a trainer file and a config.json (chosen or dropped), a Hugging Face
// id of a catalog model and one outside it.
for (const [size, viewport] of [['desktop', {width: 1440, height: 900}],
  ['phone', {width: 390, height: 844}]]) {
  test(`files (${size}): a trainer file fills the form as fit --from reads it, a dropped ` +
      'config.json becomes the pasted model, a Hugging Face id picks the catalog model', async (env) => {
    const page = await openPage(env.context, env.origin, 'cards=h200-nvl:1', viewport);
    const trainer = join(ROOT, 'examples/trainers/axolotl-qlora.yml');
    await page.setInputFiles('#import-file', trainer);
    await page.waitForFunction(() => document.getElementById('import-status').textContent !== '',
        null, {timeout: TIMEOUT_MS});
    await waitForResults(page);
    const cli = JSON.parse((await run(BIN, ['fit', '--from', trainer, '--gpu', 'h200-nvl',
      '--json'])).stdout);
    const form = await page.evaluate(() => Object.fromEntries(['model', 'method', 'rank', 'seq',
      'micro_batch', 'grad_accum', 'optimizer', 'lora_dropout', 'stack']
        .map((k) => [k, document.getElementById('form').elements.namedItem(k).value])));
    equal(form, {model: cli.model, method: cli.method, rank: String(cli.rank), seq: String(cli.seq),
      micro_batch: String(cli.micro_batch), grad_accum: String(cli.grad_accum),
      optimizer: cli.optimizer, lora_dropout: '0.05', stack: 'axolotl'},
    'the form after reading the axolotl file');
    const status = await page.locator('#import-status').textContent();
    check(status.includes('axolotl') && status.includes('axolotl-qlora.yml'),
        `the status names the file and its format: ${status}`);
    const shown = await memoryShown(page, 'h200-nvl', 1);
    equal(shown.figures.peak?.value, cli.memory_GB.peak, 'peak on the page vs fit --from');
    equal(shown.verdict, cli.verdict, 'verdict on the page vs fit --from');
    await page.screenshot({path: join(SCREENSHOTS, `import-trainer-${size}.png`)});

    // A LitGPT config on a fresh page (a file fills only the fields it names): bnb.nf4 is NF4
    // with one level of scales, which unticks double quantization, and the stack is LitGPT's.
    const fresh = await openPage(env.context, env.origin, 'cards=h200-nvl:1', viewport);
    const litgpt = join(ROOT, 'examples/trainers/litgpt_qlora.yaml');
    await fresh.setInputFiles('#import-file', litgpt);
    await fresh.waitForFunction(() => document.getElementById('import-status').textContent
        .includes('litgpt_qlora.yaml'), null, {timeout: TIMEOUT_MS});
    await waitForResults(fresh);
    const litCli = JSON.parse((await run(BIN, ['fit', '--from', litgpt, '--gpu', 'h200-nvl',
      '--json'])).stdout);
    equal(await fresh.isChecked('#double_quant'), false, 'bnb.nf4: double quantization is off');
    equal(await fresh.inputValue('#stack'), 'litgpt', 'the stack after reading the LitGPT file');
    const litShown = await memoryShown(fresh, 'h200-nvl', 1);
    equal(litShown.figures.peak?.value, litCli.memory_GB.peak, 'peak on the page vs fit --from (LitGPT)');
    await fresh.close();

    // A config.json dropped on the form: the pasted model, as fit --model FILE reads it.
    const configPath = join(ROOT, 'data/models/gemma-2-9b.json');
    const configText = readFileSync(configPath, 'utf8');
    await page.evaluate((text) => {
      const data = new DataTransfer();
      data.items.add(new File([text], 'config.json', {type: 'application/json'}));
      document.getElementById('form').dispatchEvent(new DragEvent('drop',
          {dataTransfer: data, bubbles: true, cancelable: true}));
    }, configText);
    await page.waitForFunction(() => document.querySelector('input[name=source]:checked')
        .value === 'paste', null, {timeout: TIMEOUT_MS});
    await waitForResults(page);
    equal(await page.inputValue('#config'), configText, 'the dropped config.json is the pasted one');
    const pasted = await memoryShown(page, 'h200-nvl', 1);
    const fromFile = JSON.parse((await run(BIN, ['fit', '--model', configPath, '--method',
      cli.method, '--rank', String(cli.rank), '--seq', String(cli.seq), '--micro-batch',
      String(cli.micro_batch), '--grad-accum', String(cli.grad_accum), '--optimizer',
      cli.optimizer, '--lora-dropout', '0.05', '--stack', 'axolotl', '--gpu', 'h200-nvl',
      '--json'])).stdout);
    equal(pasted.figures.peak?.value, fromFile.memory_GB.peak, 'peak of the dropped config.json');

    // A Hugging Face id: the catalog's model of that repository, or what to do.
    await page.fill('#hf-id', 'qwen/Qwen2.5-7B');
    await page.press('#hf-id', 'Enter');
    await page.locator('#hf-id').blur();
    await waitForResults(page);
    const qwen = (await apiJson(env.origin, '/api/models')).data.models
        .find((m) => m.hf_repo?.toLowerCase() === 'qwen/qwen2.5-7b');
    check(qwen, 'the catalog has Qwen2.5 7B by its repository');
    equal(await page.inputValue('#model'), qwen.id, 'the model picked by its Hugging Face id');
    equal(await page.evaluate(() => document.querySelector('input[name=source]:checked').value),
        'catalog', 'the model source after a Hugging Face id');
    await page.fill('#hf-id', 'someone/not-in-the-catalog');
    await page.locator('#hf-id').blur();
    check((await page.locator('#import-status').textContent()).includes('not in the catalog'),
        'an id outside the catalog says so');
    await page.close();
  });
}

// The HTML report (tests/browser/report.mjs), before the two checks over every page below.
reportTests({test, check, equal, run, BIN, SCREENSHOTS});
// The page that needs no server against the served one (tests/browser/site.mjs).
siteTests({test, check, equal, cliJson, SCREENSHOTS, SEED_RUNS});

test('no request left the machine: only the server\'s origin was asked', async (env) => {
  check(env.requests.length > 20,
      `too few requests seen (${env.requests.length}) for this check to mean anything`);
  const foreign = env.requests.filter((url) =>
    ![env.origin, env.siteOrigin].includes(new URL(url).origin));
  equal(foreign, [], 'requests to other origins');
});

test('no script errors or blocked resources in the console', async (env) => {
  equal(env.context.pageErrors, [], 'console errors');
});

// ---- runner ------------------------------------------------------------------------------------

async function main() {
  if (!existsSync(BIN)) {
    console.error(`error: ${BIN} is missing; build it first ` +
        '(./test.sh quick, or cmake --build --preset default)');
    return 1;
  }
  if (!existsSync(CHROMIUM)) {
    console.error(`error: ${CHROMIUM} is missing; install Debian's chromium ` +
        '(scripts/install-deps.sh --browser)');
    return 1;
  }
  const only = process.env.FTPLAN_BROWSER_ONLY; // run the tests whose name contains this
  const selected = tests.filter((x) => !only || x.name.includes(only));
  // A filter that selects nothing (a typo, a renamed test) must not pass as "all 0 passed".
  if (selected.length === 0) {
    console.error(`error: FTPLAN_BROWSER_ONLY='${only}' selects none of the ${tests.length} ` +
        'browser tests');
    return 1;
  }
  const {server, origin} = await startServer();
  // The static site on a port of its own, when it was built.
  const site = existsSync(join(SITE, 'index.html')) ? await startSiteServer(SITE) : null;
  if (!site) console.log(`note: ${SITE} is missing: the static site's tests fail`);
  const userDataDir = mkdtempSync(join(tmpdir(), 'ftplan-chromium-'));
  let context;
  let failed = 0;
  let ran = 0;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    context.pageErrors = [];
    const requests = [];
    // Every request of every page: the server's own pass, anything else is recorded and refused.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      requests.push(url);
      return [origin, site?.origin].includes(new URL(url).origin) ? route.continue() :
        route.abort('blockedbyclient');
    });
    for (const page of context.pages()) await page.close();
    const env = {context, origin, siteOrigin: site?.origin, siteUrl: site?.url, requests};
    for (const {name, fn} of selected) {
      const started = Date.now();
      ran++;
      try {
        await fn(env);
        console.log(`ok   ${name} (${Date.now() - started} ms)`);
      } catch (error) {
        failed++;
        console.log(`FAIL ${name}\n     ${error instanceof Failure ? error.message : error.stack}`);
      }
    }
  } finally {
    await context?.close();
    server.kill();
    site?.server.close();
    rmSync(userDataDir, {recursive: true, force: true});
  }
  console.log(failed ? `\n${failed} of ${ran} browser tests failed` :
      `\nall ${ran} browser tests passed (screenshots in ${SCREENSHOTS})`);
  return failed ? 1 : 0;
}

main().then((code) => process.exit(code), (error) => {
  console.error(`error: ${error.stack ?? error}`);
  process.exit(1);
});
