/**
 * A Chromium for the browser tests: where one is, and launching it with playwright-core.
 *
 * `findChromium()` looks, in order, at `ORDERCLI_CHROMIUM` and `CHROMIUM_PATH`, then `chromium`,
 * `chromium-browser` and `google-chrome` on PATH, then Playwright's own cache (what
 * `npx playwright install chromium` leaves in `~/.cache/ms-playwright`, or under
 * `PLAYWRIGHT_BROWSERS_PATH`). When none is found it says why and how to get one, for the one
 * SKIPPED line `npm test` prints instead of a silent pass (or, with `CI` set, the failure: see
 * test/support/requirements.ts).
 */
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Browser, LaunchOptions } from 'playwright-core';

export type ChromiumChoice = { path: string; from: string } | { path: undefined; why: string };

/** How to get a Chromium, in the words of the SKIPPED line or the failure. */
export const HOW_TO_GET_CHROMIUM =
  'apt-get install -y chromium, or npx playwright install chromium, or set ORDERCLI_CHROMIUM=<path>';

const NAMES_ON_PATH = ['chromium', 'chromium-browser', 'google-chrome'];
const ENV_NAMES = ['ORDERCLI_CHROMIUM', 'CHROMIUM_PATH'];

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The Chromium executables Playwright's cache holds, newest revision first. */
function playwrightCacheBrowsers(env: NodeJS.ProcessEnv): string[] {
  const cache = env.PLAYWRIGHT_BROWSERS_PATH || join(homedir(), '.cache', 'ms-playwright');
  let folders: string[];
  try {
    folders = readdirSync(cache).filter((name) => /^chromium-\d+$/.test(name));
  } catch {
    return [];
  }
  folders.sort((a, b) => Number(b.slice('chromium-'.length)) - Number(a.slice('chromium-'.length)));
  // Older Playwright releases unpack to chrome-linux, newer ones to chrome-linux64.
  return folders.flatMap((folder) =>
    ['chrome-linux64', 'chrome-linux'].map((build) => join(cache, folder, build, 'chrome')),
  );
}

/** The Chromium the browser tests use, or why there is none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): ChromiumChoice {
  for (const name of ENV_NAMES) {
    const given = env[name];
    if (given === undefined || given === '') continue;
    // A path given on purpose is used or reported, never silently replaced by another browser.
    if (isExecutableFile(given)) return { path: given, from: name };
    return { path: undefined, why: `${name}=${given} is not an executable file` };
  }
  for (const name of NAMES_ON_PATH) {
    for (const folder of (env.PATH ?? '').split(delimiter)) {
      if (folder === '') continue;
      const candidate = join(folder, name);
      if (isExecutableFile(candidate)) return { path: candidate, from: 'PATH' };
    }
  }
  const cached = playwrightCacheBrowsers(env).find(isExecutableFile);
  if (cached) return { path: cached, from: "Playwright's cache" };
  return {
    path: undefined,
    why: `no Chromium found (${NAMES_ON_PATH.join(', ')} on PATH, Playwright's cache)`,
  };
}

/**
 * Launches the Chromium at `executablePath`, headless. playwright-core is loaded here, when a
 * browser test runs. As root, Chromium refuses to start with its sandbox on: `--no-sandbox` then.
 */
export async function launchChromium(executablePath: string, extraArgs: string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const args = [...extraArgs];
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  const options: LaunchOptions = { executablePath, args, headless: true };
  try {
    return await chromium.launch(options);
  } catch (error) {
    // A browser that is there but does not start fails the test (never a skip), naming it.
    throw new Error(
      `Chromium at ${executablePath} did not start (point ORDERCLI_CHROMIUM at another one): ${(error as Error).message}`,
    );
  }
}
