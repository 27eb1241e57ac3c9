// ftplan's web calculator. Plain JS, no framework, no build step, no request beyond this server.
// Layout of this file:
//   1. words (English and German) and number formats
//   2. the page's inputs: defaults, the shareable URL, reading and writing the form
//   3. the API: requests, a small cache, aborting stale requests
//   4. render: the one place that maps the API's JSON to the DOM
//   5. errors next to the fields they name
//   6. the update cycle and start-up
'use strict';

// ---- 1. words and number formats ---------------------------------------------------------------

// Every text of the page, in each language, comes from the server (GET /api/words?lang=..), which
// reads one file per language (data/i18n/<lang>.yaml, the report's words too). Texts take their
// figures as {0}, {1}, ...; index.html keeps the English texts for a page without script.
const LANGUAGES = ['en', 'de'];
const WORDS = {};   // language -> {key: text}
const LOCALES = {}; // language -> BCP 47 tag for its number formats

async function loadWords() {
  const replies = await Promise.all(
    LANGUAGES.map((lang) => request('GET', `/api/words?lang=${lang}`)));
  replies.forEach((reply, i) => {
    if (!reply.ok) throw new Error('the words could not be loaded');
    WORDS[LANGUAGES[i]] = reply.data.words;
    LOCALES[LANGUAGES[i]] = reply.data.locale;
  });
}

function t(key, ...args) {
  const word = WORDS[app.lang]?.[key] ?? WORDS.en?.[key] ?? key;
  return word.replace(/\{(\d+)\}/g, (whole, i) => String(args[Number(i)] ?? whole));
}

const numberFormats = new Map();
function number(value, digits) {
  const key = `${app.lang} ${digits}`;
  if (!numberFormats.has(key)) {
    numberFormats.set(key, new Intl.NumberFormat(LOCALES[app.lang], {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }));
  }
  return numberFormats.get(key).format(value);
}

// Memory as the reader chose to see it (the unit menu). GB: the API's figure (memory_GB and
// *_GB: 1e9 bytes, to 3 decimals), as the command line prints it. GiB and MiB: converted from the
// API's exact byte counts (memory_bytes and *_bytes), never from the rounded GB, so that MiB is
// what nvidia-smi prints: whole mebibytes, no group separator.
const MEMORY_UNITS = {
  GB: {bytes: 1e9, digits: 1, grouping: true},
  GiB: {bytes: 2 ** 30, digits: 1, grouping: true},
  MiB: {bytes: 2 ** 20, digits: 0, grouping: false},
};

function memoryText(gb, bytes) {
  const unit = MEMORY_UNITS[app.unit] ? app.unit : 'GB';
  const {digits, grouping} = MEMORY_UNITS[unit];
  const value = unit === 'GB' ? gb : bytes / MEMORY_UNITS[unit].bytes;
  return `${grouping ? number(value, digits) : ungrouped(value, digits)} ${unit}`;
}

function ungrouped(value, digits) {
  const key = `${app.lang} ${digits} ungrouped`;
  if (!numberFormats.has(key)) {
    numberFormats.set(key, new Intl.NumberFormat(LOCALES[app.lang], {
      minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: false,
    }));
  }
  return numberFormats.get(key).format(value);
}

// One format per unit; a memory figure takes the API's GB (memory_GB) and its bytes (memory_bytes).
const format = {
  GB: (gb, bytes) => memoryText(gb, bytes),
  seconds: (value) => `${number(value, value < 10 ? 3 : 1)} s`,
  hours: (value) => `${number(value, value < 10 ? 2 : 1)} h`,
  tokensPerSecond: (value) => `${number(value, 0)} ${t('tokens_per_second')}`,
  // Generation rates: one decimal below 100 tokens/s, as `ftplan infer` prints them.
  rate: (value) => `${number(value, value < 100 ? 1 : 0)} ${t('tokens_per_second')}`,
  percent: (fraction) => `${number(fraction * 100, 1)} %`,
  count: (value) => number(value, 0),
  bytes: (value) => t('kv_bytes_per_token_value', number(value, 0)),
  ms: (value) => t('ms_per_token', number(value, 2)),
  billions: (value) => `${number(value / 1e9, 2)} B`,
};

// ---- 2. the page's inputs ---------------------------------------------------------------------

const ALL_TARGETS = 'q,k,v,o,gate,up,down';
const DEFAULTS = Object.freeze({
  lang: 'en',
  unit: 'GB', // how memory is shown: GB, GiB or MiB (MEMORY_UNITS)
  source: 'catalog',
  model: 'llama-3.1-8b',
  config: '',
  method: 'lora',
  objective: 'sft', // or a preference or online objective, which trains `method` as its adapter
  // Online objectives (grpo, rloo, ppo) generate their completions: these replace `seq`.
  group_size: '', // '': the method's default (grpo 8, rloo 2, ppo 1)
  prompt_len: '512',
  completion_len: '256',
  rank: '16',
  targets: ALL_TARGETS,
  optimizer: 'adamw',
  precision: 'bf16',
  seq: '2048',
  micro_batch: '1',
  recompute: 'full',
  shard: '',
  cards: [{gpu: 'rtx-pro-6000', count: '1'}, {gpu: 'h200-nvl', count: '1'}],
  metric: 'tokens_per_second',
  // Inference (ftplan infer): the form's model served on infer_gpus cards of one type.
  infer_gpu: 'h200-nvl',
  infer_gpus: '1',
  context: '2048',
  batch: '1',
  weights: 'bf16',
  kv_dtype: 'bf16',
  runs: null, // null: the seed's runs
  // Every card (POST /api/matrix): the filter, tokens and rental prices, and the sorted column.
  matrix_cards: '', // '', 'nvlink' or 'rentable'
  matrix_max_price: '',
  matrix_tokens: '',
  matrix_prices: '', // 'h100-sxm=2.5, l40s=1.1'
  matrix_sort: 'cards',
});
const SCALAR_INPUTS = ['model', 'config', 'method', 'objective', 'rank', 'optimizer', 'precision', 'seq',
  'group_size', 'prompt_len', 'completion_len', 'micro_batch', 'recompute', 'shard', 'metric', 'lang', 'infer_gpu', 'infer_gpus', 'context',
  'batch', 'weights', 'kv_dtype', 'matrix_cards', 'matrix_max_price', 'matrix_tokens',
  'matrix_prices', 'unit'];

// The advanced options (the form's collapsed group): the CLI's option names ('_' for '-'), each at
// the CLI's default. A switch is 'on' or 'off'; an option reaches the URL and the API bodies only
// when it differs from its default.
const ADVANCED = Object.freeze({
  stack: {initial: 'hf'},
  attention: {initial: ''},  // '': the stack's
  compile: {initial: ''},    // '': the stack's; 'on': --compile; 'off': --no-compile
  loss: {initial: ''},       // '': the stack's
  optimizer_impl: {initial: ''},  // '': the stack's
  experts_impl: {initial: ''},    // '': the stack's
  peak: {initial: 'reserved'},
  grad_accum: {initial: '1'},
  recompute_layers: {initial: '0'},
  lora_dropout: {initial: '0', adapter: true},
  quant_block: {initial: '', quant: true},    // '': the format's
  base_quant: {initial: 'nf4', quant: true},
  train_modules: {initial: '', adapter: true},
  seq_mean: {initial: '', offline: true},      // '': every sample is --seq long
  lengths: {initial: '', offline: true},       // the text of a lengths file: sets the longest
  offload_optimizer: {initial: 'off', check: true},
  offload_params: {initial: 'off', check: true},
  offload_activations: {initial: 'off', check: true},
  no_offload_activations: {initial: 'off', check: true},  // where the stack offloads (unsloth)
  pure_bf16: {initial: 'off', check: true},
  optimizer_in_backward: {initial: 'off', check: true},
  packing: {initial: 'off', check: true, offline: true},
  padding_free: {initial: 'off', check: true, offline: true},
  double_quant: {initial: 'on', check: true, quant: true},  // 'off': --no-double-quant
  quant_keeps_input: {initial: 'off', check: true, quant: true},
  sync_each_batch: {initial: 'off', check: true},
  non_reentrant: {initial: 'off', check: true},
});
const QUANT_METHODS = ['qlora', 'qdora'];
const MAX_LINKED_LENGTHS = 8000;  // characters of pasted lengths the link keeps

const $ = (id) => document.getElementById(id);

// The advanced options that differ from their defaults, as the API takes them.
function advancedBody(inputs) {
  const body = {};
  for (const [key, spec] of Object.entries(ADVANCED)) {
    const value = inputs[key] ?? spec.initial;
    if (value === spec.initial) continue;
    if (spec.adapter && inputs.method === 'full') continue;
    if (spec.quant && !QUANT_METHODS.includes(inputs.method)) continue;
    if (spec.offline && isOnline(inputs)) continue;
    if (key === 'double_quant') body.no_double_quant = true;
    else if (key === 'compile') body[value === 'off' ? 'no_compile' : 'compile'] = true;
    else if (spec.check) body[key] = true;
    else body[key] = value;
  }
  return body;
}

// The URL's hash holds every input: #model=llama-3.1-8b&method=lora&cards=rtx-pro-6000:1,...
function encodeInputs(inputs) {
  const params = new URLSearchParams();
  for (const key of Object.keys(DEFAULTS)) {
    if (!['cards', 'config', 'runs'].includes(key)) params.set(key, inputs[key]);
  }
  for (const [key, spec] of Object.entries(ADVANCED)) {
    if ((inputs[key] ?? spec.initial) === spec.initial) continue;
    // A pasted dataset can be large: lengths past MAX_LINKED_LENGTHS stay out of the link.
    if (key === 'lengths' && inputs[key].length > MAX_LINKED_LENGTHS) continue;
    params.set(key, inputs[key]);
  }
  params.set('cards', inputs.cards.map((c) => `${c.gpu}:${c.count}`).join(','));
  if (inputs.source === 'paste') params.set('config', inputs.config);
  if (inputs.runs !== null) params.set('runs', inputs.runs);
  return params.toString();
}

function decodeInputs(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const inputs = structuredClone(DEFAULTS);
  for (const key of Object.keys(DEFAULTS)) {
    if (key !== 'cards' && params.has(key)) inputs[key] = params.get(key);
  }
  for (const [key, spec] of Object.entries(ADVANCED)) {
    inputs[key] = params.get(key) ?? spec.initial;
  }
  if (params.has('cards')) {
    inputs.cards = params.get('cards').split(',').filter(Boolean).map((item) => {
      const [gpu, count] = item.split(':');
      return {gpu, count: count ?? '1'};
    });
  }
  if (!(inputs.lang in WORDS)) inputs.lang = DEFAULTS.lang;
  if (!(inputs.unit in MEMORY_UNITS)) inputs.unit = DEFAULTS.unit;
  return inputs;
}

function readForm() {
  const inputs = {};
  for (const key of SCALAR_INPUTS) inputs[key] = $(key).value;
  for (const [key, spec] of Object.entries(ADVANCED)) {
    inputs[key] = spec.check ? ($(key).checked ? 'on' : 'off') : $(key).value;
  }
  inputs.source = document.querySelector('input[name=source]:checked').value;
  inputs.targets = [...document.querySelectorAll('input[name=target]:checked')]
      .map((box) => box.value).join(',');
  inputs.cards = [...$('cards').children].map((row) => ({
    gpu: row.querySelector('select').value,
    count: row.querySelector('input').value,
  }));
  inputs.runs = $('runs').value === app.seedRuns ? null : $('runs').value;
  inputs.matrix_sort = app.matrixSort;
  return inputs;
}

function writeForm(inputs) {
  for (const key of SCALAR_INPUTS) $(key).value = inputs[key];
  app.unit = inputs.unit;
  for (const [key, spec] of Object.entries(ADVANCED)) {
    const value = inputs[key] ?? spec.initial;
    if (spec.check) $(key).checked = value === 'on';
    else $(key).value = value;
  }
  // A link with advanced options opens the group that holds them.
  if (Object.keys(advancedBody({...inputs, method: 'qlora'})).length) $('advanced').open = true;
  for (const radio of document.querySelectorAll('input[name=source]')) {
    radio.checked = radio.value === inputs.source;
  }
  const targets = inputs.targets.split(',');
  for (const box of document.querySelectorAll('input[name=target]')) {
    box.checked = targets.includes(box.value);
  }
  $('cards').replaceChildren();
  for (const card of inputs.cards) addCardRow(card);
  $('runs').value = inputs.runs ?? app.seedRuns;
  app.matrixSort = MATRIX_SORTS.includes(inputs.matrix_sort) ? inputs.matrix_sort : 'cards';
  showModelSource(inputs.source);
  showAdapterOptions(inputs.method);
  showObjectiveOptions(inputs.objective);
  showLengths(inputs);
}

// Pasted lengths set the longest sample: the sequence length field rests until they are cleared.
function showLengths(inputs) {
  $('seq').disabled = (inputs.lengths ?? '') !== '';  // as advancedBody sends them
}

function showModelSource(source) {
  $('model-field').hidden = source !== 'catalog';
  $('config-field').hidden = source !== 'paste';
}

function showAdapterOptions(method) {
  for (const el of document.querySelectorAll('.adapter-only')) el.hidden = method === 'full';
  for (const el of document.querySelectorAll('.quant-only')) {
    el.hidden = !QUANT_METHODS.includes(method);
  }
}

// The objectives that generate their completions (the CLI's is_online): prompt and completion
// lengths replace the sequence length.
const ONLINE_OBJECTIVES = ['grpo', 'rloo', 'ppo'];
const isOnline = (inputs) => ONLINE_OBJECTIVES.includes(inputs.objective);

function showObjectiveOptions(objective) {
  const online = ONLINE_OBJECTIVES.includes(objective);
  for (const el of document.querySelectorAll('.online-only')) el.hidden = !online;
  for (const el of document.querySelectorAll('.offline-only')) el.hidden = online;
}

function addCardRow(card) {
  const row = document.createElement('li');
  row.className = 'card-row';
  const select = document.createElement('select');
  for (const gpu of app.catalog.gpus) {
    select.append(new Option(gpuOptionText(gpu), gpu.id));
  }
  select.value = card.gpu;
  const count = document.createElement('input');
  Object.assign(count, {type: 'number', min: 1, max: 1024, step: 1, value: card.count});
  count.inputMode = 'numeric';
  const times = document.createElement('span');
  times.className = 'times';
  times.textContent = '×';
  times.setAttribute('aria-hidden', 'true');
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.className = 'remove';
  remove.textContent = '✕';
  // The focus goes where the row was: the next row's card menu, or the button that adds a row.
  remove.addEventListener('click', () => {
    const next = row.nextElementSibling;
    row.remove();
    labelCardRows();
    (next?.querySelector('select') ?? $('add-card')).focus();
    inputsChanged();
  });
  row.append(select, times, count, remove);
  $('cards').append(row);
  labelCardRows();
}

// Accessible names of the card rows follow their position and the language.
function labelCardRows() {
  [...$('cards').children].forEach((row, i) => {
    row.querySelector('select').setAttribute('aria-label', t('card_label', i + 1));
    row.querySelector('input').setAttribute('aria-label', t('count_label', i + 1));
    const remove = row.querySelector('button');
    remove.setAttribute('aria-label', t('remove_card', i + 1));
    remove.disabled = $('cards').children.length === 1;
  });
}

// The options every analysis of the run shares (the CLI's option names, '_' for '-').
function workloadBody(inputs) {
  // A preference or online objective is the request's method, and what it trains its adapter.
  const preference = inputs.objective && inputs.objective !== 'sft';
  const body = {
    method: preference ? inputs.objective : inputs.method,
    optimizer: inputs.optimizer,
    precision: inputs.precision,
    seq: inputs.seq,
    micro_batch: inputs.micro_batch,
    recompute: inputs.recompute,
    lang: app.lang,  // the reasons come back in the page's language
  };
  if (preference) body.adapter = inputs.method;
  if (isOnline(inputs)) {
    // The trained sequence is the prompt and its completion (the API refuses seq here).
    delete body.seq;
    body.prompt_len = inputs.prompt_len;
    body.completion_len = inputs.completion_len;
    if (inputs.group_size !== '') body.group_size = inputs.group_size;
  }
  if (inputs.source === 'paste') body.config = inputs.config;
  else body.model = inputs.model;
  if (inputs.method !== 'full') {
    body.rank = inputs.rank;
    body.targets = inputs.targets;
  }
  const advanced = advancedBody(inputs);
  // Pasted lengths give the longest sample: the sequence length field is not sent beside them.
  if (advanced.lengths !== undefined) delete body.seq;
  return {...body, ...advanced};
}

// POST /api/infer: the form's model (catalog or pasted) and the inference inputs.
function inferBody(inputs) {
  const body = {gpu: inputs.infer_gpu, gpus: inputs.infer_gpus, context: inputs.context,
    batch: inputs.batch, weights: inputs.weights, kv_dtype: inputs.kv_dtype,
    lang: app.lang};  // a card's missing rate is worded in the page's language
  if (inputs.source === 'paste') body.config = inputs.config;
  else body.model = inputs.model;
  return body;
}

function uniqueGpus(inputs) {
  return [...new Set(inputs.cards.map((c) => c.gpu))];
}

function gpuInfo(id) {
  return app.catalog.gpus.find((g) => g.id === id);
}

function shortName(id) {
  const gpu = gpuInfo(id);
  return gpu ? gpu.name.replace(/^NVIDIA /, '') : id;
}

function hasMig(id) {
  const gpu = gpuInfo(id);
  return Boolean(gpu && gpu.mig && Array.isArray(gpu.mig.profiles));
}

// A YAML item for the runs list, from the form (catalog models only): every setting of the form
// a run keeps (the planner searches the card count and the sharding), the form's card types as
// the run's candidates. `taken`: the names already in the list, so that the new one differs.
function runYaml(inputs, indent, taken = []) {
  const preference = inputs.objective && inputs.objective !== 'sft';
  const base = `${inputs.model} ${preference ? `${inputs.objective} ${inputs.method}` : inputs.method}`;
  let name = base;
  for (let n = 2; taken.includes(name); n++) name = `${base} (${n})`;
  const lines = [`- name: ${name}`, `  model: ${inputs.model}`];
  if (preference) lines.push(`  method: ${inputs.objective}`, `  adapter: ${inputs.method}`);
  else lines.push(`  method: ${inputs.method}`);
  if (isOnline(inputs)) {
    lines.push(`  prompt_len: ${inputs.prompt_len}`, `  completion_len: ${inputs.completion_len}`);
    if (inputs.group_size !== '') lines.push(`  group_size: ${inputs.group_size}`);
  } else if (advancedBody(inputs).lengths !== undefined) {
    // A runs file names a lengths file by its path: the pasted lengths go in as the longest
    // sample and the mean the server read from them (the first card's reply).
    const reply = app.results.fits.find((f) => f?.ok)?.data;
    if (reply?.seq) lines.push(`  seq: ${reply.seq}  # ${t('run_lengths_longest')}`);
    if (reply?.seq_mean) lines.push(`  seq_mean: ${reply.seq_mean}`);
  } else {
    lines.push(`  seq: ${inputs.seq}`);
  }
  if (inputs.method !== 'full') lines.push(`  rank: ${inputs.rank}`);
  if (inputs.method !== 'full' && inputs.targets !== ALL_TARGETS) {
    lines.push(`  targets: ${inputs.targets}`);
  }
  lines.push(`  optimizer: ${inputs.optimizer}`, `  precision: ${inputs.precision}`,
      `  micro_batch: ${inputs.micro_batch}`, `  recompute: ${inputs.recompute}`);
  lines.push(...advancedRunLines(inputs));
  const accumulation = advancedBody(inputs).grad_accum;
  if (accumulation !== undefined) {
    // Gradient accumulation: a runs file states the sequences per optimizer step, which the
    // planner splits over the cards it tries; the form's run is its first card row.
    const cards = Math.max(1, Math.floor(Number(inputs.cards[0]?.count)) || 1);
    const batch = Number(inputs.micro_batch) * Number(accumulation) * cards;
    lines.push(`  global_batch: ${batch}  # ${t('run_global_batch', inputs.micro_batch,
        accumulation, cards)}`);
  } else if (!isOnline(inputs) && matrixGlobalBatch(inputs) !== 64) {
    // A micro-batch that does not divide the default 64 sequences: the matrix's global batch.
    lines.push(`  global_batch: ${matrixGlobalBatch(inputs)}`);
  }
  lines.push(`  gpus: [${uniqueGpus(inputs).join(', ')}]`);
  return lines.map((line) => indent + line).join('\n');
}

// The advanced options that differ from the command line's defaults, as a runs file's keys (the
// same settings as the API's body: advancedBody). Gradient accumulation becomes the global batch
// (runYaml).
const RUN_SWITCHES = {compile: ['compile', 'true'], no_compile: ['compile', 'false'],
  no_double_quant: ['double_quant', 'false'], offload_optimizer: ['offload_optimizer', 'true'],
  offload_params: ['offload_params', 'true'],
  offload_activations: ['offload_activations', 'true'],
  no_offload_activations: ['offload_activations', 'false'], pure_bf16: ['pure_bf16', 'true'],
  optimizer_in_backward: ['optimizer_in_backward', 'true'], packing: ['packing', 'true'],
  padding_free: ['padding_free', 'true'], quant_keeps_input: ['quant_keeps_input', 'true'],
  sync_each_batch: ['sync_each_batch', 'true'], non_reentrant: ['non_reentrant', 'true']};

function advancedRunLines(inputs) {
  return Object.entries(advancedBody(inputs))
      .filter(([key]) => !['grad_accum', 'lengths'].includes(key))
      .map(([key, value]) => {
        const [runKey, runValue] = RUN_SWITCHES[key] ?? [key, value];
        return `  ${runKey}: ${runValue}`;
      });
}

// The run names of a runs text (YAML items "- name: ..."), for a new name that differs.
function runNames(text) {
  return [...text.matchAll(/^[ \t]*- name:[ \t]*(.*?)[ \t]*$/gm)].map((m) => m[1]);
}

// POST /api/matrix: the run without a card, the filter, tokens, rental prices and the sort key.
const MATRIX_SORTS = ['cards', 'headroom', 'step', 'time', 'cost', 'price', 'memory', 'name'];

function matrixPrices(inputs) {
  return inputs.matrix_prices.split(/[\s,;]+/).filter(Boolean);
}

// The planner's global batch for the form's fixed micro-batch: 64 sequences (a runs file's
// default), or the next multiple of micro-batch × 8 so that every count up to 8 divides it.
function matrixGlobalBatch(inputs) {
  const step = Math.max(1, Math.floor(Number(inputs.micro_batch)) || 1) * 8;
  return step * Math.ceil(64 / step);
}

function matrixBody(inputs) {
  const body = workloadBody(inputs);
  body.global_batch = matrixGlobalBatch(inputs);
  const tokens = inputs.matrix_tokens.trim();
  const prices = matrixPrices(inputs);
  if (inputs.matrix_cards === 'nvlink') body.nvlink = true;
  if (inputs.matrix_cards === 'rentable') body.rentable = true;
  if (inputs.matrix_max_price.trim()) body.max_price = inputs.matrix_max_price.trim();
  if (tokens) body.tokens = tokens;
  if (prices.length) body.price_per_card_hour = prices;
  // Time and cost are sorted only where they are shown (tokens; rental prices).
  let sort = inputs.matrix_sort;
  if ((sort === 'time' || sort === 'cost') && !tokens) sort = 'cards';
  if (sort === 'cost' && !prices.length) sort = 'cards';
  body.sort = sort;
  return body;
}

// ---- 3. the API --------------------------------------------------------------------------------

const cache = new Map(); // request key -> parsed reply, so a language switch or undo is instant
const CACHE_LIMIT = 200;

// At most this many requests at once: the server keeps a worker thread per open connection (for
// its keep-alive time), so a browser's six parallel connections could wait on a pool of four.
const MAX_IN_FLIGHT = 3;
let inFlight = 0;
const waiting = [];

async function takeSlot() {
  while (inFlight >= MAX_IN_FLIGHT) await new Promise((resume) => waiting.push(resume));
  inFlight++;
}

function releaseSlot() {
  inFlight--;
  waiting.shift()?.();
}

// The page that needs no server (the `site` build) names its engine in a meta tag: the HTTP API's
// handler compiled to WebAssembly, run in a worker. Every request then goes to it instead of the
// network, and its reply reads as the server's would.
const engineScript = document.querySelector('meta[name="ftplan-engine"]')?.content;
let engine = null; // {worker, pending: Map id -> resolve, next}

function engineFetch(path, init) {
  if (!engine) {
    engine = {worker: new Worker(engineScript), pending: new Map(), next: 1};
    engine.worker.onmessage = ({data}) => {
      engine.pending.get(data.id)?.(data.reply);
      engine.pending.delete(data.id);
    };
  }
  const url = new URL(path, 'http://engine'); // the page's paths are absolute: '/api/fit?..'
  const request = {
    method: init.method ?? 'GET',
    path: decodeURIComponent(url.pathname),
    query: Object.fromEntries(url.searchParams),
    body: init.body ?? '',
    content_type: init.headers?.['Content-Type'] ?? '',
  };
  const id = engine.next++;
  return new Promise((resolve) => {
    engine.pending.set(id, resolve);
    engine.worker.postMessage({id, request});
  }).then((reply) => new Response(reply.body, {status: reply.status,
    headers: {'Content-Type': reply.content_type}}));
}

async function limitedFetch(path, init) {
  await takeSlot();
  try {
    const reply = await (engineScript ? engineFetch(path, init) : fetch(path, init));
    return {reply, text: await reply.text()};
  } finally {
    releaseSlot();
  }
}

// Resolves to {ok, status, data} (data: the JSON reply, or {error} from the API or the network).
async function request(method, path, body, signal, contentType = 'application/json') {
  const key = `${method} ${path} ${body ?? ''}`;
  if (cache.has(key)) return cache.get(key);
  const init = {method, signal, headers: {}};
  if (body !== undefined) {
    init.body = body;
    init.headers['Content-Type'] = contentType;
  }
  const {reply, text} = await limitedFetch(path, init);
  let data;
  try {
    data = JSON.parse(text);
  } catch {
    data = {error: {code: 'bad_reply', message: `HTTP ${reply.status}`, field: ''}};
  }
  const result = {ok: reply.ok, status: reply.status, data};
  if (reply.ok || reply.status === 400) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value);
    cache.set(key, result);
  }
  return result;
}

const post = (path, body, signal) => request('POST', path, JSON.stringify(body), signal);

// ---- 4. render: the API's JSON to the DOM ------------------------------------------------------

// h('p', {class: 'x'}, 'text', child): a small element builder.
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null && value !== false) el.setAttribute(name, value);
  }
  el.append(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  el.append(...children);
  return el;
}

// A figure with its raw value for tests and tools: <span data-figure="free" data-value="85.91">;
// a memory figure also with its exact bytes (data-bytes), which GiB and MiB are converted from.
function figure(name, value, text, bytes) {
  return h('span', {'class': 'figure', 'data-figure': name, 'data-value': String(value),
    'data-bytes': bytes === undefined ? null : String(bytes)}, text);
}

const gbFigure = (name, gb, bytes) => figure(name, gb, format.GB(gb, bytes), bytes);

// The peak's range (the model's error spread on published runs, for a reserved peak widened to
// the allocator's reserve at its measured 10th and 90th percentile), as one (label, figure) pair;
// none when the API gives no spread.
function peakRange(m, b) {
  const [low, high] = m.peak_range ?? [];
  if (!(high > low)) return [];
  const [lowBytes, highBytes] = b.peak_range;
  return [[t('peak_range'), h('span', {}, gbFigure('peak_low', low, lowBytes), ' – ',
      gbFigure('peak_high', high, highBytes))]];
}

// <dl> of (label, figure) pairs.
function figureList(pairs) {
  return h('dl', {'class': 'figures'},
      pairs.map(([label, value]) => [h('dt', {}, label), h('dd', {}, value)]));
}

// A reply-shaped failure made by the page itself (network error, nothing to send yet).
function failure(message, field = '') {
  return {ok: false, status: 0, data: {error: {message, field}}};
}

function verdictBadge(verdict) {
  return h('span', {'class': `verdict verdict-${verdict}`, 'data-verdict': verdict},
      t(`verdict_${verdict}`));
}

function errorNote(result) {
  if (!result) return h('p', {'class': 'note loading'}, t('loading'));
  const error = result.data.error ?? {message: `HTTP ${result.status}`};
  return h('p', {'class': 'note error'}, error.field ? t('error_elsewhere') : error.message);
}

// Stacked segments (label, value, class) as a bar scaled to `scale`, with a legend; markers are
// vertical lines at {at, cls}. The legend shows every segment's value (no hover needed), and the
// bar's accessible name says them too.
function stackedBar(segments, scale, label, markers = []) {
  const parts = segments.map((seg) => `${seg.label}: ${seg.text}`).join(', ');
  const bar = h('div', {'class': 'bar', 'role': 'img',
    'aria-label': parts ? `${label}; ${parts}` : label});
  for (const seg of segments) {
    const part = h('span', {'class': `seg ${seg.cls}`, 'title': `${seg.label}: ${seg.text}`});
    part.style.width = `${(100 * seg.value) / scale}%`;
    bar.append(part);
  }
  for (const marker of markers) {
    const line = h('span', {'class': `marker ${marker.cls}`, 'aria-hidden': 'true'});
    line.style.left = `${Math.min(100, (100 * marker.at) / scale)}%`;
    bar.append(line);
  }
  const legend = h('ul', {'class': 'legend'}, segments.map((seg) =>
    h('li', {}, h('span', {'class': `swatch ${seg.cls}`, 'aria-hidden': 'true'}),
        `${seg.label}: `, figure(seg.key, seg.value, seg.text, seg.bytes))));
  return [bar, legend];
}

const MEMORY_PARTS = ['frozen_weights', 'trained_weights', 'gradients', 'master_weights',
  'optimizer_states', 'quantization_constants', 'reference_weights'];

// `memory`: the API's memory_GB, `bytes`: its memory_bytes (the same figures, exact).
function memorySegments(memory, bytes) {
  const parts = MEMORY_PARTS.map((key) => ({key, value: memory.breakdown[key] ?? 0,
    bytes: bytes.breakdown[key] ?? 0}));
  for (const key of ['activations', 'overhead',
    // A colocated rollout engine (online objectives): its share of the card, weights and KV cache.
    'rollout_engine']) {
    parts.push({key, value: memory[key] ?? 0, bytes: bytes[key] ?? 0});
  }
  return parts.filter((p) => p.value > 0).map((p) => (
    {...p, cls: `m-${p.key}`, label: t(p.key), text: format.GB(p.value, p.bytes)}));
}

// "12.3 GB headroom" or "needs 4.5 GB more": a headroom in GB and bytes, either sign.
function roomText(gb, bytes) {
  return gb >= 0 ? t('fit_headroom', format.GB(gb, bytes))
    : t('fit_shortfall', format.GB(-gb, -bytes));
}

// How to make it fit: the engine's suggestions for card row `index`, each with its figures and a
// button that sets the form to it and calculates again.
function suggestionList(suggestions, index) {
  const heading = suggestions[0].fits ? t('suggest_heading') : t('suggest_closest');
  const items = suggestions.map((sug) => {
    const m = sug.memory_GB;
    const b = sug.memory_bytes;
    const item = h('li', {'data-kind': sug.kind},
        h('span', {'class': 'suggestion-text'}, sug.reason), ' ',
        h('span', {'class': 'suggestion-figures'}, verdictBadge(sug.verdict), ' · ',
            t('suggest_peak', format.GB(m.peak, b.peak)), ' · ',
            figure('suggestion_headroom', m.headroom, roomText(m.headroom, b.headroom), b.headroom)));
    if (canApply(sug.change)) {
      const button = h('button', {'type': 'button', 'class': 'apply',
        'aria-label': t('suggest_apply_label', sug.reason)}, t('suggest_apply'));
      button.addEventListener('click', () => applySuggestion(sug.change, index));
      item.append(' ', button);
    }
    return item;
  });
  return h('section', {'class': 'suggestions', 'aria-label': heading},
      h('h4', {}, heading), h('ul', {}, items));
}

// Every key of a suggestion is an input of the form (gpus: the card row's count; adapter: the
// method select, which names a preference objective's adapter).
function canApply(change) {
  return Object.keys(change).every((key) =>
    key === 'gpus' || key === 'adapter' || SCALAR_INPUTS.includes(key));
}

function applySuggestion(change, index) {
  const inputs = readForm();
  for (const [key, value] of Object.entries(change)) {
    if (key === 'gpus') {
      if (inputs.cards[index]) inputs.cards[index].count = String(value);
    } else if (key === 'adapter') {
      inputs.method = String(value);
    } else {
      inputs[key] = String(value);
    }
  }
  writeForm(inputs);
  inputsChanged();
  // The results show the new verdict: keep the reader there.
  focusResults();
}

function focusResults() {
  $('results').focus({preventScroll: true});
  $('results').scrollIntoView({block: 'start'});
}

const render = {
  // POST /api/fit, one card row: verdict, stacked memory bar, free and headroom.
  memory(card, result, index) {
    const title = h('h3', {}, `${gpuInfo(card.gpu)?.name ?? card.gpu} × ${card.count}`);
    const box = h('article', {'class': 'result', 'data-gpu': card.gpu, 'data-count': card.count},
        title);
    if (!result || !result.ok) {
      box.append(errorNote(result));
      return box;
    }
    const fit = result.data;
    const m = fit.memory_GB;
    const b = fit.memory_bytes;
    const segments = memorySegments(m, b);
    const stacked = segments.reduce((sum, seg) => sum + seg.value, 0);
    const scale = Math.max(m.capacity, m.peak, stacked);
    const label = `${t('peak')} ${format.GB(m.peak, b.peak)}, ${t('capacity')} ` +
        format.GB(m.capacity, b.capacity);
    // Model states that are not on the card at the peak (gradients made in the backward pass,
    // offloaded or paged states): the peak counts only those on the card.
    const moved = m.model_states - (m.states_on_card ?? m.model_states);
    const keys = ['capacity', 'model_states', ...(moved > 0 ? ['states_on_card'] : []), 'peak',
      'free', 'headroom'];
    // The headline: the verdict and what is left after the peak (or what is missing); `free`
    // (capacity - model states) stays in the figures below.
    box.append(
        h('p', {'class': 'headline'}, verdictBadge(fit.verdict), ' · ',
            figure(m.headroom >= 0 ? 'headline_headroom' : 'headline_shortfall',
                Math.abs(m.headroom), roomText(m.headroom, b.headroom), Math.abs(b.headroom)),
            fit.gpus > 1 ? ` ${t('per_card')}` : ''),
        ...stackedBar(segments, scale, label,
            [{at: m.capacity, cls: 'capacity-line'}, {at: m.peak, cls: 'peak-line'}]),
        h('p', {'class': 'small'}, t('bar_key')),
        figureList([...keys.map((key) => [t(key), key in EXPLAINED
          ? explainButton(EXPLAINED[key], cardBody(app.inputs, card), t(key),
              gbFigure(key, m[key], b[key]))
          : gbFigure(key, m[key], b[key])]), ...peakRange(m, b)]),
        h('p', {'class': 'reason'}, fit.reason));
    if (fit.gpus > 1) box.append(h('p', {'class': 'note'}, `${t('sharding')}: ${fit.shard}`));
    if (fit.suggestions?.length) box.append(suggestionList(fit.suggestions, index));
    return box;
  },

  // POST /api/step, one card type: step time split by op class, tokens/s, MFU. An online
  // objective's step (POST /api/scale on one card, `rl`) first: its parts in sequence.
  step(gpu, result, fitVerdict, online) {
    const box = resultBox(gpu);
    if (online !== undefined) {
      if (!online || !online.ok) {
        box.append(errorNote(online));
        return box;
      }
      box.append(...rlParts(online.data));
    }
    if (!result || !result.ok) {
      box.append(errorNote(result));
      return box;
    }
    const step = result.data;
    const classes = Object.entries(step.classes)
        .filter(([, c]) => c.seconds > 0)
        .sort((a, b) => b[1].seconds - a[1].seconds)
        .map(([key, c]) => ({key: `class-${key}`, value: c.seconds, cls: `c-${key}`,
          label: t(`class_${key}`),
          text: `${format.seconds(c.seconds)} (${format.percent(c.share)})`}));
    // The host's time (launch waits, fixed framework time per micro-batch) sits beside the classes.
    if (step.host_seconds > 0) {
      classes.push({key: 'class-framework', value: step.host_seconds, cls: 'c-framework',
        label: t('class_framework'), text: `${format.seconds(step.host_seconds)} ` +
          `(${format.percent(step.host_seconds / step.step_seconds)})`});
    }
    const stepText = format.seconds(step.step_seconds);
    if (online !== undefined) {
      // The op classes of the scoring and training passes only (what /api/step times): a part of
      // the step above, not the step.
      box.append(h('p', {'class': 'note'}, t('rl_training_split')),
          ...stackedBar(classes, step.step_seconds, t('rl_training_split_label', stepText)));
      if (fitVerdict === 'does-not-fit') box.append(h('p', {'class': 'note warn'}, t('step_unfit')));
      return box;
    }
    const explained = (key, label, node) =>
      explainButton(EXPLAINED[key], {...workloadBody(app.inputs), gpu}, label, node);
    box.append(
        h('p', {'class': 'headline'}, `${t('step')}: `,
            explained('step_seconds', t('step'),
                figure('step_seconds', step.step_seconds, stepText)), ' · ',
            explained('tokens_per_second', t('tokens_per_second'),
                figure('tokens_per_second', step.tokens_per_second,
                    format.tokensPerSecond(step.tokens_per_second))),
            ' · ', `${t('mfu')} `,
            explained('mfu', t('mfu'), figure('mfu', step.mfu, format.percent(step.mfu)))),
        h('p', {'class': 'note step-tokens'}, stepTokens(step)),
        rangeNote(step),
        ...stackedBar(classes, step.step_seconds, `${t('step')} ${stepText}`));
    if (fitVerdict === 'does-not-fit') box.append(h('p', {'class': 'note warn'}, t('step_unfit')));
    return box;
  },

  // POST /api/scale with a sweep: a chart of tokens/s or efficiency against cards, and a table.
  scale(result, metric, gpuCount) {
    const box = h('div', {});
    if (!result || !result.ok) {
      box.append(errorNote(result));
      return box;
    }
    const points = result.data.sweep;
    const gpus = [...new Set(points.map((p) => p.gpu))];
    box.append(scaleChart(points, gpus, metric), scaleTable(points, gpus));
    if (gpuCount < 2) box.append(h('p', {'class': 'note'}, t('scale_one')));
    if (gpuCount > 2) box.append(h('p', {'class': 'note'}, t('scale_two')));
    return box;
  },

  // POST /api/mig, one card type: which profiles fit, and how many per card.
  mig(gpu, result) {
    const box = resultBox(gpu);
    if (!hasMig(gpu)) {
      box.append(h('p', {'class': 'note'}, t('no_mig', gpuInfo(gpu)?.mig?.reason ?? '')));
      return box;
    }
    if (!result || !result.ok) {
      box.append(errorNote(result));
      return box;
    }
    const mig = result.data;
    const best = mig.instances.find((i) => i.profile === mig.smallest_fitting_profile);
    box.append(h('p', {'class': 'headline'}, best
      ? t('smallest_profile', best.profile, best.most_per_card) : t('no_profile')));
    const rows = mig.instances.map((i) => h('tr', {'data-profile': i.profile},
        h('th', {'scope': 'row', 'class': 'nowrap'}, i.profile),
        h('td', {}, gbFigure('memory', i.capacity_GB, i.capacity_bytes)),
        h('td', {}, gbFigure('free', i.free_GB, i.free_bytes)),
        h('td', {}, gbFigure('headroom', i.headroom_GB, i.headroom_bytes)),
        h('td', {}, verdictBadge(i.verdict)),
        h('td', {}, i.fits
          ? figure('most_per_card', i.most_per_card, format.count(i.most_per_card)) : '–')));
    const headings = [t('profile'), t('instance_memory'), t('free'), t('headroom'), t('verdict'),
      t('jobs_per_card')];
    box.append(table(headings, rows),
        h('ul', {'class': 'notes', 'lang': 'en'}, mig.notes.map((n) => h('li', {}, n.text))));
    return box;
  },

  // POST /api/infer: KV cache, the card's memory split, prefill and decode rates, batch sweep.
  infer(result, inputs) {
    const box = h('article', {'class': 'result infer'});
    if (!result || !result.ok) {
      box.append(inferErrorNote(result, inputs));
      return box;
    }
    const x = result.data;
    const m = x.memory_GB;
    box.dataset.gpu = x.gpu;
    box.dataset.gpus = String(x.gpus);
    box.append(h('h3', {}, `${x.gpu_name} × ${x.gpus}`));
    if (x.gpus > 1) {
      box.append(h('p', {'class': 'note'}, t('infer_tensor_parallel', x.gpus, x.topology ?? '')));
    }
    const decode = figure('decode_tokens_per_second', x.decode_tokens_per_second,
        format.rate(x.decode_tokens_per_second));
    const prefill = figure('prefill_tokens_per_second', x.prefill_tokens_per_second,
        format.rate(x.prefill_tokens_per_second));
    box.append(
        h('p', {'class': 'headline'}, tNodes('infer_headline', decode, prefill)),
        h('p', {}, verdictBadge(x.batch_fits ? 'fits' : 'does-not-fit'), ' ', x.batch_fits
          ? t('batch_fits', format.count(x.batch))
          : t('batch_does_not_fit', format.count(x.batch),
              format.count(x.max_concurrent_sequences))),
        ...inferMemoryBar(m, x.memory_bytes),
        figureList([
          [t('kv_bytes_per_token'), figure('kv_bytes_per_token', x.kv_bytes_per_token,
              format.bytes(x.kv_bytes_per_token))],
          [t('kv_cache_GB'), gbFigure('kv_cache_GB', x.kv_cache_GB, x.kv_cache_bytes)],
          [t('weights_GB'), gbFigure('weights_GB', x.weights_GB, x.weights_bytes)],
          [t('max_concurrent_sequences'), figure('max_concurrent_sequences',
              x.max_concurrent_sequences, format.count(x.max_concurrent_sequences))],
          [t('prefill_tokens_per_second'), [figure('prefill', x.prefill_tokens_per_second,
              format.rate(x.prefill_tokens_per_second)), ` (${t('bound')}: `,
          boundFigure('prefill_bound', x.prefill.bound), ')']],
          [t('decode_tokens_per_second'), [figure('decode', x.decode_tokens_per_second,
              format.rate(x.decode_tokens_per_second)), ', ',
          figure('decode_ms_per_token', x.decode_ms_per_token, format.ms(x.decode_ms_per_token))]],
          [t('bound'), boundFigure('bound', x.bound)],
        ]),
        h('h4', {}, t('batch_sweep')),
        sweepChart(x.batch_sweep),
        sweepTable(x.batch_sweep, x.batch));
    return box;
  },

  // POST /api/matrix: every card as a table; a click on a column heading sorts by it.
  matrix(result, inputs) {
    const box = h('div', {});
    if (isOnline(inputs)) {
      box.append(h('p', {'class': 'note'}, t('matrix_online')));
      return box;
    }
    if (!result || !result.ok) {
      box.append(matrixErrorNote(result, inputs));
      return box;
    }
    const m = result.data;
    if (!m.rows.length) {
      box.append(h('p', {'class': 'note', 'data-empty': 'true'}, t('matrix_empty')));
      return box;
    }
    const totals = m.tokens !== null;
    const costs = totals && m.rows.some((r) => r.rental_USD_per_card_hour !== null);
    const columns = [
      ['name', 'matrix_col_card'], ['memory', 'matrix_col_memory'],
      ['headroom', 'matrix_col_one_card'], ['cards', 'matrix_col_cards'],
      ['step', 'matrix_col_step'], totals && ['time', 'matrix_col_time'],
      costs && ['cost', 'matrix_col_cost'], ['price', 'matrix_col_price'],
    ].filter(Boolean);
    const most = m.counts[m.counts.length - 1];
    const rows = m.rows.map((r) => matrixRow(r, most, totals, costs));
    const descending = ['headroom', 'memory'];
    const heads = columns.map(([key, word]) => h('th', {'scope': 'col',
      'aria-sort': key === m.sort ? (descending.includes(key) ? 'descending' : 'ascending') : null},
    h('button', {'type': 'button', 'class': 'sort', 'data-sort': key,
      'aria-label': t('matrix_sort_label', t(word))}, t(word))));
    const sortWord = columns.find(([key]) => key === m.sort)?.[1] ?? 'matrix_col_cards';
    box.append(h('div', {'class': 'table-wrap matrix'}, h('table', {'data-sort': m.sort},
        h('thead', {}, h('tr', {}, heads)), h('tbody', {}, rows))),
    h('p', {'class': 'note'}, t('matrix_summary', format.count(m.rows.length),
        format.count(m.catalog_cards), format.count(m.evaluations), t(sortWord),
        format.count(m.global_batch))));
    for (const button of box.querySelectorAll('button.sort')) {
      button.addEventListener('click', () => {
        app.matrixSort = button.dataset.sort;
        inputsChanged();
      });
    }
    return box;
  },

  // POST /api/plan: the recommendation for each run.
  plan(result) {
    const box = h('div', {});
    if (!result) {
      box.append(errorNote(result));
      return box;
    }
    if (!result.ok) {
      const message = result.data.error?.message ?? `HTTP ${result.status}`;
      box.append(h('p', {'class': 'note error'}, `${t('plan_unavailable')} `,
          h('span', {'lang': 'en'}, message)));
      return box;
    }
    const plan = result.data;
    const headings = [t('run'), t('cards_col'), t('strategy'), t('step'), t('time_to_train'),
      t('other_cards')];
    const rows = plan.runs.map((run) => planRow(run));
    const evaluations = format.count(plan.evaluations ?? 0);
    box.append(table(headings, rows, 'stacked'),
        h('p', {'class': 'note'}, t('plan_summary', plan.runs.length, evaluations)));
    return box;
  },
};

// ---- how far the run stretches (POST /api/max) and where a figure comes from (/api/explain) ----

// The run on one card row, as /api/fit gets it: its card, count and (for several) the sharding;
// by default the one that fits (auto: data parallel when one card holds the replica, else FSDP).
function cardBody(inputs, card) {
  const body = {...workloadBody(inputs), gpu: card.gpu, gpus: card.count};
  if (Number(card.count) > 1) body.shard = inputs.shard || 'auto';
  return body;
}

// What /api/max solves for (the CLI's --solve), each a column of the limits table.
const SOLVES = ['micro-batch', 'seq'];

function limitsRequests(inputs, controller, track) {
  for (const solve of SOLVES.filter((x) => app.limitsAsked.has(x))) {
    inputs.cards.forEach((card, i) => {
      track(post('/api/max', {...cardBody(inputs, card), solve}, controller.signal), (r) => {
        app.results.limits[`${solve} ${i}`] = r;
      }, () => {});
    });
  }
}

function renderLimits(inputs, results) {
  const asked = SOLVES.filter((x) => app.limitsAsked.has(x));
  if (!asked.length) return [];
  const cell = (result) => {
    if (!result) return h('td', {}, h('span', {'class': 'note loading'}, t('loading')));
    if (!result.ok) {
      return h('td', {}, h('span', {'class': 'note error'},
          result.data.error?.message ?? `HTTP ${result.status}`));
    }
    const x = result.data;
    if (!x.largest) return h('td', {'data-largest': '0'}, t('limits_none'));
    return h('td', {'data-largest': String(x.largest)},
        figure(x.solve === 'seq' ? 'longest_seq' : 'largest_micro_batch', x.largest,
            format.count(x.largest)), h('br'),
        h('span', {'class': 'small', 'data-figure': 'binding', 'data-value': x.binding},
            t('limits_binding', x.binding)), h('br'),
        h('span', {'class': 'small'}, t('limits_peak',
            format.GB(x.peak_GB_at_largest, x.peak_bytes_at_largest),
            format.GB(x.capacity_GB, x.capacity_bytes))),
        x.largest_tight > x.largest
          ? [h('br'), h('span', {'class': 'small'}, t('limits_tight', format.count(x.largest_tight)))]
          : null);
  };
  const rows = inputs.cards.map((card, i) => h('tr', {'data-gpu': card.gpu,
    'data-count': card.count}, h('th', {'scope': 'row'}, `${shortName(card.gpu)} × ${card.count}`),
  asked.map((solve) => cell(results[`${solve} ${i}`]))));
  const headings = [t('limits_col_card'),
    ...asked.map((solve) => t(solve === 'seq' ? 'limits_col_seq' : 'limits_col_micro_batch'))];
  return [table(headings, rows)];
}

function askLimits(solve) {
  app.limitsAsked.add(solve);
  history.replaceState(null, '', `#${encodeInputs(readForm())}`);
  inputsChanged();
}

// A figure that opens its derivation: a button around the figure, for keyboard and pointer.
function explainButton(id, body, label, node) {
  const button = h('button', {'type': 'button', 'class': 'explain', 'data-explain': id,
    'aria-haspopup': 'dialog', 'aria-label': `${t('explain_label', label)} (${node.textContent})`},
  node);
  button.addEventListener('click', () => openExplain(id, body, button));
  return button;
}

const EXPLAINED = {peak: 'memory.peak', model_states: 'memory.model_states',
  step_seconds: 'perf.step_seconds', tokens_per_second: 'perf.tokens_per_second',
  mfu: 'perf.mfu'};

async function openExplain(id, body, opener) {
  const dialog = $('explain-dialog');
  $('explain-body').replaceChildren(h('p', {'class': 'note loading'}, t('loading')));
  dialog.dataset.figure = id;
  dialog.dataset.busy = 'true';
  app.explainOpener = opener;
  if (!dialog.open) dialog.showModal();
  $('explain-close').focus();
  const result = await post('/api/explain', {...body, figure: id, depth: 1})
      .catch((error) => failure(`${t('request_failed')} ${error.message}`));
  if (dialog.dataset.figure !== id) return;
  $('explain-body').replaceChildren(...(result.ok
    ? result.data.figures.map((f) => explainFigure(f))
    : [h('p', {'class': 'note error'}, result.data.error?.message ?? `HTTP ${result.status}`)]));
  dialog.dataset.busy = 'false';
}

// A figure of a derivation in its unit. A memory figure with its bytes (the derived figures) is
// shown in the unit chosen at the top; an input without them (the derivation's own text, rounded
// to 3 decimals) stays in GB as the derivation uses it, rather than converted from a rounded value.
function explainValue(value, unit, bytes) {
  if (typeof value !== 'number') return String(value ?? '');
  if (unit === 'GB' && typeof bytes === 'number') return format.GB(value, bytes);
  if (unit === 'GB') return `${number(value, 3)} GB`;
  const digits = Math.abs(value) >= 100 || Number.isInteger(value) ? 0 :
    Math.abs(value) >= 0.1 ? 2 : 4;
  return `${number(value, digits)}${unit ? ` ${unit}` : ''}`;
}

// One figure of /api/explain: value, formula, inputs, source, and the figures it comes from.
function explainFigure(f) {
  const entries = Object.entries(f.inputs ?? {});
  const inGB = app.unit !== 'GB' && entries.some(([, input]) => input?.unit === 'GB');
  const inputs = entries.map(([name, input]) => h('tr', {},
      h('th', {'scope': 'row'}, name),
      h('td', {}, typeof input === 'object' && input !== null
        ? explainValue(input.value, input.unit) + (input.text ? ` ${input.text}` : '')
        : String(input))));
  return h('article', {'class': 'explained', 'data-id': f.id},
      h('h3', {}, h('code', {}, f.id), ' = ',
          figure('explained_value', f.value, explainValue(f.value, f.unit, f.bytes), f.bytes),
          ` — ${f.label}`),
      h('dl', {'class': 'figures'},
          h('dt', {}, t('explain_formula')), h('dd', {'class': 'formula', 'lang': 'en'}, f.formula),
          h('dt', {}, t('explain_source')), h('dd', {'class': 'source', 'lang': 'en'}, f.source)),
      inputs.length ? [h('h4', {}, t('explain_inputs')), h('div', {'class': 'table-wrap'},
          h('table', {'class': 'inputs', 'lang': 'en'}, h('tbody', {}, inputs))),
        inGB ? h('p', {'class': 'small'}, t('explain_inputs_gb')) : null] : null,
      f.from?.length ? [h('h4', {}, t('explain_from')), h('ul', {}, f.from.map((g) =>
        h('li', {'lang': 'en'}, h('code', {}, g.id),
            ` = ${explainValue(g.value, g.unit, g.bytes)} — ${g.label}`)))]
        : null);
}

// One card of the matrix: its one-card verdict and headroom, the fewest cards, the step and the
// time with their ranges, cost and list price; a card that nothing holds says why.
function matrixRow(r, most, totals, costs) {
  const usd = (name, value) => (value === null || value === undefined
    ? '–' : figure(name, value, t('matrix_usd', number(value, value < 100 ? 2 : 0))));
  const room = r.one_card.memory_GB.headroom;
  const roomBytes = r.one_card.memory_bytes.headroom;
  const f = r.fewest;
  const ranged = (name, value, range, text) => [figure(name, value, text(value)), h('br'),
    h('span', {'class': 'small', 'data-figure': `${name}_range`, 'data-value': range.join(',')},
        `${text(range[0])} – ${text(range[1])}`)];
  const cells = [
    h('th', {'scope': 'row'}, r.name.replace(/^NVIDIA /, '')),
    h('td', {}, gbFigure('memory_GB', r.memory_GB, r.memory_bytes)),
    h('td', {}, verdictBadge(r.one_card.verdict), h('br'),
        figure('headroom', room, roomText(room, roomBytes), roomBytes)),
    h('td', {}, f
      ? [figure('cards_needed', f.count, format.count(f.count)),
        f.count > 1 ? h('span', {'class': 'small', 'lang': 'en'}, ` ${layoutText(f)}`) : '']
      : h('details', {'class': 'why-not'},
          h('summary', {'data-figure': 'cards_needed', 'data-value': ''}, t('matrix_none', most)),
          h('span', {'class': 'small why'}, r.why_not ?? ''))),
    h('td', {}, f ? ranged('step_seconds', f.step_seconds, f.step_seconds_range, format.seconds)
      : '–'),
  ];
  if (totals) {
    cells.push(h('td', {}, f ? ranged('time_to_train_hours', f.time_to_train_hours,
        f.time_to_train_hours_range, format.hours) : '–'));
  }
  if (costs) cells.push(h('td', {}, usd('cost_USD', f?.cost_USD)));
  cells.push(h('td', {}, usd('price_USD', r.price_USD)));
  return h('tr', {'data-gpu': r.gpu, 'data-verdict': r.verdict}, cells);
}

// How the fewest cards split the run: model-parallel degrees above 1, then the sharding.
function layoutText(option) {
  const degrees = ['tp', 'pp', 'cp', 'ep'].filter((key) => option.layout?.[key] > 1)
      .map((key) => `${key} ${option.layout[key]}`);
  return [...degrees, option.shard].join(' · ');
}

// A text with figures (nodes) at its {0}, {1}, ...: t()'s template, kept as DOM nodes.
function tNodes(key, ...nodes) {
  return t(key).split(/(\{\d+\})/).filter(Boolean).map((part) => {
    const slot = /^\{(\d+)\}$/.exec(part);
    return slot ? nodes[Number(slot[1])] : part;
  });
}

// What limits a pass: bandwidth, compute or the link between the cards.
// An online objective's step on one card (`ftplan scale --gpus 1 --json`'s rl): the headline
// (step time, trained and generated tokens/s, bottleneck) and the parts in sequence as a bar.
const RL_PARTS = ['prefill', 'decode', 'weight_sync', 'sleep_wake', 'scoring', 'training'];

function rlParts(scale) {
  const rl = scale.rl;
  if (!rl.feasible) return [h('p', {'class': 'note error'}, rl.reason ?? t('rl_infeasible'))];
  const segments = RL_PARTS.filter((key) => rl.seconds[key] > 0).map((key) => ({
    key: `rl-${key}`, value: rl.seconds[key], cls: `r-${key}`, label: t(`rl_part_${key}`),
    text: `${format.seconds(rl.seconds[key])} (${format.percent(rl.seconds[key] / rl.seconds.step)})`}));
  const stepText = format.seconds(rl.seconds.step);
  return [
    h('p', {'class': 'headline'}, `${t('step')}: `,
        figure('rl_step_seconds', rl.seconds.step, stepText), ' · ', `${t('rl_trained')} `,
        figure('rl_tokens_per_second', scale.tokens_per_second,
            format.tokensPerSecond(scale.tokens_per_second)), ' · ',
        `${t('rl_generated')} `, figure('rl_completion_tokens_per_second',
            rl.completion_tokens_per_second, format.tokensPerSecond(rl.completion_tokens_per_second))),
    h('p', {'class': 'note'}, t('rl_sequences', format.count(rl.prompts), format.count(rl.group_size),
        format.count(rl.concurrent_sequences), format.GB(rl.kv_cache_GB, rl.kv_cache_bytes)), ' ',
    h('span', {'data-figure': 'rl_bottleneck', 'data-value': rl.bottleneck},
        t('rl_bottleneck', t(`rl_bottleneck_${rl.bottleneck.replace(' ', '_')}`)))),
    ...stackedBar(segments, rl.seconds.step, `${t('step')} ${stepText}`)];
}

function boundFigure(name, bound) {
  return h('span', {'data-figure': name, 'data-value': bound}, t(`bound_${bound}`));
}

// The inference result's memory bar: weights, reserve and KV cache against the card, with the
// card's memory (dashed) and the engine's share of it (solid).
function inferMemoryBar(m, bytes) {
  const segments = ['weights', 'reserve', 'kv_cache']
      .map((key) => ({key: `memory_${key}`, value: m[key], bytes: bytes[key], cls: `i-${key}`,
        label: t(`infer_part_${key}`), text: format.GB(m[key], bytes[key])}))
      .filter((seg) => seg.value > 0);
  const stacked = segments.reduce((sum, seg) => sum + seg.value, 0);
  const scale = Math.max(m.card, stacked);
  return [...stackedBar(segments, scale, t('infer_memory_label', format.GB(m.card, bytes.card)),
      [{at: m.card, cls: 'capacity-line'}, {at: m.engine, cls: 'engine-line'}]),
  h('p', {'class': 'small'}, t('infer_bar_key'))];
}

// Decode tokens/s over the batch sweep: batch on a log-2 axis, points that do not fit hollow.
function sweepChart(points) {
  if (!points.some((p) => p.fits)) {
    return h('figure', {'class': 'chart-box'},
        h('p', {'class': 'chart-empty'}, t('chart_empty_sweep')));
  }
  const max = niceCeiling(Math.max(1, ...points.map((p) => p.tokens_per_second)));
  return chartBox((W) => {
    const H = 200, left = 64, right = 14, top = 12, bottom = 44;
    const x = (i) => left + ((W - left - right) * i) / Math.max(1, points.length - 1);
    const y = (v) => top + (H - top - bottom) * (1 - v / max);
    const svg = chartSvg(W, H,
        `${t('batch_sweep')}: ${t('tokens_per_second')}, 0 – ${number(max, 0)}`);
    yGrid(svg, {left, right, W, y, max, text: (v) => number(v, 0)});
    xTicks(svg, points.map((p, i) => ({x: x(i), text: number(p.batch, 0)})), H - bottom + 18);
    svg.append(xTitle(t('col_batch'), (left + W - right) / 2, H - 6),
        yTitle(t('tokens_per_second'), top, H - bottom));
    svg.append(s('path', {'class': 'series series-0',
      'd': points.map((p, i) => `${i ? 'L' : 'M'}${x(i)},${y(p.tokens_per_second)}`).join(' ')}));
    points.forEach((p, i) => svg.append(marker(0, x(i), y(p.tokens_per_second),
        `point series-0 ${p.fits ? '' : 'verdict-tight'}`,
        `${t('col_batch')} ${number(p.batch, 0)}: ${format.rate(p.tokens_per_second)}`)));
    return svg;
  });
}

function sweepTable(points, batch) {
  const rows = points.map((p) => h('tr', {'data-batch': p.batch,
    'class': p.batch === batch ? 'current' : null},
  h('th', {'scope': 'row'}, format.count(p.batch)),
  h('td', {}, figure('tokens_per_second', p.tokens_per_second, format.rate(p.tokens_per_second))),
  h('td', {}, figure('ms_per_token', p.ms_per_token, number(p.ms_per_token, 2))),
  h('td', {}, boundFigure('bound', p.bound)),
  h('td', {}, verdictBadge(p.fits ? 'fits' : 'does-not-fit'))));
  return table([t('col_batch'), t('tokens_per_second'), t('col_ms_per_token'), t('bound'),
    t('col_fits')], rows);
}

function resultBox(gpu) {
  return h('article', {'class': 'result', 'data-gpu': gpu}, h('h3', {}, gpuInfo(gpu)?.name ?? gpu));
}

// A table; 'stacked' ones show each row as a block on a phone, every cell with its heading.
function table(headings, rows, variant = '') {
  if (variant === 'stacked') {
    for (const row of rows) {
      [...row.children].forEach((cell, i) => cell.setAttribute('data-label', headings[i] ?? ''));
    }
  }
  return h('div', {'class': `table-wrap ${variant}`}, h('table', {},
      h('thead', {}, h('tr', {}, headings.map((text) => h('th', {'scope': 'col'}, text)))),
      h('tbody', {}, rows)));
}

function planRow(run) {
  const rec = run.recommendation;
  if (!rec) {
    const why = Array.isArray(run.why) ? run.why.join(' ') : (run.why ?? '');
    return h('tr', {'data-run': run.run}, h('th', {'scope': 'row'}, run.run),
        h('td', {'colspan': 5}, t('no_recommendation'),
            why ? h('span', {}, ` (${why})`) : ''));
  }
  return h('tr', {'data-run': run.run, 'data-gpu': rec.gpu, 'data-count': rec.count},
      h('th', {'scope': 'row'}, run.run),
      h('td', {}, cardsText(rec)),
      h('td', {'lang': 'en'}, rec.strategy),
      h('td', {}, figure('step_seconds', rec.step_seconds, format.seconds(rec.step_seconds))),
      h('td', {}, trainTime(run, rec)),
      h('td', {}, otherCards(run, rec)));
}

// What one (optimizer) step holds: its tokens, and its micro-batches (gradient accumulation), each
// figure per micro-batch named as such.
function stepTokens(step) {
  const perStep = figure('tokens_per_step', step.tokens_per_step,
      format.count(step.tokens_per_step));
  const microBatch = figure('micro_batch_seconds', step.micro_batch_seconds,
      format.seconds(step.micro_batch_seconds));
  if (step.grad_accum <= 1) return tNodes('step_tokens_one', perStep, microBatch);
  return tNodes('step_tokens_accum', perStep,
      figure('grad_accum', step.grad_accum, format.count(step.grad_accum)),
      figure('tokens_per_micro_batch', step.tokens_per_micro_batch,
          format.count(step.tokens_per_micro_batch)), microBatch);
}

// Where measured runs fall around the step model: the step's and the tokens/s's ranges.
function rangeNote(step) {
  const [low, high] = step.step_seconds_range ?? [];
  const [tLow, tHigh] = step.tokens_per_second_range ?? [];
  if (low === undefined || tLow === undefined) return null;
  return h('p', {'class': 'note range', 'data-figure': 'step_seconds_range',
    'data-value': `${low},${high}`}, t('step_range', `${format.seconds(low)} – ${format.seconds(high)}`,
      `${format.count(tLow)} – ${format.tokensPerSecond(tHigh)}`));
}

// Time to train with its range; a flag where the next-best option cannot be told apart.
function trainTime(run, rec) {
  const [low, high] = rec.time_to_train_hours_range ?? [];
  const cell = [figure('time_to_train_hours', rec.time_to_train_hours,
      format.hours(rec.time_to_train_hours))];
  if (low !== undefined) {
    cell.push(h('br'), h('span', {'class': 'small', 'data-figure': 'time_to_train_hours_range'},
        `${format.hours(low)} – ${format.hours(high)}`));
  }
  if (run.too_close_to_call) {
    cell.push(h('br'), h('span', {'class': 'small close-call', 'title': run.close_call?.why ?? ''},
        t('too_close_to_call', cardsText(run.close_call))));
  }
  return cell;
}

function cardsText(option) {
  return `${shortName(option.gpu)} × ${option.count}${option.mig ? ` (MIG ${option.mig})` : ''}`;
}

// The fewest cards of each other candidate type (the plan's per_gpu[].minimum), with their time.
function otherCards(run, rec) {
  const others = (run.per_gpu ?? []).filter((g) => g.gpu !== rec.gpu);
  return others.map((g, i) => [i ? h('br') : null, g.minimum
    ? `${cardsText(g.minimum)}: ${format.hours(g.minimum.time_to_train_hours)}`
    : `${shortName(g.gpu)}: ${t('no_recommendation')}`]);
}

function metricText(metric, value) {
  return metric === 'scaling_efficiency' ? format.percent(value) : format.tokensPerSecond(value);
}

// Cards on a log-2 axis (1, 2, 4, 8), the metric from 0; a line per card type; runs that do not
// fit are left out of the line (the table names them). Each card type has its own dash pattern
// and point marker as well as its colour, so that two lines that coincide (NVLink and PCIe at a
// few cards, or every line at 1 card) both stay visible; the legend shows the same. Past the
// link a line starts on (an NVLink domain of 4 cards), its part on the slower link is dotted with
// open points, labelled with that link in the chart and in the legend.
function scaleChart(points, gpus, metric) {
  const counts = [...new Set(points.map((p) => p.gpus))].sort((a, b) => a - b);
  const usable = points.filter((p) => p.verdict !== 'does-not-fit');
  if (!usable.length) {
    return h('figure', {'class': 'chart-box'},
        h('p', {'class': 'chart-empty'}, t('chart_empty_scale')));
  }
  const max = metric === 'scaling_efficiency'
    ? 1 : niceCeiling(Math.max(1, ...usable.map((p) => p[metric])));
  const lines = gpus.map((gpu, i) => seriesLinks(i, gpu,
      usable.filter((p) => p.gpu === gpu).sort((a, b) => a.gpus - b.gpus)));
  const changes = linkChanges(usable, gpus);
  const label = [`${t('scale_caption')}: ${metricText(metric, max)}`, ...changes].join('. ');
  const draw = (W) => {
    const H = 220, left = 64, right = 14, top = 16, bottom = 44;
    const x = (n) => left + ((W - left - right) * counts.indexOf(n)) /
        Math.max(1, counts.length - 1);
    const y = (v) => top + (H - top - bottom) * (1 - v / max);
    const svg = chartSvg(W, H, label);
    yGrid(svg, {left, right, W, y, max, text: (v) => (metric === 'scaling_efficiency'
      ? `${number(v * 100, 0)} %` : number(v, 0))});
    xTicks(svg, counts.map((n) => ({x: x(n), text: String(n)})), H - bottom + 18);
    svg.append(xTitle(t('cards_word'), (left + W - right) / 2, H - 6),
        yTitle(t(metric === 'scaling_efficiency' ? 'scaling_efficiency' : 'tokens_per_second'), top,
            H - bottom));
    // The first card type at the bottom; the ones above it dashed, with open markers.
    for (const line of lines) {
      const at = (p) => `${x(p.gpus)},${y(p[metric])}`;
      const on = line.points.filter((p) => !p.beyond);
      svg.append(s('path', {'d': on.map((p, j) => `${j ? 'L' : 'M'}${at(p)}`).join(' '),
        'class': `series series-${line.style}`, 'data-series': line.style, 'data-gpu': line.gpu,
        'stroke-dasharray': SERIES_STYLES[line.style].dash || 'none'}));
      line.points.forEach((p, j) => {
        if (!p.beyond) return;
        svg.append(s('path', {'d': `M${at(line.points[j - 1])} L${at(p)}`,
          'class': `series series-${line.style} beyond`, 'data-series': line.style,
          'data-gpu': line.gpu, 'data-from': line.points[j - 1].gpus, 'data-to': p.gpus,
          'data-link': p.link, 'stroke-dasharray': BEYOND_DASH}));
      });
      for (const p of line.points) {
        svg.append(marker(line.style, x(p.gpus), y(p[metric]),
            `point series-${line.style} verdict-${p.verdict}${p.beyond ? ' beyond' : ''}`,
            `${shortName(line.gpu)} × ${p.gpus}: ${metricText(metric, p[metric])}, ${p.link}`));
      }
      const last = line.points.at(-1);
      if (last?.beyond) {
        // Beside its last point: above it, or below where the top of the chart is too close.
        const py = y(last[metric]);
        svg.append(s('text', {'x': x(last.gpus) - 9, 'y': py - 22 >= 0 ? py - 9 : py + 21,
          'text-anchor': 'end', 'class': `tick link-label series-${line.style}`,
          'data-gpu': line.gpu}, shortLink(last.link)));
      }
    }
    return svg;
  };
  const legend = h('ul', {'class': 'legend chart-legend'}, lines.flatMap((line) => [
    h('li', {'data-series': line.style, 'data-gpu': line.gpu},
        seriesSwatch(line.style, false), shortName(line.gpu),
        line.link ? ` (${line.link})` : ''),
    line.beyondLink ? h('li', {'data-series': line.style, 'data-gpu': line.gpu,
      'data-beyond': 'true'}, seriesSwatch(line.style, true),
    t('scale_beyond', shortName(line.gpu), line.lastOn, line.beyondLink, line.link)) : null,
  ]));
  return chartBox(draw, [legend,
    changes.map((text) => h('p', {'class': 'small link-change'}, text))]);
}

// Each card type's look: a dash pattern and a marker shape besides its colour (series-N).
const SERIES_STYLES = [
  {dash: '', marker: 'circle'},
  {dash: '8 4', marker: 'square'},
  {dash: '2 3', marker: 'triangle'},
  {dash: '10 3 2 3', marker: 'diamond'},
];
const BEYOND_DASH = '1 4';

// A card type's points with the link each runs on: the link of its first multi-card point is the
// line's; a later point on another link (PCIe past the NVLink domain) is `beyond` it.
function seriesLinks(style, gpu, points) {
  const link = points.find((p) => p.gpus > 1)?.link ?? '';
  const marked = points.map((p) => ({...p, beyond: p.gpus > 1 && p.link !== link}));
  const first = marked.findIndex((p) => p.beyond);
  return {style: style % SERIES_STYLES.length, gpu, link, points: marked,
    beyondLink: first >= 0 ? marked[first].link : '',
    lastOn: first > 0 ? marked[first - 1].gpus : 0};
}

// The name of a link short enough to stand beside a line: "PCIe" for "PCIe Gen5 x16".
function shortLink(link) {
  return /PCIe/i.test(link) ? 'PCIe' : link;
}

// A point marker of series `style`: circle, square, triangle or diamond, with its tooltip.
function marker(style, cx, cy, cls, title) {
  const shape = SERIES_STYLES[style % SERIES_STYLES.length].marker;
  const attrs = {'class': cls, 'data-marker': shape};
  const tip = s('title', {}, title);
  if (shape === 'circle') return s('circle', {...attrs, cx, cy, 'r': 4.5}, tip);
  if (shape === 'square') {
    return s('rect', {...attrs, 'x': cx - 6, 'y': cy - 6, 'width': 12, 'height': 12}, tip);
  }
  const d = shape === 'triangle'
    ? `M${cx},${cy - 7.5} L${cx + 7},${cy + 5} L${cx - 7},${cy + 5} Z`
    : `M${cx},${cy - 7.5} L${cx + 7.5},${cy} L${cx},${cy + 7.5} L${cx - 7.5},${cy} Z`;
  return s('path', {...attrs, d}, tip);
}

// The legend's sample of a series: its line (dash pattern) and marker, as the chart draws them.
function seriesSwatch(style, beyond) {
  const dash = beyond ? BEYOND_DASH : SERIES_STYLES[style].dash || 'none';
  return s('svg', {'class': 'swatch-line', 'width': 30, 'height': 16, 'viewBox': '0 0 30 16',
    'aria-hidden': 'true'},
  s('path', {'d': 'M1,8 L29,8', 'class': `series series-${style}${beyond ? ' beyond' : ''}`,
    'stroke-dasharray': dash}),
  marker(style, 15, 8, `point series-${style}${beyond ? ' beyond' : ''}`, ''));
}

// Where a card's line leaves its link for a slower one (an NVLink domain of 4 cards, PCIe beyond):
// said under the chart as well as marked in it.
function linkChanges(points, gpus) {
  const out = [];
  for (const gpu of gpus) {
    const series = points.filter((p) => p.gpu === gpu && p.gpus > 1)
        .sort((a, b) => a.gpus - b.gpus);
    for (let j = 1; j < series.length; j++) {
      if (series[j].link === series[j - 1].link) continue;
      out.push(t('link_change', shortName(gpu), series[j - 1].link, series[j - 1].gpus,
          series[j].link, series[j].gpus));
    }
  }
  return out;
}

// ---- charts drawn at the width they are shown at ------------------------------------------------

// A chart's SVG is laid out for the width of its box on the screen, one viewBox unit per CSS
// pixel, so that its text keeps its size (12 px, style.css): a phone's narrow chart is laid out
// again rather than scaled down, and a wide one is not blown up. `draw(width)` makes the SVG; the
// caption (a legend, notes) sits under it.
const CHART_WIDTH = 340; // until the box is on the screen
const chartObserver = typeof ResizeObserver === 'function'
  ? new ResizeObserver((entries) => entries.forEach((entry) => drawChart(entry.target))) : null;

function chartBox(draw, caption = []) {
  const box = h('figure', {'class': 'chart-box'},
      [caption].flat().length ? h('figcaption', {}, caption) : null);
  box.drawChart = draw;
  return box;
}

function drawChart(box) {
  if (!box.isConnected) return;
  const width = Math.max(200, Math.floor(box.clientWidth) || CHART_WIDTH);
  if (box.dataset.width === String(width)) return;
  box.dataset.width = String(width);
  const svg = box.drawChart(width);
  const old = box.querySelector(':scope > svg');
  if (old) old.replaceWith(svg);
  else box.prepend(svg);
}

// Every chart of the page drawn at its width, and again when the width changes (a turned phone).
function layoutCharts() {
  chartObserver?.disconnect();
  for (const box of document.querySelectorAll('figure.chart-box')) {
    if (!box.drawChart) continue;
    drawChart(box);
    chartObserver?.observe(box);
  }
}

function chartSvg(W, H, label) {
  return s('svg', {'viewBox': `0 0 ${W} ${H}`, 'width': W, 'height': H, 'class': 'chart',
    'role': 'img', 'aria-label': label});
}

// Four even steps from 0 to `max`: grid lines and their values at the left.
function yGrid(svg, {left, right, W, y, max, text}) {
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    svg.append(
        s('line', {'x1': left, 'x2': W - right, 'y1': y(v), 'y2': y(v), 'class': 'gridline'}),
        s('text', {'x': left - 6, 'y': y(v) + 4, 'text-anchor': 'end', 'class': 'tick'}, text(v)));
  }
}

// The x values under the axis; where they would run into each other, every second (or fourth ...)
// one is left out, the last always kept.
function xTicks(svg, ticks, baseline) {
  const widest = Math.max(...ticks.map((tick) => tick.text.length)) * 7.5 + 6;
  const spacing = ticks.length > 1 ? Math.abs(ticks[1].x - ticks[0].x) : widest;
  const every = Math.max(1, Math.ceil(widest / spacing));
  const last = ticks.length - 1;
  ticks.forEach((tick, i) => {
    if (i !== last && (i % every !== 0 || last - i < every)) return;
    svg.append(s('text', {'x': tick.x, 'y': baseline, 'text-anchor': 'middle', 'class': 'tick'},
        tick.text));
  });
}

function xTitle(text, x, y) {
  return s('text', {x, y, 'text-anchor': 'middle', 'class': 'axis x-title'}, text);
}

// A chart's y-axis title, turned to run up the left edge beside the ticks.
function yTitle(text, top, bottom) {
  const mid = (top + bottom) / 2;
  return s('text', {'x': 14, 'y': mid, 'text-anchor': 'middle', 'class': 'axis y-title',
    'transform': `rotate(-90 14 ${mid})`}, text);
}

// The axis top: the next 1, 2, 2.5 or 5 times a power of ten (four even ticks).
function niceCeiling(value) {
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 2.5, 5, 10].map((m) => m * power).find((top) => top >= value);
}

function scaleTable(points, gpus) {
  const counts = [...new Set(points.map((p) => p.gpus))].sort((a, b) => a - b);
  const cell = (p) => {
    if (!p) return h('td', {}, '–');
    if (p.verdict === 'does-not-fit') return h('td', {}, verdictBadge(p.verdict));
    return h('td', {'data-gpu': p.gpu, 'data-count': p.gpus},
        figure('tokens_per_second', p.tokens_per_second,
            format.tokensPerSecond(p.tokens_per_second)), h('br'),
        figure('scaling_efficiency', p.scaling_efficiency, format.percent(p.scaling_efficiency)),
        h('br'),
        h('span', {'class': 'small'}, p.gpus === 1 ? t('link_none') : `${p.link}, ${p.strategy}`));
  };
  const rows = counts.map((n) => h('tr', {}, h('th', {'scope': 'row'}, `${n} × `),
      gpus.map((gpu) => cell(points.find((p) => p.gpu === gpu && p.gpus === n)))));
  return table([t('cards_word'), ...gpus.map(shortName)], rows);
}

// ---- exports: every table as CSV and JSON, made here from the figures it shows ----------------

// A cell's data: its figures' raw values (data-value: the API's numbers, GB = 1e9 bytes, seconds,
// fractions) and verdicts; a cell without one, its text.
function cellData(cell) {
  const marks = [...cell.querySelectorAll('[data-figure], [data-verdict]')];
  const raw = (el) => {
    const text = el.dataset.figure ? el.dataset.value : el.dataset.verdict;
    return text !== '' && text !== undefined && Number.isFinite(Number(text)) ? Number(text) : text;
  };
  if (!marks.length) return cell.textContent.replace(/\s+/g, ' ').trim();
  if (marks.length === 1 && marks[0].dataset.figure) return raw(marks[0]);
  return Object.fromEntries(marks.map((el) => [el.dataset.figure ?? 'verdict', raw(el)]));
}

// {columns, rows}: one object per body row, keyed by the column headings.
function tableData(tableEl) {
  const columns = [...(tableEl.tHead?.rows[0]?.cells ?? [])].map((c, i) =>
    c.textContent.replace(/[▲▼]/g, '').replace(/\s+/g, ' ').trim() || `column ${i + 1}`);
  const rows = [...tableEl.tBodies].flatMap((body) => [...body.rows]).map((tr) =>
    Object.fromEntries([...tr.cells].map((cell, i) => [columns[i] ?? `column ${i + 1}`,
      cellData(cell)])));
  return {columns, rows};
}

// CSV with a comma between fields and a decimal point in numbers, in both languages (a German
// spreadsheet asks which separator on import); a cell of several figures spreads over columns.
function tableCsv({columns, rows}) {
  const keysOf = (column) => [...new Set(rows.flatMap((r) =>
    (r[column] !== null && typeof r[column] === 'object' ? Object.keys(r[column]) : [])))];
  const header = [];
  const getters = [];
  for (const column of columns) {
    const keys = keysOf(column);
    if (rows.some((r) => r[column] !== undefined && typeof r[column] !== 'object')) {
      header.push(column);
      getters.push((r) => (typeof r[column] === 'object' ? '' : r[column]));
    }
    for (const key of keys) {
      header.push(`${column}: ${key}`);
      getters.push((r) => (typeof r[column] === 'object' ? r[column]?.[key] : ''));
    }
  }
  const field = (value) => {
    const text = value === undefined || value === null ? '' : String(value);
    return /[",\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return [header, ...rows.map((r) => getters.map((get) => get(r)))]
      .map((line) => line.map(field).join(',')).join('\r\n') + '\r\n';
}

function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], {type}));
  const link = h('a', {'href': url, 'download': name, 'hidden': true});
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// A CSV and a JSON button under each table in `container`; `name` names the files.
function addExports(container, name) {
  for (const tableEl of container.querySelectorAll('table')) {
    if (tableEl.closest('dialog')) continue;
    const wrap = tableEl.closest('.table-wrap') ?? tableEl;
    const gpu = wrap.closest('[data-gpu]')?.dataset.gpu;
    const file = `ftplan-${name}${gpu && !wrap.closest('#plan') ? `-${gpu}` : ''}`;
    const csv = h('button', {'type': 'button', 'class': 'export', 'data-export': 'csv',
      'data-file': `${file}.csv`, 'aria-label': t('export_csv_label', file)}, 'CSV');
    const json = h('button', {'type': 'button', 'class': 'export', 'data-export': 'json',
      'data-file': `${file}.json`, 'aria-label': t('export_json_label', file)}, 'JSON');
    csv.addEventListener('click', () =>
      download(`${file}.csv`, 'text/csv;charset=utf-8', tableCsv(tableData(tableEl))));
    json.addEventListener('click', () => download(`${file}.json`, 'application/json',
        `${JSON.stringify({table: file, lang: app.lang, units: t('export_units'),
          ...tableData(tableEl)}, null, 2)}\n`));
    wrap.after(h('p', {'class': 'exports small'}, `${t('export')} `, csv, ' ', json,
        ` ${t('export_note')}`));
  }
}

// ---- 5. errors next to the fields they name ----------------------------------------------------

// error.field (the CLI's option name with '_') -> the id of the message slot beside that input.
const FIELD_SLOTS = {
  model: 'model', config: 'config', method: 'method', adapter: 'method', objective: 'objective',
  precompute_ref: 'objective', rank: 'rank', targets: 'targets',
  optimizer: 'optimizer', precision: 'precision', seq: 'seq', micro_batch: 'micro_batch',
  group_size: 'group_size', prompt_len: 'prompt_len', completion_len: 'completion_len',
  prompts_per_step: 'group_size', engine_memory: 'objective', rollout: 'objective',
  recompute: 'recompute', shard: 'shard', gpu: 'cards', gpus: 'cards', runs: 'runs',
  stack: 'stack', attention: 'attention', compile: 'compile', no_compile: 'compile', loss: 'loss',
  optimizer_impl: 'optimizer_impl', experts_impl: 'experts_impl',
  peak: 'peak', grad_accum: 'grad_accum', recompute_layers: 'recompute_layers',
  lora_dropout: 'lora_dropout',
  quant_block: 'quant_block', quant_group: 'quant_block', base_quant: 'base_quant',
  train_modules: 'train_modules', seq_mean: 'seq_mean', seq_max: 'seq', lengths: 'lengths',
  no_double_quant: 'advanced', offload_optimizer: 'advanced', offload_params: 'advanced',
  offload_activations: 'advanced', no_offload_activations: 'advanced', pure_bf16: 'advanced',
  optimizer_in_backward: 'advanced', quant_keeps_input: 'advanced',
  sync_each_batch: 'advanced', non_reentrant: 'advanced', packing: 'advanced',
  padding_free: 'advanced',
};

function slotFor(field, inputs) {
  if (inputs.source === 'paste' && (field === 'model' || !(field in FIELD_SLOTS))) {
    return field ? 'config' : 'form';
  }
  return FIELD_SLOTS[field] ?? 'form';
}

// The inference inputs' own slots; the model's errors go where the fit's do, any other field's
// stay in the inference result.
const INFER_SLOTS = {gpu: 'infer_gpu', mig: 'infer_gpu', gpus: 'infer_gpus', context: 'context',
  batch: 'batch', weights: 'weights', kv_dtype: 'kv_dtype'};

function inferSlot(field, inputs) {
  if (field in INFER_SLOTS) return INFER_SLOTS[field];
  if (field === 'model' || field === 'config') return slotFor(field, inputs);
  return null;
}

function reportInferError(result, inputs) {
  if (!result || result.ok || !result.data.error) return;
  const {field, message} = result.data.error;
  const slot = inferSlot(field ?? '', inputs);
  if (slot) showFieldError(slot, message);
}

// The server's message where no input shows it; else a pointer to the input that does.
function inferErrorNote(result, inputs) {
  if (!result) return errorNote(result);
  const error = result.data.error ?? {message: `HTTP ${result.status}`};
  const placed = inferSlot(error.field ?? '', inputs) !== null;
  return h('p', {'class': 'note error', 'data-error': error.code ?? ''},
      placed ? t('error_elsewhere') : error.message);
}

// The matrix's own inputs; the run's errors are shown where the fit's are.
const MATRIX_SLOTS = {price_per_card_hour: 'matrix_prices', tokens: 'matrix_tokens',
  max_price: 'matrix_max_price', rentable: 'matrix_cards', nvlink: 'matrix_cards'};

function reportMatrixError(result, inputs) {
  if (!result || result.ok || !result.data.error) return;
  const {field, message} = result.data.error;
  if (field in MATRIX_SLOTS) showFieldError(MATRIX_SLOTS[field], message);
  else reportError(result, inputs);
}

function matrixErrorNote(result, inputs) {
  if (!result) return errorNote(result);
  const error = result.data.error ?? {message: `HTTP ${result.status}`};
  const field = error.field ?? '';
  const placed = field in MATRIX_SLOTS || slotFor(field, inputs) !== 'form';
  return h('p', {'class': 'note error', 'data-error': error.code ?? ''},
      placed ? t('error_elsewhere') : error.message);
}

function clearFieldErrors() {
  for (const el of document.querySelectorAll('.field-error')) {
    if (el.id === 'error-runs') continue;
    el.hidden = true;
    el.textContent = '';
  }
  for (const el of document.querySelectorAll('[aria-invalid]')) {
    if (el.id !== 'runs') el.removeAttribute('aria-invalid');
  }
}

function showFieldError(slot, message) {
  const el = slot === 'form' ? $('form-error') : $(`error-${slot}`);
  if (el.textContent.includes(message)) return;
  el.textContent = el.textContent ? `${el.textContent} ${message}` : message;
  el.hidden = false;
  // An error in the advanced options opens their group.
  if ($('advanced').contains(el)) $('advanced').open = true;
  // cards, targets and the advanced switches are groups: their message slot is enough
  const input = ['form', 'cards', 'targets', 'advanced'].includes(slot) ? null : $(slot);
  if (input) input.setAttribute('aria-invalid', 'true');
}

function reportError(result, inputs) {
  if (!result || result.ok || !result.data.error) return;
  const {field, message} = result.data.error;
  showFieldError(slotFor(field, inputs), message);
}

// ---- 6. the update cycle ------------------------------------------------------------------------

const app = {
  lang: DEFAULTS.lang,
  unit: DEFAULTS.unit, // MEMORY_UNITS' key: how memory figures are shown
  catalog: {gpus: [], models: []},
  seedRuns: '',
  results: {fits: [], steps: {}, rl: {}, scale: null, migs: {}, infer: null, matrix: null,
    plan: null, limits: {}},
  matrixSort: DEFAULTS.matrix_sort,
  inputs: null,
  controller: null,
  planController: null,
  limitsAsked: new Set(), // which of SOLVES the reader asked for (their buttons)
  explainOpener: null, // the figure whose derivation the dialog shows: the focus returns to it
  planCards: null, // the card types of the last plan ('h200-nvl,l40s'); null: none asked yet
  reportUrl: null, // the Blob URL of the last report made for the user's runs
  timer: 0,
  planTimer: 0,
};
const DEBOUNCE_MS = 250;

function debounce(timerKey, fn, ms = DEBOUNCE_MS) {
  clearTimeout(app[timerKey]);
  app[timerKey] = setTimeout(fn, ms);
}

function inputsChanged() {
  const inputs = readForm();
  history.replaceState(null, '', `#${encodeInputs(inputs)}`);
  showModelSource(inputs.source);
  showAdapterOptions(inputs.method);
  showObjectiveOptions(inputs.objective);
  showLengths(inputs);
  $('add-run').disabled = inputs.source === 'paste';
  setBusy('busy', true);
  debounce('timer', () => update(inputs));
  // The plan and the report try the form's card types: a change of cards plans again.
  if (app.planCards !== null && uniqueGpus(inputs).join(',') !== app.planCards) {
    setBusy('planBusy', true);
    debounce('planTimer', () => updatePlan($('runs').value), 600);
  }
}

// body[data-busy] / body[data-plan-busy]: "true" from an input until its results are all shown
// (for tests and tools that wait for the page).
function setBusy(name, busy) {
  document.body.dataset[name] = String(busy);
}

// Results of every section set to `value` (null: still calculating); the plan is kept.
function emptyResults(inputs, value) {
  const perGpu = () => Object.fromEntries(uniqueGpus(inputs).map((gpu) => [gpu, value]));
  // The matrix keeps its last table while the next one is calculated (a sort keeps its place).
  return {fits: inputs.cards.map(() => value), steps: perGpu(), rl: perGpu(), scale: value,
    migs: perGpu(), infer: value, matrix: value ?? app.results.matrix, plan: app.results.plan,
    limits: {}};
}

// Sends every request for the current inputs; a newer update aborts the older one's requests.
function update(inputs) {
  app.controller?.abort();
  const controller = new AbortController();
  app.controller = controller;
  app.inputs = inputs;
  app.results = emptyResults(inputs, null);
  clearFieldErrors();
  if (inputs.source === 'paste' && !inputs.config.trim()) {
    // Nothing to ask the server yet: every section waits for the pasted text.
    const waiting = failure(t('config_empty'), 'config');
    app.results = emptyResults(inputs, waiting);
    reportError(waiting, inputs);
    renderResults();
    setBusy('busy', false);
    return;
  }
  renderResults();
  setBusy('busy', true);
  const body = workloadBody(inputs);
  const requests = [];
  const track = (promise, store, report = reportError) => requests.push(promise.then((result) => {
    if (controller.signal.aborted) return;
    store(result);
    report(result, inputs);
    renderResults();
  }).catch((error) => {
    if (error.name === 'AbortError') return;
    store(failure(`${t('request_failed')} ${error.message}`));
    renderResults();
  }));
  inputs.cards.forEach((card, i) => {
    track(post('/api/fit', cardBody(inputs, card), controller.signal),
        (r) => { app.results.fits[i] = r; });
  });
  const gpus = uniqueGpus(inputs);
  for (const gpu of gpus) {
    track(post('/api/step', {...body, gpu}, controller.signal), (r) => {
      app.results.steps[gpu] = r;
    });
    if (isOnline(inputs)) {
      // The whole step of an online objective (rollout, weight sync, scoring, training).
      track(post('/api/scale', {...body, gpu, gpus: 1}, controller.signal), (r) => {
        app.results.rl[gpu] = r;
      });
    }
    if (hasMig(gpu)) {
      track(post('/api/mig', {...body, gpu}, controller.signal), (r) => {
        app.results.migs[gpu] = r;
      });
    }
  }
  const scaleBody = {...body, gpu: gpus.slice(0, 2), sweep: true};
  if (inputs.shard) scaleBody.shard = inputs.shard;
  track(post('/api/scale', scaleBody, controller.signal), (r) => { app.results.scale = r; });
  track(post('/api/infer', inferBody(inputs), controller.signal), (r) => { app.results.infer = r; },
      reportInferError);
  if (!isOnline(inputs)) {
    track(post('/api/matrix', matrixBody(inputs), controller.signal),
        (r) => { app.results.matrix = r; }, reportMatrixError);
  }
  limitsRequests(inputs, controller, track);
  Promise.allSettled(requests).then(() => {
    if (app.controller === controller) setBusy('busy', false);
  });
}

// The query of /api/plan and /api/report: the page's language and the form's card types, which
// replace the runs document's candidates (a run's own `gpus` stay its own).
function runsQuery(inputs, extra = {}) {
  const params = new URLSearchParams({...extra, lang: app.lang});
  const gpus = uniqueGpus(inputs).filter(Boolean);
  if (gpus.length) params.set('gpu', gpus.join(','));
  return params.toString();
}

function updatePlan(runsText) {
  app.planController?.abort();
  const controller = new AbortController();
  app.planController = controller;
  app.results.plan = null;
  const inputs = readForm();
  app.planCards = uniqueGpus(inputs).join(',');
  setBusy('planBusy', true);
  renderPlan();
  const url = `/api/plan?${runsQuery(inputs)}`;
  request('POST', url, runsText, controller.signal, 'application/yaml').then((result) => {
    if (controller.signal.aborted) return;
    app.results.plan = result;
    renderPlan();
    setBusy('planBusy', false);
  }).catch((error) => {
    if (error.name === 'AbortError') return;
    app.results.plan = failure(`${t('request_failed')} ${error.message}`);
    renderPlan();
    setBusy('planBusy', false);
  });
}

function renderResults() {
  const inputs = app.inputs;
  const r = app.results;
  $('memory').replaceChildren(...inputs.cards.map((card, i) => render.memory(card, r.fits[i], i)));
  const gpus = uniqueGpus(inputs);
  const verdictOf = (gpu) => {
    const i = inputs.cards.findIndex((c) => c.gpu === gpu && Number(c.count) === 1);
    return i >= 0 && r.fits[i]?.ok ? r.fits[i].data.verdict : undefined;
  };
  const online = (gpu) => (isOnline(inputs) ? r.rl[gpu] : undefined);
  $('step').replaceChildren(...gpus.map((gpu) =>
    render.step(gpu, r.steps[gpu], verdictOf(gpu), online(gpu))));
  $('scale').replaceChildren(render.scale(r.scale, $('metric').value, gpus.length));
  $('mig').replaceChildren(...gpus.map((gpu) => render.mig(gpu, r.migs[gpu])));
  $('infer').replaceChildren(render.infer(r.infer, inputs));
  $('limits').replaceChildren(...renderLimits(inputs, r.limits));
  for (const [id, name] of [['scale', 'scaling'], ['mig', 'mig'], ['infer', 'inference'],
    ['limits', 'limits']]) addExports($(id), name);
  // A sort heading that had the focus keeps it in the new table.
  const focused = $('matrix').contains(document.activeElement) ?
    document.activeElement.dataset.sort : undefined;
  $('matrix').replaceChildren(render.matrix(r.matrix, inputs));
  addExports($('matrix'), 'every-card');
  if (focused) $('matrix').querySelector(`button.sort[data-sort="${focused}"]`)?.focus();
  layoutCharts();
  renderStatus(inputs, r);
}

// The summary (#summary: the one live region of the results; a bar at the bottom of a phone's
// screen): per card row its verdict, headroom or shortfall and step time, written once every fit
// and step of the edit is in, so that a reader hears one summary per edit.
function renderStatus(inputs, r) {
  const gpus = uniqueGpus(inputs);
  if (r.fits.some((f) => !f) || gpus.some((gpu) => !r.steps[gpu])) return;
  const rows = inputs.cards.map((card, i) => {
    const f = r.fits[i];
    const name = `${shortName(card.gpu)} × ${card.count}`;
    if (!f.ok) {
      return h('p', {'class': 'summary-row', 'data-gpu': card.gpu}, `${name}: `,
          h('span', {'class': 'error'}, f.data.error?.message ?? ''));
    }
    const m = f.data.memory_GB;
    const b = f.data.memory_bytes;
    const step = r.steps[card.gpu];
    return h('p', {'class': 'summary-row', 'data-gpu': card.gpu, 'data-count': card.count},
        h('span', {'class': 'summary-card'}, `${name}: `), verdictBadge(f.data.verdict), ' · ',
        figure(m.headroom >= 0 ? 'summary_headroom' : 'summary_shortfall', Math.abs(m.headroom),
            roomText(m.headroom, b.headroom), Math.abs(b.headroom)),
        step.ok ? [' · ', figure('summary_step_seconds', step.data.step_seconds,
            t('summary_step', format.seconds(step.data.step_seconds)))] : null);
  });
  const box = $('summary');
  const text = rows.map((row) => row.textContent).join(' ');
  if (box.dataset.text === text) return;
  box.dataset.text = text;
  box.replaceChildren(h('span', {'class': 'sr-only'}, t('summary_label')), ...rows);
}

function renderPlan() {
  const result = app.results.plan;
  $('plan').replaceChildren(render.plan(result));
  addExports($('plan'), 'plan');
  if (app.planCards !== null) {
    $('plan-cards').textContent = t('plan_cards',
        app.planCards.split(',').filter(Boolean).map(shortName).join(', '));
  }
  const slot = $('error-runs');
  const error = result && !result.ok ? result.data.error : null;
  const showHere = error && error.field && error.field !== 'command';
  slot.hidden = !showHere;
  slot.textContent = showHere ? error.message : '';
  if (showHere) $('runs').setAttribute('aria-invalid', 'true');
  else $('runs').removeAttribute('aria-invalid');
}

// ---- language ----------------------------------------------------------------------------------

const ENGLISH_STATIC = {};

function applyLanguage(lang) {
  app.lang = lang;
  document.documentElement.lang = lang;
  for (const el of document.querySelectorAll('[data-i18n]')) {
    const key = el.dataset.i18n;
    if (!(key in ENGLISH_STATIC)) ENGLISH_STATIC[key] = el.textContent;
    el.textContent = WORDS[lang]?.[key] ?? ENGLISH_STATIC[key];
  }
  for (const el of document.querySelectorAll('[data-i18n-placeholder]')) {
    const key = el.dataset.i18nPlaceholder;
    if (!(key in ENGLISH_STATIC)) ENGLISH_STATIC[key] = el.placeholder;
    el.placeholder = WORDS[lang]?.[key] ?? ENGLISH_STATIC[key];
  }
  labelCardRows();
  refreshOptionTexts();
  if (app.inputs) renderResults();
  renderPlan();
}

// Menu entries with figures: in the language's number format.
const gpuOptionText = (gpu) =>
  `${gpu.name} — ${format.GB(gpu.memory.visible_GB, gpu.memory.visible_bytes)}`;
const modelOptionText = (model) =>
  `${model.name} (${format.billions(model.params_total)} ${t('params')})`;

function refreshOptionTexts() {
  for (const select of $('cards').querySelectorAll('select')) {
    for (const option of select.options) option.textContent = gpuOptionText(gpuInfo(option.value));
  }
  for (const option of $('infer_gpu').options) {
    option.textContent = gpuOptionText(gpuInfo(option.value));
  }
  for (const option of $('model').options) {
    option.textContent = modelOptionText(app.catalog.models.find((m) => m.id === option.value));
  }
}

// ---- start-up ---------------------------------------------------------------------------------

async function loadCatalog() {
  const [gpus, models, seed] = await Promise.all([
    request('GET', '/api/gpus'), request('GET', '/api/models'),
    limitedFetch('/examples/seed-runs.yaml', {})]);
  if (!gpus.ok || !models.ok) throw new Error('the catalog could not be loaded');
  app.catalog = {gpus: gpus.data.gpus, models: models.data.models};
  app.seedRuns = seed.reply.ok ? seed.text : '';
  for (const model of app.catalog.models) {
    $('model').append(new Option(modelOptionText(model), model.id));
  }
  for (const gpu of app.catalog.gpus) $('infer_gpu').append(new Option(gpuOptionText(gpu), gpu.id));
}

// ---- files people already have: a config.json, a trainer file, a Hugging Face id -----------------

// The form's value for a setting the trainer file gave (`as`: the option's API key); the fit
// reply's own value where it states one (normalized: targets as q,k,v,...), else the file's.
function applySetting(key, value) {
  const form = $('form');
  if (key === 'targets') {
    const wanted = String(value).split(',');
    for (const box of form.querySelectorAll('input[name=target]')) box.checked = wanted.includes(box.value);
    return true;
  }
  const field = form.elements.namedItem(key);
  if (!field || field instanceof RadioNodeList) return false;
  if (field.type === 'checkbox') {
    field.checked = value === true || value === 'true';
    return true;
  }
  if (field.tagName === 'SELECT' && ![...field.options].some((o) => o.value === String(value))) {
    return false;
  }
  field.value = String(value);
  return true;
}

// A config.json becomes the pasted model; a trainer file's settings (as `ftplan fit --from`
// reads them, through /api/fit) fill the form's fields.
async function importText(name, text) {
  const status = $('import-status');
  let config = null;
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && ('model_type' in parsed || 'architectures' in parsed) &&
        'hidden_size' in parsed) config = parsed;
  } catch { /* YAML, or JSON of a trainer: read by the server */ }
  if (config) {
    document.querySelector('input[name=source][value=paste]').checked = true;
    $('config').value = text;
    status.textContent = t('import_config', name, config.model_type ?? '?');
    inputsChanged();
    return;
  }
  const inputs = readForm();
  const card = inputs.cards[0] ?? {gpu: 'h200-nvl', count: '1'};
  let result = await post('/api/fit', {from: text, gpu: card.gpu});
  // A trainer file that names no model (DeepSpeed, accelerate) applies to the form's model.
  if (!result.ok && result.data.error?.field === 'model' && inputs.source === 'catalog') {
    result = await post('/api/fit', {from: text, gpu: card.gpu, model: inputs.model});
  }
  if (!result.ok) {
    status.textContent = t('import_failed', name, result.data.error?.message ?? `HTTP ${result.status}`);
    return;
  }
  const fit = result.data;
  const taken = [];
  if (fit.model && app.catalog.models.some((m) => m.id === fit.model)) {
    document.querySelector('input[name=source][value=catalog]').checked = true;
    $('model').value = fit.model;
    taken.push('model');
  }
  for (const used of fit.from?.used ?? []) {
    if (!used.applied || used.as === 'model' || taken.includes(used.as)) continue;
    const value = used.as in fit && typeof fit[used.as] !== 'object' ? fit[used.as] : used.to;
    if (applySetting(used.as, value)) taken.push(used.as);
  }
  status.textContent = t('import_trainer', name, fit.from?.format ?? '?', taken.length,
      taken.join(', '), fit.from?.ignored?.length ?? 0);
  inputsChanged();
}

async function importFile(file) {
  if (!file) return;
  if (file.size > 1 << 20) {
    $('import-status').textContent = t('import_failed', file.name, '> 1 MiB');
    return;
  }
  await importText(file.name, await file.text());
}

// A Hugging Face id: the catalog's model of that repository, or what to do instead.
function importHubId(id) {
  const wanted = id.trim().toLowerCase();
  if (!wanted) return;
  const model = app.catalog.models.find((m) => m.hf_repo?.toLowerCase() === wanted);
  if (!model) {
    $('import-status').textContent = t('hf_missing', id.trim());
    return;
  }
  document.querySelector('input[name=source][value=catalog]').checked = true;
  $('model').value = model.id;
  $('import-status').textContent = t('hf_found', id.trim(), model.id);
  inputsChanged();
}

function bindEvents() {
  $('import-file').addEventListener('change', (e) => importFile(e.target.files[0]));
  $('hf-id').addEventListener('change', (e) => importHubId(e.target.value));
  $('form').addEventListener('dragover', (e) => e.preventDefault());
  $('form').addEventListener('drop', (e) => {
    e.preventDefault();
    importFile(e.dataTransfer?.files?.[0]);
  });
  $('form').addEventListener('input', inputsChanged);
  $('form').addEventListener('change', inputsChanged);
  $('form').addEventListener('submit', (e) => e.preventDefault());
  // The inference inputs sit beside their results, outside the form.
  $('infer-inputs').addEventListener('input', inputsChanged);
  $('infer-inputs').addEventListener('change', inputsChanged);
  $('matrix-inputs').addEventListener('input', inputsChanged);
  $('matrix-inputs').addEventListener('change', inputsChanged);
  $('add-card').addEventListener('click', () => {
    const last = readForm().cards.at(-1);
    addCardRow({gpu: last?.gpu === 'h200-nvl' ? 'rtx-pro-6000' : 'h200-nvl', count: '1'});
    $('cards').lastElementChild.querySelector('select').focus();
    inputsChanged();
  });
  $('metric').addEventListener('change', () => {
    history.replaceState(null, '', `#${encodeInputs(readForm())}`);
    renderResults();
  });
  $('lang').addEventListener('change', () => {
    applyLanguage($('lang').value);
    history.replaceState(null, '', `#${encodeInputs(readForm())}`);
    // The reasons come from the server in the page's language: ask again.
    inputsChanged();
    if (app.results.plan) updatePlan($('runs').value);
  });
  // The unit changes how memory is shown, not what is calculated: the results are drawn again.
  $('unit').addEventListener('change', () => {
    app.unit = $('unit').value;
    history.replaceState(null, '', `#${encodeInputs(readForm())}`);
    refreshOptionTexts();
    if (app.inputs) renderResults();
  });
  $('runs').addEventListener('input', () => {
    setBusy('planBusy', true);
    history.replaceState(null, '', `#${encodeInputs(readForm())}`);
    debounce('planTimer', () => updatePlan($('runs').value), 600);
  });
  $('add-run').addEventListener('click', addRunToList);
  $('max-micro-batch').addEventListener('click', () => askLimits('micro-batch'));
  $('max-seq').addEventListener('click', () => askLimits('seq'));
  $('explain-close').addEventListener('click', () => $('explain-dialog').close());
  $('explain-dialog').addEventListener('close', () => {
    delete $('explain-dialog').dataset.figure;
    // The figure that opened it, or its replacement in the same place after an update.
    const id = app.explainOpener?.dataset.explain;
    if (app.explainOpener?.isConnected) app.explainOpener.focus();
    else if (id) document.querySelector(`button.explain[data-explain="${id}"]`)?.focus();
  });
  $('report-html').addEventListener('click', () => makeReport('html'));
  $('report-md').addEventListener('click', () => makeReport('md'));
  $('reset-runs').addEventListener('click', () => {
    $('runs').value = app.seedRuns;
    $('runs').dispatchEvent(new Event('input'));
  });
  $('copy-link').addEventListener('click', copyLink);
  // The inputs live in the URL's fragment: the skip link moves the focus to the results instead
  // of replacing the fragment with #results (which would reset every input).
  document.querySelector('a.skip').addEventListener('click', (e) => {
    e.preventDefault();
    focusResults();
  });
  window.addEventListener('hashchange', restoreFromUrl);
}

function addRunToList() {
  const text = $('runs').value.replace(/\s*$/, '\n');
  const indent = (/^([ \t]*)- name:/m.exec(text) ?? ['', '  '])[1];
  $('runs').value = `${text}${runYaml(readForm(), indent, runNames(text))}\n`;
  $('runs').dispatchEvent(new Event('input'));
}

// POST /api/report with the runs of the list and the form's card types: the report comes back
// as a file of its own, offered as a Blob URL (opened in a new tab, or saved). The report's one
// inline style sheet is allowed by its hash in this page's Content-Security-Policy, which a Blob
// document inherits.
async function makeReport(format) {
  const box = $('report-result');
  const inputs = readForm();
  box.replaceChildren(h('p', {'class': 'note loading'}, t('report_making')));
  setBusy('reportBusy', true);
  let reply;
  try {
    reply = await limitedFetch(`/api/report?${runsQuery(inputs, {format})}`, {method: 'POST',
      headers: {'Content-Type': 'application/yaml'}, body: $('runs').value});
  } catch (error) {
    box.replaceChildren(h('p', {'class': 'note error'}, `${t('request_failed')} ${error.message}`));
    setBusy('reportBusy', false);
    return;
  }
  if (!reply.reply.ok) {
    let message = `HTTP ${reply.reply.status}`;
    try {
      message = JSON.parse(reply.text).error.message;
    } catch { /* not the API's JSON error: the status says it */ }
    box.replaceChildren(h('p', {'class': 'note error', 'data-error': String(reply.reply.status)},
        `${t('report_failed')} `, h('span', {'lang': 'en'}, message)));
    setBusy('reportBusy', false);
    return;
  }
  if (app.reportUrl) URL.revokeObjectURL(app.reportUrl);
  const type = format === 'md' ? 'text/markdown' : 'text/html';
  app.reportUrl = URL.createObjectURL(new Blob([reply.text], {type: `${type};charset=utf-8`}));
  const file = `ftplan-report-${app.lang}.${format === 'md' ? 'md' : 'html'}`;
  const links = [];
  if (format === 'html') {
    links.push(h('a', {'id': 'report-open', 'href': app.reportUrl, 'target': '_blank',
      'rel': 'noopener'}, t('report_open')), ' · ');
  }
  links.push(h('a', {'id': 'report-save', 'href': app.reportUrl, 'download': file},
      t('report_save', file)));
  box.replaceChildren(h('p', {'class': 'note'}, t('report_ready'), ' ', links));
  box.querySelector('a').focus();
  setBusy('reportBusy', false);
}

async function copyLink() {
  try {
    await navigator.clipboard.writeText(location.href);
    $('copy-status').textContent = t('copied');
  } catch {
    $('copy-status').textContent = t('copy_failed');
  }
}

function restoreFromUrl() {
  const inputs = decodeInputs(location.hash);
  if (app.inputs && encodeInputs(inputs) === encodeInputs(readForm())) return;
  writeForm(inputs);
  applyLanguage(inputs.lang);
  update(inputs);
  updatePlan($('runs').value);
}

async function start() {
  try {
    await loadWords();
    await loadCatalog();
  } catch (error) {
    $('form-error').textContent = `${t('request_failed')} ${error.message}`;
    $('form-error').hidden = false;
    return;
  }
  bindEvents();
  restoreFromUrl();
  document.body.dataset.ready = 'true';
}

start();
