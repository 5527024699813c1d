// What every test file here shares: whether the CLI's code is installed,
// the test options that follow from it, and cleanup in reverse order.
import { existsSync } from 'node:fs';

// The CLI's code comes from `npm ci` in tests/node. Without it the tests are
// skipped, except in CI (CI set), where that is a failure.
const coreDir = new URL('../node_modules/@google/gemini-cli-core/package.json', import.meta.url);
const missing = existsSync(coreDir) ? false
  : '@google/gemini-cli-core is not installed: run `npm ci` in tests/node';
if (missing && process.env.CI && !['0', 'false'].includes(process.env.CI)) {
  throw new Error(`${missing} (CI is set, so this is a failure)`);
}

/** Options for node:test: a timeout, and skipped when the CLI is missing. */
export const options = { timeout: 90_000, skip: missing };

/**
 * Registers fn to run when test t ends; like Go's t.Cleanup, the last
 * registered runs first (processes stop before their folders go).
 */
export function defer(t, fn) {
  if (!t.cleanups) {
    t.cleanups = [];
    t.after(async () => {
      for (const f of t.cleanups.reverse()) {
        try {
          await f();
        } catch (err) {
          t.diagnostic(`cleanup: ${err?.message ?? err}`);
        }
      }
    });
  }
  t.cleanups.push(fn);
}
