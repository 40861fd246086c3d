/**
 * undici wraps the error that says what happened (ECONNREFUSED, ECONNRESET, ENOTFOUND) in its
 * own (UND_ERR_SOCKET, "fetch failed", an AggregateError per address tried): these helpers look
 * inside, for the code to decide on and the words to show.
 */

/** How deep to look: undici nests two or three levels; a loop of causes must not hang. */
const MAX_DEPTH = 5;

/** The error, then what it wraps (`cause`, or the first of an AggregateError's `errors`), outermost first. */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  let current = error;
  for (let depth = 0; current && typeof current === 'object' && depth < MAX_DEPTH; depth++) {
    chain.push(current);
    const errors = (current as { errors?: unknown }).errors;
    current = Array.isArray(errors) && errors.length > 0 ? errors[0] : (current as { cause?: unknown }).cause;
  }
  return chain;
}

/** The `code` of every error in the chain, outermost first (`UND_ERR_SOCKET`, `ECONNRESET`). */
export function networkErrorCodes(error: unknown): string[] {
  const codes: string[] = [];
  for (const link of causeChain(error)) {
    const code = (link as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/** What the operating system said went wrong with a connection, in a few words. */
const SYSTEM_CODE_HINTS: Record<string, string> = {
  ECONNREFUSED: '(nothing listens there)',
  ECONNRESET: '(the connection was reset)',
  ENOTFOUND: '(unknown host)',
};

/**
 * A network failure in a few words for a message: `ECONNREFUSED (nothing listens there)`, `no
 * answer in time`, else the error's own message.
 */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (isTimeoutError(error)) return 'no answer in time';
  const systemCode = networkErrorCodes(error).find((code) => /^E[A-Z]+$/.test(code));
  if (systemCode !== undefined) return `${systemCode} ${SYSTEM_CODE_HINTS[systemCode] ?? ''}`.trim();
  return error.message;
}

/** Whether the request ended because its time-out passed (an abort by time-out, or undici's own). */
export function isTimeoutError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    error.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
  );
}
