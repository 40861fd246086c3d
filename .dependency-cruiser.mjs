/**
 * The layers of src/, checked by `npm run lint` (dependency-cruiser). Bottom to top: core →
 * api/io/config/schemas → import/webhooks/sandbox/refs/orders → command-support → commands → cli
 * (docs/ENGINEERING.md, "Layers").
 */

export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A runtime import cycle: break it by moving the shared part down a layer. Type-only imports are compiled away, so a cycle through one is allowed.',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'cli-is-the-top',
      severity: 'error',
      comment:
        'Only src/cli (and the library entry, src/index.ts) imports from src/cli: a command reaches Context and the help helpers in src/command-support.',
      from: { path: '^src/', pathNot: ['^src/cli/', '^src/index.ts$'] },
      to: { path: '^src/cli/' },
    },
    {
      name: 'commands-under-cli-only',
      severity: 'error',
      comment:
        'Only src/cli and src/commands may import from src/commands: everything else, src/command-support included, is a layer below them.',
      from: { path: '^src/', pathNot: ['^src/(cli|commands)/', '^src/index.ts$'] },
      to: { path: '^src/commands/' },
    },
    {
      name: 'command-support-for-commands',
      severity: 'error',
      comment:
        'src/command-support (Context, help helpers, typed commander) serves src/commands and src/cli; the pipelines and services below never import it.',
      from: { path: '^src/', pathNot: ['^src/(cli|commands|command-support)/', '^src/index.ts$'] },
      to: { path: '^src/command-support/' },
    },
    {
      name: 'pipelines-above-services',
      severity: 'error',
      comment:
        'The client, IO, config and schemas serve the pipelines (import, webhooks, sandbox, refs, orders); they never import them.',
      from: { path: '^src/(api|io|config|schemas)/' },
      to: { path: '^src/(import|webhooks|sandbox|refs|orders)/' },
    },
    {
      name: 'ledger-beside-the-pipelines',
      severity: 'error',
      comment:
        'src/ledger (the order ledger) knows nothing of CSV, reports, terminals or commands: it serves the import, orders create/new, resolve and the ledger commands, and imports only core, io and config.',
      from: { path: '^src/ledger/' },
      to: { path: '^src/(import|webhooks|sandbox|refs|orders|api|schemas)/' },
    },
    {
      name: 'services-below-the-ledger',
      severity: 'error',
      comment: 'The client, IO, config and schemas are below the order ledger: they never import it.',
      from: { path: '^src/(api|io|config|schemas|core)/' },
      to: { path: '^src/ledger/' },
    },
    {
      name: 'core-is-the-bottom',
      severity: 'error',
      comment: 'src/core is the bottom layer: it imports nothing else from src (Node and packages only).',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are seen (a type import upward still breaks the layering) and marked, so
    // that no-circular can set them aside.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default'],
    },
  },
};
