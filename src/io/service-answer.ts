/**
 * How a command prints what the service answered when the answer may hold secrets (a webhook
 * key, a token): secret-named fields are masked by default, with one note on stderr naming them;
 * `--show-secrets` prints the answer as received.
 */
import { redactSecretFields } from '../core/redact.js';
import type { IOStreams } from './streams.js';

export interface SecretsChoice {
  /** `--show-secrets`: print the secrets the answer holds. */
  showSecrets?: boolean;
  /** The command line that prints them, when this command has no --show-secrets of its own. */
  showWith?: string;
}

/** The answer to print: as received with --show-secrets, else with its secret fields masked (noted on stderr). */
export function answerToShow<T>(io: IOStreams, answer: T, choice: SecretsChoice = {}): T {
  if (choice.showSecrets) return answer;
  const { value, fields } = redactSecretFields(answer);
  if (fields.length > 0) {
    const names = fields.length > 5 ? `${fields.slice(0, 5).join(', ')}, ...` : fields.join(', ');
    const one = fields.length === 1;
    io.err(
      `note: ${fields.length} secret ${one ? 'field' : 'fields'} of the answer redacted (${names}); ${choice.showWith ?? '--show-secrets'} prints ${one ? 'it' : 'them'}.\n`,
    );
  }
  return value;
}

/** Writes an answer as indented JSON: masked (see answerToShow), or as received with --show-secrets. */
export function writeAnswerJson(io: IOStreams, answer: unknown, choice: SecretsChoice = {}): void {
  const shown = answerToShow(io, answer, choice);
  const text = `${JSON.stringify(shown, null, 2) ?? 'null'}\n`;
  if (choice.showSecrets) io.outUnredacted(text);
  else io.out(text);
}
