// tests/web/page_test.mjs — the `archdb serve` page in a real browser: Debian's Chromium, driven by
// playwright-core (installed by `tools/install-deps --web` into tests/web/node_modules). Starts the real
// binary on a free port against a fresh database made from data/, then checks that the page loads (its first matrix
// with the page itself, drawn with no request to the API), colours
// a known ok and a known arch_absent cell as such, draws a non-answer differently, filters rows as you type,
// answers an intrinsic named in the filter from the census, finds any spelling of a name through /v1/search, shows
// a cell's evidence and lowered_to on click (and from a link of its own), labels featured targets as people say them,
// fits a 1,280 px screen (screenshots at 1,280 and 1,920 px, in ARCHDB_SCREENSHOTS or the test's temporary folder),
// and that a page of another origin cannot post to it.
//
// Run by ctest (Page.InChromium) with ARCHDB_BINARY set. ARCHDB_BROWSER_TESTS=0 turns it into a named skip
// (exit 77); a missing Chromium, node module or binary is a failure, never a pass.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserTest } from './browser.mjs';

const { binary, chromiumPath, chromium } = browserTest('page_test');

// Colours of the statuses (style.css): an answer is a solid colour, a non-answer is hatched.
const OK_COLOUR = 'rgb(183, 228, 185)';
const ARCH_ABSENT_COLOUR = 'rgb(244, 180, 176)';
const KEY = 'mfma.f32.4x4x4bf16.1k';

let work, server, base, browser, page;
const pageErrors = [];

async function startServer() {
  work = mkdtempSync(join(tmpdir(), 'archdb-page-'));
  const db = join(work, 'db.sqlite');
  const made = spawnSync(binary, ['--db', db, 'runs', '--limit', '1'], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`cannot create the database: ${made.stderr}`);
  server = spawn(binary, ['--db', db, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  server.stderr.on('data', (d) => { err += d; });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the server did not start: ${err}`)), 20000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^/\s]+)\//);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    server.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the server exited (${code}): ${err}`)); });
  });
}

function cell(key, target) { return page.locator(`td.cell[data-key="${key}"][data-target="${target}"]`); }
async function style(locator, property) {
  return locator.evaluate((e, p) => getComputedStyle(e).getPropertyValue(p), property);
}
async function open(fragment) {
  await page.goto(`${base}/#${fragment}`);
  await page.waitForSelector('#matrix tbody tr', { state: 'attached' });
}

before(async () => {
  base = await startServer();
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
});

after(async () => {
  if (browser) await browser.close();
  if (server && server.exitCode === null) {
    server.removeAllListeners('exit');
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the page loads the llvm22 matrix: one row per key, one column per target, grouped by family', async () => {
  await open('flavor=llvm22');
  assert.match(await page.title(), /archdb/);
  assert.equal(await page.locator('#flavor').inputValue(), 'llvm22');
  const rows = await page.locator('#matrix tbody tr').count();
  assert.ok(rows >= 100, `only ${rows} rows`);
  const names = await page.locator('#matrix thead tr.names th').allTextContents();
  for (const t of ['gfx90a', 'gfx942', 'gfx1201']) assert.ok(names.includes(t), `no column ${t}: ${names}`);
  const families = await page.locator('#matrix thead tr.family-row th.family').allTextContents();
  assert.deepEqual(families, ['gfx9', 'gfx10', 'gfx11', 'gfx12']);
});

test('the page comes with its first matrix: drawn with every request to the API refused', async () => {
  const page2 = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const asked = [];
  await page2.route('**/v1/**', (route) => { asked.push(route.request().url()); return route.abort(); });
  await page2.goto(`${base}/`);
  await page2.waitForSelector('#matrix tbody tr', { state: 'attached', timeout: 5000 });
  assert.ok(await page2.locator('#matrix tbody tr').count() >= 100);
  assert.deepEqual(asked, [], 'the first paint asked the API');
  await page2.close();
});

test('a known ok cell is green and a known arch_absent cell is red', async () => {
  await open('flavor=llvm22');
  const ok = cell(KEY, 'gfx90a');
  const absent = cell(KEY, 'gfx1201');
  assert.equal(await ok.getAttribute('data-status'), 'ok');
  assert.equal(await absent.getAttribute('data-status'), 'arch_absent');
  assert.equal(await style(ok, 'background-color'), OK_COLOUR);
  assert.equal(await style(absent, 'background-color'), ARCH_ABSENT_COLOUR);
  assert.equal(await style(ok, 'background-image'), 'none');
});

test('a non-answer (toolchain_crash) is drawn differently: hatched and outlined dashed', async () => {
  // LLVM 21 crashes after selecting an instruction gfx1030 has (alignbyte): a crash no table of LLVM decides.
  await open('flavor=llvm21');
  const crash = cell('amdgcn.alignbyte', 'gfx1030');
  // A fragment change keeps the document: wait for llvm21's matrix to replace the one drawn before.
  await page.waitForSelector('#matrix[data-flavor="llvm21"] tbody tr', { state: 'attached' });
  assert.equal(await crash.getAttribute('data-status'), 'toolchain_crash');
  assert.match(await style(crash, 'background-image'), /repeating-linear-gradient/);
  assert.equal(await style(crash, 'outline-style'), 'dashed');
  assert.notEqual(await style(crash, 'background-color'), ARCH_ABSENT_COLOUR);
});

test('the filter box keeps only the rows that match', async () => {
  await open('flavor=llvm22');
  const all = await page.locator('#matrix tbody tr:not(.hidden)').count();
  await page.fill('#filter', '4x4x4bf16');
  await page.waitForFunction((n) => document.querySelectorAll('#matrix tbody tr:not(.hidden)').length < n, all);
  const keys = await page.locator('#matrix tbody tr:not(.hidden) th.key').allTextContents();
  assert.ok(keys.includes(KEY), `${KEY} filtered out: ${keys}`);
  for (const k of keys) {
    const intrinsic = await page.locator(`#matrix tbody tr[data-key="${k}"]`).getAttribute('data-intrinsic');
    assert.ok(`${k} ${intrinsic}`.includes('4x4x4bf16'), `${k} does not match`);
  }
  assert.ok(await page.locator('#matrix tbody tr[data-key="s.barrier.signal"]').evaluate((e) => e.classList.contains('hidden')));
  assert.match(page.url(), /q=4x4x4bf16/);
  await page.fill('#filter', '');
  await page.waitForFunction((n) => document.querySelectorAll('#matrix tbody tr:not(.hidden)').length === n, all);
});

test('a filter that names an intrinsic shows the census answer per processor, weighed over its instantiations', async () => {
  // swmmac.f16.16x16x32.f16 is no catalog key; gfx12 lowers it as clang calls it (<8 x half>, <16 x half>, ...).
  await open('flavor=llvm22');
  await page.fill('#filter', 'swmmac.f16.16x16x32.f16');
  await page.waitForSelector('#intrinsic:not([hidden]) li[data-status="ok"]');
  assert.match(await page.locator('#intrinsic h2').textContent(), /^llvm\.amdgcn\.swmmac\.f16\.16x16x32\.f16 in the llvm22 census/);
  const ok = page.locator('#intrinsic li[data-status="ok"]');
  assert.ok((await ok.getAttribute('data-processors')).split(',').includes('gfx1201'));
  assert.match(await ok.textContent(), /as llvm\.amdgcn\.swmmac\.f16\.16x16x32\.f16\.v8f16\.v8f16\.v16f16/);
  const refused = page.locator('#intrinsic li[data-status="arch_absent"]');
  assert.ok((await refused.getAttribute('data-processors')).split(',').includes('gfx90a'));
  assert.match(page.url(), /q=swmmac/);
  // A word that names no intrinsic hides it again.
  await page.fill('#filter', 'mfma');
  await page.waitForSelector('#intrinsic', { state: 'hidden' });
  await page.fill('#filter', '');
});

test('a builtin or an instruction typed in the filter is found by /v1/search: its key as a row, its intrinsic answered', async () => {
  await open('flavor=llvm22');
  // HIP's spelling of a key: no key or intrinsic contains it, the search resolves it to the key's row.
  await page.fill('#filter', '__builtin_amdgcn_mfma_f32_4x4x4bf16_1k');
  await page.waitForFunction(() => document.querySelectorAll('#matrix tbody tr:not(.hidden)').length === 1);
  assert.ok(!(await page.locator('#matrix tbody tr[data-key="mfma.f32.4x4x4bf16.1k"]').evaluate((e) => e.classList.contains('hidden'))));
  await page.waitForSelector('#names:not([hidden]) li[data-kind="builtin"][data-name="__builtin_amdgcn_mfma_f32_4x4x4bf16_1k"]');
  // An instruction mnemonic no key poses: the census answers the intrinsic that lowers to it.
  await page.fill('#filter', 's_sleep_var');
  await page.waitForFunction(() => /^llvm\.amdgcn\.s\.sleep\.var in the llvm22 census/.test(
    document.querySelector('#intrinsic:not([hidden]) h2')?.textContent || ''));
  const ok = page.locator('#intrinsic li[data-status="ok"]');
  assert.ok((await ok.getAttribute('data-processors')).split(',').includes('gfx1250'));
  assert.ok(await page.locator('#names li[data-kind="mnemonic"][data-name="s_sleep_var"]').count() === 1);
  await page.fill('#filter', '');
});

test('clicking a cell shows its evidence; an ok cell shows what it lowered to', async () => {
  await open('flavor=llvm22');
  await cell(KEY, 'gfx1201').click();
  await page.waitForSelector('#detail:not([hidden]) pre.evidence');
  assert.match(await page.locator('#detail pre.evidence').textContent(), /Cannot select: intrinsic %llvm\.amdgcn\.mfma\.f32\.4x4x4bf16\.1k/);
  assert.match(await page.locator('#detail h2').textContent(), /gfx1201/);
  await cell(KEY, 'gfx90a').click();
  await page.waitForSelector('#detail pre.lowered');
  assert.match(await page.locator('#detail pre.lowered').textContent(), /v_mfma_f32_4x4x4bf16_1k/);
  assert.match(await page.locator('#detail .summary').textContent(), /ok in every measured column \(llvm19 to llvm24\)/);
  await page.click('#detail-close');
  assert.ok(await page.locator('#detail').isHidden());
});

test('a featured target is labelled as people say it, after its processor; the build\'s flavor is the default', async () => {
  await page.goto(`${base}/`);
  await page.waitForSelector('#matrix tbody tr', { state: 'attached' });
  const build = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout.match(/\(flavor (llvm\d+)\)/)[1];
  assert.equal(await page.locator('#flavor').inputValue(), build, 'the page opens on the flavor its service measures');
  const headers = await page.locator('#matrix thead tr.names th[data-target]').evaluateAll(
    (ths) => ths.map((th) => ({ text: th.textContent, target: th.dataset.target, title: th.title })));
  const w64 = headers.find((h) => h.target === 'gfx1100:+wavefrontsize64,-wavefrontsize32');
  assert.ok(w64, JSON.stringify(headers));
  assert.equal(w64.text, 'gfx1100 w64');
  assert.equal(w64.title, 'gfx1100:+wavefrontsize64,-wavefrontsize32');
  const order = headers.map((h) => h.target);
  assert.equal(order.indexOf(w64.target), order.indexOf('gfx1100') + 1, `gfx1100 w64 follows gfx1100: ${order}`);
});

test('a cell has a link of its own: the URL opens its evidence', async () => {
  const target = 'gfx1100:+wavefrontsize64,-wavefrontsize32';
  await page.goto(`${base}/#flavor=llvm22&cell=${KEY}&target=${encodeURIComponent(target)}`);
  await page.waitForSelector('#detail:not([hidden]) pre.evidence');
  assert.match(await page.locator('#detail h2').textContent(), new RegExp(`${KEY.replace(/\./g, '\\.')} · gfx1100 w64`));
  await page.click('#detail-close');
  assert.doesNotMatch(page.url(), /cell=/);
  await cell(KEY, 'gfx90a').click();
  await page.waitForSelector('#detail:not([hidden]) pre.lowered');
  assert.match(page.url(), new RegExp(`cell=${KEY.replace(/\./g, '\\.')}&target=gfx90a`));
  await page.click('#detail-close');
});

test('the matrix fits a laptop: at 1,280 px every column is on screen, and an open cell narrows it, never covers it (screenshots at 1,280 and 1,920)', async () => {
  const shots = process.env.ARCHDB_SCREENSHOTS || work;
  for (const width of [1280, 1920]) {
    await page.setViewportSize({ width, height: 800 });
    await page.goto('about:blank');
    await open('flavor=llvm22');
    const bare = await page.evaluate(() => {
      const heads = [...document.querySelectorAll('#matrix thead tr.names th[data-target]')];
      return { lastRight: heads[heads.length - 1].getBoundingClientRect().right, width: window.innerWidth,
               scroll: document.documentElement.scrollWidth,
               tops: new Set(heads.map((h) => Math.round(h.getBoundingClientRect().top))).size };
    });
    assert.equal(bare.tops, 1, `at ${width} px the target names are not one row`);
    assert.ok(bare.lastRight <= bare.width, `at ${width} px the last column ends at ${bare.lastRight}`);
    assert.ok(bare.scroll <= bare.width, `at ${width} px the page scrolls sideways (${bare.scroll})`);
    await page.screenshot({ path: join(shots, `page-${width}.png`) });
    await cell(KEY, 'gfx1201').click();
    await page.waitForSelector('#detail:not([hidden]) pre.evidence');
    const open_ = await page.evaluate((key) => {
      const box = document.getElementById('matrix-view').getBoundingClientRect();
      const detail = document.getElementById('detail').getBoundingClientRect();
      const td = document.querySelector(`td.cell[data-key="${key}"][data-target="gfx1201"]`).getBoundingClientRect();
      return { boxRight: box.right, detailLeft: detail.left, tdLeft: td.left, tdRight: td.right, boxLeft: box.left };
    }, KEY);
    assert.ok(open_.boxRight <= open_.detailLeft, `at ${width} px the open cell covers the matrix (${JSON.stringify(open_)})`);
    assert.ok(open_.tdRight <= open_.boxRight && open_.tdLeft >= open_.boxLeft, `the clicked cell is out of view: ${JSON.stringify(open_)}`);
    await page.screenshot({ path: join(shots, `page-${width}-cell.png`) });
    await page.click('#detail-close');
  }
  await page.setViewportSize({ width: 1400, height: 900 });
});

test('the diff view lists the cells that changed between two flavors, grouped', async () => {
  await page.goto(`${base}/#view=diff&from=llvm22&to=llvm23`);
  await page.waitForFunction(() => /shared cells changed/.test(document.getElementById('diff-summary').textContent));
  assert.match(await page.locator('#diff-summary').textContent(), /^llvm22 → llvm23: \d+ of \d+ shared cells changed/);
  assert.ok((await page.locator('#diff-groups section.diff-group').count()) > 0);
  assert.ok(await page.locator('#matrix-view').isHidden());
  // Capability changes first; lowering churn is counted and listed only when asked for (and the URL keeps that).
  const groups = await page.locator('#diff-groups section.diff-group').evaluateAll((s) => s.map((x) => x.dataset.group));
  assert.equal(groups[groups.length - 1], 'lowering churn', groups.join(', '));
  assert.equal(groups.indexOf('lowering churn'), groups.length - 1);
  const churn = page.locator('section.diff-group[data-group="lowering churn"]');
  assert.match(await churn.locator('h3').textContent(), /^lowering churn \(\d+\)$/);
  assert.equal(await churn.locator('tr.row').count(), 0);
  await churn.locator('button.show-churn').click();
  await page.waitForFunction(() => document.querySelectorAll('section.diff-group[data-group="lowering churn"] tr.row').length > 0);
  assert.match(page.url(), /churn=1/);
  await page.goto(`${base}/#view=diff&from=llvm22&to=llvm23`);
  await page.waitForFunction(() => document.querySelector('section.diff-group[data-group="lowering churn"] button.show-churn'));
  // The filter matches targets too: "gfx950" keeps gfx950's changes only.
  await page.fill('#filter', 'gfx950');
  await page.waitForFunction(() => /\(filtered\)/.test(document.getElementById('diff-summary').textContent));
  const targets = await page.locator('#diff-groups tr.row').evaluateAll((rows) => rows.map((r) => r.dataset.target));
  assert.ok(targets.length > 0, 'no gfx950 change between llvm22 and llvm23');
  for (const t of targets) assert.equal(t, 'gfx950');
  await page.fill('#filter', '');
});

test('a page of another origin cannot post to the service; the page itself can', async () => {
  // http://localhost:PORT is another origin than http://127.0.0.1:PORT: a page there posts a text/plain body
  // (a CORS simple request, sent without asking first) to the service, as any site a developer visits could.
  // That page is the service's own, with its content-security policy turned off: a hostile page has none.
  const context = await browser.newContext({ bypassCSP: true });
  const other = await context.newPage();
  try {
    await other.goto(base.replace('127.0.0.1', 'localhost') + '/');
    const ir = 'define amdgpu_kernel void @k() {\n  ret void\n}\n';
    const target = `${base}/v1/check?flavor=llvm22&target=gfx90a`;
    const [response] = await Promise.all([
      other.waitForResponse((r) => r.url() === target),
      other.evaluate(([url, body]) => fetch(url, { method: 'POST', mode: 'no-cors', body,
                                                    headers: { 'Content-Type': 'text/plain' } }).catch(() => null),
                     [target, ir]),
    ]);
    assert.equal(response.status(), 403, 'the service answered another origin\'s post');
    // (The opaque response's body is the browser's to hide; the message is tested in Service.OnlyItsOwnOriginIsAnswered.)
    // The same request from the service's own page is answered.
    const own = await page.evaluate(([url, body]) => fetch(url, { method: 'POST', body,
                                                                  headers: { 'Content-Type': 'text/plain' } })
                                      .then(async (r) => [r.status, (await r.json()).verdict]), [target, ir]);
    assert.deepEqual(own, [200, 'cleared']);
  } finally {
    await context.close();
  }
});

test('the page raised no script errors and broke no content-security rule', () => {
  assert.deepEqual(pageErrors, []);
});
