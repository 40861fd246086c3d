import { withExamples } from '../../command-support/command-help.js';
import { Argument, type Command } from '../../command-support/commander.js';
import type { Context } from '../../command-support/context.js';

export function registerCompletion(program: Command, ctx: Context): void {
  withExamples(
    program
      .command('completion')
      .description('print a shell completion script for ordercli, generated from its commands')
      .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish'] as const))
      .action(async (shell) => {
        const { run } = await import('./completion.js');
        run(shell, program, ctx);
      }),
    [
      'source <(ordercli completion bash)          # in ~/.bashrc',
      'ordercli completion zsh > ~/.zfunc/_ordercli       # with fpath+=(~/.zfunc) before compinit',
      'ordercli completion fish > ~/.config/fish/completions/ordercli.fish',
    ],
  );
}
