/** The package version: esbuild replaces `__ORDERCLI_VERSION__` at build; source runs (tests) see a dev marker. */
declare const __ORDERCLI_VERSION__: string | undefined;

export const VERSION: string = typeof __ORDERCLI_VERSION__ === 'string' ? __ORDERCLI_VERSION__ : '0.0.0-dev';
