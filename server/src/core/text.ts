/** Cuts `text` to `max` characters, marking the cut. */
export function bound(text: string, max: number): string {
  if (text.length <= max) return text;
  return text.slice(0, max) + '…';
}

export function firstLine(text: string): string {
  return text.trim().split(/\r?\n/, 1)[0];
}
