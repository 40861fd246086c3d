/**
 * How to write ordercli in a command the user may copy: `npx ordercli` when this process was
 * started through npx (npm exec), as in a clone after `npm install`, where `ordercli` alone is not
 * on the PATH; `ordercli` otherwise (a global install, a shell alias).
 */
export function invocation(env: NodeJS.ProcessEnv): string {
  return env.npm_command === 'exec' ? 'npx ordercli' : 'ordercli';
}
