/**
 * Moved to src/command-support/command-help.ts (commands import nothing from src/cli). This
 * re-export remains only for the modules of src/commands that other work in progress holds
 * (listen and the imports); .dependency-cruiser.mjs names them. Delete it once they import the new
 * path.
 */
export * from '../command-support/command-help.js';
