import MarkdownIt from 'markdown-it';

/**
 * What a renderer that allows HTML (as GitHub's does) makes of a Markdown
 * file we write: its own headings, raw HTML, images, code blocks and code
 * spans, for tests that check no untrusted text adds any of them.
 */
export function rendered(markdown: string): { headings: string[]; html: string[]; images: string[]; fences: string[]; spans: string[] } {
  const tokens = new MarkdownIt({ html: true }).parse(markdown, {});
  const inline = tokens.flatMap((token) => token.children ?? []);
  return {
    // Headings of the file itself: one inside a quote reads as quoted text, not as a heading of ours.
    headings: tokens.flatMap((token, i) => (token.type === 'heading_open' && token.level === 0 ? [`${token.markup} ${tokens[i + 1].content}`] : [])),
    html: [...tokens, ...inline].filter((token) => token.type === 'html_block' || token.type === 'html_inline').map((token) => token.content),
    images: inline.filter((token) => token.type === 'image').map((token) => token.attrGet('src') ?? ''),
    fences: tokens.filter((token) => token.type === 'fence').map((token) => token.content),
    spans: inline.filter((token) => token.type === 'code_inline').map((token) => token.content),
  };
}
