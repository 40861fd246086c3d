/** An .html file imported as its text (esbuild's `text` loader in scripts/build.mjs; a plugin in vitest.config.ts). */
declare module '*.html' {
  const text: string;
  export default text;
}
