/** Counts as people read them: 12,345 (a comma between thousands, as the tool's English messages). */
export function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
