/**
 * `config profiles`: the names of the config file's profiles, one a line, never a value of theirs.
 * The shell completion of `--profile` runs it at each Tab: it reads the file and nothing else (no
 * settings resolved, so a bad ORDERCLI_PROFILE or ORDERCLI_TIMEOUT does not stop it), never prompts.
 */
import type { Context } from '../../command-support/context.js';
import { configPath, readConfigFile } from '../../config/profiles.js';
import { writeJson } from '../../io/json-output.js';

/** One profile of `--json`: its name only, so that no value, secret or not, is ever printed. */
export interface ProfileName {
  name: string;
}

/** Prints the profile names (stdout), or a note on stderr when there is none. */
export async function run(ctx: Context): Promise<void> {
  const { profiles } = await readConfigFile(ctx.env);
  // A hand-edited file may hold anything there: only an object's keys are profile names.
  const names =
    profiles && typeof profiles === 'object' && !Array.isArray(profiles) ? Object.keys(profiles) : [];
  if (ctx.json) {
    const entries: ProfileName[] = names.map((name) => ({ name }));
    writeJson(ctx.io, entries);
    return;
  }
  if (names.length === 0) {
    ctx.io.err(
      `No profiles in ${configPath(ctx.env)}: create one with ordercli login (--profile <name> for another than "default").\n`,
    );
    return;
  }
  ctx.io.out(names.map((name) => `${name}\n`).join(''));
}
