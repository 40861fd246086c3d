/** The externalIds seen in an input, with the line where each first appeared. */
export class ExternalIdIndex {
  private readonly lines = new Map<string, number>();

  /** Records `id` at `line`, or returns the line where it was recorded before. */
  addOrGet(id: string, line: number): number | undefined {
    const first = this.lines.get(id);
    if (first !== undefined) return first;
    this.lines.set(id, line);
    return undefined;
  }

  get size(): number {
    return this.lines.size;
  }
}
