/** Counts as people read them: 12,345 (a comma between thousands, as the tool's English messages). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `1 key`, `1,204 keys`: a count and its noun (plural with an s). */
export function countOf(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? '' : 's'}`;
}
