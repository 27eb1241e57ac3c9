// The HTML report (`ftplan report --format html`, served as /api/report) in a real browser: it
// renders offline, its SVG charts are drawn and visible, it is the CLI's file byte for byte, and
// it reads at phone width. Registered by run.mjs, which supplies the browser, the server and the
// checks (every request is recorded there; the final tests assert that none left the origin and
// that the console stayed clean).
import {mkdirSync} from 'node:fs';
import {join} from 'node:path';

const SECTIONS = ['cards', 'memory', 'roofline', 'rates', 'multi-card', 'mig', 'recommendations',
  'method'];

// What the browser made of the report: sections, charts (drawn size and contents), overflow.
async function rendered(page) {
  return page.evaluate(() => {
    const charts = [...document.querySelectorAll('figure svg')].map((svg) => {
      const box = svg.getBoundingClientRect();
      const style = getComputedStyle(svg);
      return {
        id: svg.getAttribute('aria-labelledby')?.split(' ')[0].replace(/-title$/, ''),
        width: box.width,
        height: box.height,
        visible: style.display !== 'none' && style.visibility !== 'hidden' && box.width > 0,
        labels: svg.querySelectorAll('text').length,
        bars: [...svg.querySelectorAll('rect')].filter((r) => r.getBBox().width > 0).length,
        lines: svg.querySelectorAll('polyline').length,
        marks: svg.querySelectorAll('circle, path, rect').length,
      };
    });
    return {
      lang: document.documentElement.lang,
      title: document.querySelector('h1')?.textContent ?? '',
      sections: [...document.querySelectorAll('main > section')].map((s) => s.id),
      tables: document.querySelectorAll('table').length,
      charts,
      scrollWidth: document.documentElement.scrollWidth,
      viewWidth: window.innerWidth,
    };
  });
}

export function reportTests({test, check, equal, run, BIN, SCREENSHOTS}) {
  async function open(env, lang, viewport) {
    const page = await env.context.newPage();
    await page.setViewportSize(viewport);
    page.on('pageerror', (error) => env.context.pageErrors.push(`report: ${error.message}`));
    page.on('console', (message) => {
      if (['error', 'warning'].includes(message.type())) {
        env.context.pageErrors.push(`report (${lang}): ${message.text()}`);
      }
    });
    const reply = await page.goto(`${env.origin}/api/report?format=html&lang=${lang}`);
    equal(reply.status(), 200, `report (${lang}): HTTP status`);
    await page.waitForLoadState('load');
    return page;
  }

  test('report: the HTML report renders offline with its SVG charts, in English and German; ' +
      'screenshots', async (env) => {
    mkdirSync(SCREENSHOTS, {recursive: true});
    const requestsBefore = env.requests.length;
    for (const lang of ['en', 'de']) {
      const page = await open(env, lang, {width: 1280, height: 900});
      const r = await rendered(page);
      equal(r.lang, lang, 'the document language');
      equal(r.sections, SECTIONS, `report (${lang}): sections in the seed's order`);
      check(r.title.includes('H200 NVL') && r.title.includes('RTX PRO 6000'),
          `report (${lang}): the title names both cards, got "${r.title}"`);
      check(r.tables >= 15, `report (${lang}): only ${r.tables} tables`);
      // Memory bars, the roofline and one scaling chart per run that needs several cards.
      equal(r.charts.map((c) => c.id.replace(/-[0-9]+$/, '')),
          ['chart-memory', 'chart-roofline', 'chart-scaling', 'chart-scaling'],
          `report (${lang}): the charts`);
      for (const c of r.charts) {
        check(c.visible && c.width >= 600 && c.height >= 200,
            `report (${lang}): chart ${c.id} drawn at ${c.width}×${c.height}`);
        check(c.labels >= 8, `report (${lang}): chart ${c.id} has ${c.labels} text labels`);
      }
      const [memory, roofline, ...scaling] = r.charts;
      // A bar per run and card (and per sharded placement), each stacked from its parts.
      check(memory.bars >= 15, `report (${lang}): memory chart has ${memory.bars} bar segments`);
      // Two roofs, and the operations of one step as points on both cards.
      check(roofline.lines >= 2 && roofline.marks >= 40,
          `report (${lang}): roofline has ${roofline.lines} roofs, ${roofline.marks} marks`);
      for (const s of scaling) {
        check(s.lines >= 3, `report (${lang}): ${s.id} has ${s.lines} curves (NVLink, PCIe)`);
      }
      check(r.scrollWidth <= r.viewWidth,
          `report (${lang}): wider than the window (${r.scrollWidth} > ${r.viewWidth})`);
      await page.screenshot({path: join(SCREENSHOTS, `report-${lang}.png`), fullPage: true});
      // The served report is the file `ftplan report` writes.
      const served = await (await fetch(`${env.origin}/api/report?format=html&lang=${lang}`)).text();
      const {stdout} = await run(BIN, ['report', '--format', 'html', '--lang', lang],
          {maxBuffer: 64 << 20});
      check(served === stdout, `report (${lang}): the API's HTML differs from the CLI's`);
      await page.close();
    }
    // Only the report itself was requested: no style sheet, font, image or script from anywhere.
    const asked = env.requests.slice(requestsBefore).map((url) => new URL(url).pathname);
    equal([...new Set(asked)], ['/api/report'], 'requests made while showing the report');
  });

  test('report: at phone width (375 px) only the tables and charts scroll, not the page; chart ' +
      'text stays at least 10.5 px', async (env) => {
    const page = await open(env, 'de', {width: 375, height: 812});
    const r = await rendered(page);
    check(r.scrollWidth <= 375, `report: the page is ${r.scrollWidth} px wide at 375 px`);
    for (const c of r.charts) {
      check(c.visible && c.width >= 300, `report: chart ${c.id} is ${c.width} px wide at 375 px`);
    }
    // Each chart keeps its drawn width and scrolls sideways inside its figure; its labels are
    // rendered at the size they are set in (font size times the chart's scale on screen).
    const figures = await page.evaluate(() => [...document.querySelectorAll('figure')]
        .filter((f) => f.querySelector('svg')).map((f) => {
          const svg = f.querySelector('svg');
          const scale = svg.getScreenCTM().a;
          const sizes = [...svg.querySelectorAll('text')]
              .map((t) => parseFloat(getComputedStyle(t).fontSize) * scale);
          return {box: f.getBoundingClientRect().width, smallest: Math.min(...sizes)};
        }));
    check(figures.length >= 3, `report: only ${figures.length} charts`);
    for (const [i, f] of figures.entries()) {
      check(f.box <= 375, `report: figure ${i} is ${f.box} px wide at 375 px`);
      check(f.smallest >= 10.5, `report: chart ${i}'s smallest text is ${f.smallest.toFixed(1)} px`);
    }
    await page.screenshot({path: join(SCREENSHOTS, 'report-de-375.png'), fullPage: false});
    await page.close();
  });

  test('report: the calculator page\'s button makes the report in the page\'s language',
      async (env) => {
    const page = await env.context.newPage();
    await page.goto(`${env.origin}/#lang=de`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true', null,
        {timeout: 30000});
    await page.waitForFunction(() => document.body.dataset.busy === 'false', null,
        {timeout: 30000});
    await page.click('#report-html');
    await page.waitForFunction(() => document.body.dataset.reportBusy === 'false', null,
        {timeout: 60000});
    const [tab] = await Promise.all([env.context.waitForEvent('page'),
      page.click('#report-open')]);
    await tab.waitForLoadState('load');
    const r = await rendered(tab);
    equal(r.lang, 'de', 'the report\'s language');
    check(r.title.includes('für Fine-Tuning und Training'),
        `the report is the German one, got "${r.title}"`);
    await tab.close();
    await page.close();
  });
}
