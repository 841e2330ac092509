export function firstLine(text: string): string {
  return text.trim().split(/\r?\n/, 1)[0];
}
