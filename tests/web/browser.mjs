// tests/web/browser.mjs — what each browser test of tests/web/ starts with: the named skip when browser tests are
// off (ARCHDB_BROWSER_TESTS=0: exit 77), the archdb binary (ARCHDB_BINARY), Debian's Chromium (ARCHDB_CHROMIUM,
// default /usr/bin/chromium) and playwright-core from tests/web/node_modules (tools/install-deps --web). Anything
// missing fails the test with one line naming it, never a pass.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function browserTest(name) {
  if (process.env.ARCHDB_BROWSER_TESTS === '0') {
    console.log('SKIPPED: browser tests are off (ARCHDB_BROWSER_TESTS=0)');
    process.exit(77);
  }
  const fatal = (message) => {
    console.error(`${name}: ${message}`);
    process.exit(1);
  };
  const here = dirname(fileURLToPath(import.meta.url));
  const binary = process.env.ARCHDB_BINARY;
  const chromiumPath = process.env.ARCHDB_CHROMIUM || '/usr/bin/chromium';
  if (!binary || !existsSync(binary)) fatal(`ARCHDB_BINARY does not name the archdb binary (${binary})`);
  if (!existsSync(chromiumPath)) fatal(`${chromiumPath} is missing: install Debian's chromium (tools/install-deps --web)`);
  let chromium;
  try {
    ({ chromium } = createRequire(join(here, 'package.json'))('playwright-core'));
  } catch (e) {
    fatal(`playwright-core is not installed in ${here}/node_modules (tools/install-deps --web): ${e.message}`);
  }
  return { binary, chromiumPath, chromium };
}
