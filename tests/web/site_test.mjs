// tests/web/site_test.mjs — the static site (`archdb site --out DIR`) in a real browser, served by a plain file
// server (Node's http module handing out the folder's files; nothing of archdb runs while the browser reads it).
// Writes a site from a fresh database made from data/, then checks that the page draws the matrix, opens a cell
// from its link with its evidence and history, finds any spelling of a name as `archdb search` ranks it, answers
// an intrinsic from the censuses, shows a diff, and that the pages of a key and of an intrinsic hold their answers;
// every request the browser makes is for a file of the site. Also: writing a site over a folder that is not one is
// refused and leaves it alone; writing over an earlier site replaces it whole.
//
// Run by ctest (Site.InChromium) with ARCHDB_BINARY set. ARCHDB_BROWSER_TESTS=0 turns it into a named skip
// (exit 77); a missing Chromium, node module or binary is a failure, never a pass.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { browserTest } from './browser.mjs';

const { binary, chromiumPath, chromium } = browserTest('site_test');

const KEY = 'mfma.f32.4x4x4bf16.1k';
let work, db, siteDir, server, base, browser, page;
const pageErrors = [];
const requested = [];

function archdb(...args) {
  const r = spawnSync(binary, ['--db', db, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

// A plain file server: GET of a file under the folder, 404 for anything else.
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json' };
function serveFolder(root) {
  const s = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requested.push(path);
    const file = normalize(join(root, path === '/' ? 'index.html' : path));
    if (!file.startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': TYPES[extname(file)] || 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'archdb-site-'));
  db = join(work, 'db.sqlite');
  siteDir = join(work, 'site');
  const made = archdb('site', '--out', siteDir);
  if (made.code !== 0) throw new Error(`archdb site failed (${made.code}): ${made.err}`);
  assert.match(made.out, /files .* 190 key pages, \d+ intrinsic pages/);
  server = await serveFolder(siteDir);
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
});

after(async () => {
  if (browser) await browser.close();
  if (server) await new Promise((r) => server.close(r));
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the site\'s page draws the matrix and opens a cell from its link, from files', async () => {
  await page.goto(`${base}/#flavor=llvm22&cell=${KEY}&target=gfx90a`);
  await page.waitForSelector('#matrix tbody tr', { state: 'attached' });
  assert.ok(await page.locator('#matrix tbody tr').count() >= 100);
  await page.waitForFunction(() => /history/.test(document.getElementById('detail-body').textContent));
  const detail = await page.locator('#detail-body').textContent();
  assert.match(detail, /v_mfma_f32_4x4x4bf16_1k/);
  assert.match(detail, /ok in every measured column/);
  assert.equal(await page.locator('#detail-body a[href="keys/mfma.f32.4x4x4bf16.1k.html"]').count(), 1);
  // Another flavor comes from its file.
  await page.selectOption('#flavor', 'llvm23');
  await page.waitForFunction(() => /llvm23/.test(document.querySelector('#matrix thead').textContent));
  assert.ok(await page.locator('#site-links a[href="keys/index.html"]').isVisible());
});

test('the filter finds any spelling as archdb search ranks it', async () => {
  for (const spelling of ['__builtin_amdgcn_mfma_f32_4x4x4bf16_1k', 'mfma_f32_4x4x4bf16', 's_sleep_var', 'v_dot4_i32_iu8',
                          'permlane64', 'wmma.f32.16x16x16.f16.v8f32.v16f16', 'sleep']) {
    const cli = archdb('search', spelling, '--json', '--limit', '12');
    assert.equal(cli.code, 0, cli.err);
    const expected = JSON.parse(cli.out).hits.map((h) => `${h.kind} ${h.name}`);
    await page.goto(`${base}/#flavor=llvm22&q=${encodeURIComponent(spelling)}`);
    await page.waitForFunction((n) => document.querySelectorAll('#names li').length === n, expected.length);
    const shown = await page.locator('#names li').evaluateAll((lis) => lis.map((li) => `${li.dataset.kind} ${li.dataset.name}`));
    assert.deepEqual(shown, expected, spelling);
  }
});

test('an intrinsic named in the filter is answered from the censuses', async () => {
  await page.goto(`${base}/#flavor=llvm22&q=swmmac.f16.16x16x32.f16`);
  await page.waitForSelector('#intrinsic:not([hidden]) li[data-status="ok"]');
  const ok = await page.locator('#intrinsic li[data-status="ok"]').getAttribute('data-processors');
  assert.ok(ok.split(',').includes('gfx1201'), ok);
  assert.match(await page.locator('#intrinsic').textContent(), /v8f16\.v8f16\.v16f16/);
  assert.equal(await page.locator('#intrinsic a[href="intrinsics/llvm.amdgcn.swmmac.f16.16x16x32.f16.html"]').count(), 1);
});

test('the diff of two flavors comes from its file', async () => {
  await page.goto(`${base}/#view=diff&from=llvm22&to=llvm23`);
  await page.waitForFunction(() => /shared cells changed/.test(document.getElementById('diff-summary').textContent));
  const cli = archdb('diff', 'llvm22', 'llvm23', '--json');
  const expected = Object.values(JSON.parse(cli.out).groups).reduce((n, list) => n + list.length, 0);
  assert.match(await page.locator('#diff-summary').textContent(), new RegExp(`: ${expected} of \\d+ shared cells changed`));
});

test('a key\'s page and an intrinsic\'s page hold their answers', async () => {
  await page.goto(`${base}/keys/${KEY}.html`);
  const row = page.locator('table.history tr[data-target="gfx90a"]');
  assert.equal(await row.locator('.badge.s-ok').count(), 5);  // llvm19, llvm21-24; llvm20 is a descriptor
  assert.match(await row.locator('td.summary').textContent(), /ok in every measured column/);
  assert.match(await page.locator('section.flavor[data-flavor="llvm22"]').textContent(), /v_mfma_f32_4x4x4bf16_1k/);
  await page.goto(`${base}/intrinsics/llvm.amdgcn.s.sleep.var.html`);
  assert.equal(await page.locator('table.history tr[data-target="gfx1200"] .badge.s-ok').count(), 2);
  assert.equal(await page.locator('table.history tr[data-target="gfx90a"] .badge.s-arch_absent').count(), 2);
  await page.goto(`${base}/intrinsics/index.html`);
  assert.ok(await page.locator('ul.names li').count() > 1000);
});

test('every request was for a file of the site; the page raised no script errors', () => {
  assert.ok(requested.length > 10);
  for (const path of requested) assert.ok(existsSync(join(siteDir, path === '/' ? 'index.html' : path)), path);
  assert.ok(!requested.some((p) => p.startsWith('/v1/') && !p.endsWith('.json')), requested.join(' '));
  assert.deepEqual(pageErrors, []);
});

test('a folder that is not a site is refused and left alone; an earlier site is replaced whole', () => {
  const other = join(work, 'other');
  mkdirSync(other);
  writeFileSync(join(other, 'notes.txt'), 'mine');
  const refused = archdb('site', '--out', other);
  assert.equal(refused.code, 2, refused.err);
  assert.match(refused.err, /is neither empty nor an archdb site/);
  assert.equal(readFileSync(join(other, 'notes.txt'), 'utf8'), 'mine');
  writeFileSync(join(siteDir, 'stale.html'), 'left from before');
  const again = archdb('site', '--out', siteDir, '--json');
  assert.equal(again.code, 0, again.err);
  const summary = JSON.parse(again.out);
  assert.equal(summary.keys, 190);
  const marker = JSON.parse(readFileSync(join(siteDir, 'archdb-site.json'), 'utf8'));
  assert.equal(marker.keys, summary.keys);
  assert.equal(marker.intrinsics, summary.intrinsics);
  assert.ok(!existsSync(join(siteDir, 'stale.html')));
  assert.ok(existsSync(join(siteDir, 'archdb-site.json')));
});
