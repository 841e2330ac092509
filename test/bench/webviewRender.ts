import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { renderPanelHtml } from '../../client/src/panel/html';
import type { DiscussionEvent, ExtensionToWebview } from '../../shared/protocol';

/**
 * The chat webview in headless Chromium, fed a long streamed reply the way
 * the extension feeds it (`events` messages), timing how long each delta
 * costs the page: its message handling plus the render it schedules for the
 * next frame. The cost must stay flat as the reply grows.
 */

export interface RenderTiming {
  deltas: number;
  /** Mean cost per delta, in ms, over the first and last 10% of the reply. */
  firstTenthMs: number;
  lastTenthMs: number;
}

/** Where the system's Chromium is, if anywhere (the CI installs Debian's). */
export function findChromium(): string | undefined {
  for (const candidate of [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) {
    if (candidate && fs.existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** A reply of `tokens` word-sized deltas with the Markdown a real one has: headings, lists, code, links. */
function replyDeltas(tokens: number): string[] {
  const deltas: string[] = [];
  const words = ['the', 'server', 'reads', 'each', 'file', 'through', 'its', 'boundary', 'and', 'returns', '`grep_files`', 'results', 'in', 'order'];
  let i = 0;
  while (deltas.length < tokens) {
    const section = Math.floor(i / 400);
    const position = i % 400;
    if (position === 0) deltas.push(`\n\n## Part ${section + 1}\n\n`);
    else if (position === 120) deltas.push('\n\n```ts\n');
    else if (position > 120 && position < 160) deltas.push(position % 8 === 0 ? ';\n' : `const v${position} = ${position} `);
    else if (position === 160) deltas.push('\n```\n\n');
    else if (position > 200 && position < 260 && position % 12 === 0) deltas.push('\n- ');
    else if (position === 300) deltas.push(' [docs](https://example.com/docs) ');
    else deltas.push(`${words[i % words.length]} `);
    i += 1;
  }
  return deltas;
}

function event(seq: number, body: Record<string, unknown>): DiscussionEvent {
  return { discussionId: 'bench', seq, ts: 1_700_000_000_000 + seq, ...body } as DiscussionEvent;
}

export async function measureWebviewRender(executablePath: string, tokens = 20_000, perFrame = 20): Promise<RenderTiming> {
  const root = path.resolve(__dirname, '../../..');
  const files: Record<string, { file: string; type: string }> = {
    '/chat.js': { file: path.join(root, 'media/dist/chat.js'), type: 'text/javascript' },
    '/chat.css': { file: path.join(root, 'media/chat.css'), type: 'text/css' },
    '/codicon.css': { file: path.join(root, 'media/dist/codicon.css'), type: 'text/css' },
    '/codicon.ttf': { file: path.join(root, 'media/dist/codicon.ttf'), type: 'font/ttf' },
  };
  for (const { file } of Object.values(files)) {
    if (!fs.existsSync(file)) throw new Error(`${path.relative(root, file)} is missing; run npm run build`);
  }
  const server = http.createServer((req, res) => {
    const served = files[req.url ?? ''];
    if (req.url === '/') {
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(renderPanelHtml({ cspSource: origin, nonce: 'benchNonce0123456789AB', scriptUri: `${origin}/chat.js`, styleUri: `${origin}/chat.css`, codiconsUri: `${origin}/codicon.css`, title: 'bench' }));
    } else if (served) {
      res.writeHead(200, { 'content-type': served.type });
      res.end(fs.readFileSync(served.file));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
  try {
    const page = await browser.newPage({ viewport: { width: 500, height: 900 } });
    // What VS Code gives a webview: a message port to the extension and a state slot.
    await page.addInitScript(() => {
      let state: unknown;
      (window as unknown as { acquireVsCodeApi: () => unknown }).acquireVsCodeApi = () => ({
        postMessage: () => undefined,
        getState: () => state,
        setState: (next: unknown) => (state = next),
      });
    });
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await page.waitForSelector('.conversation');

    const setup: ExtensionToWebview[] = [
      { type: 'attached', discussionId: 'bench', repo: '/repo', model: 'fake-model', reset: true },
      { type: 'status', answering: true, model: 'fake-model' },
      { type: 'events', events: [event(0, { type: 'user_message', text: 'Explain the search path.' })] },
    ];
    const deltas = replyDeltas(tokens).map((text, i) => ({ type: 'events', events: [event(i + 1, { type: 'assistant_delta', text })] }) as ExtensionToWebview);
    const perDelta = await page.evaluate(
      async ({ setup, deltas, perFrame }) => {
        const post = (data: unknown): void => void window.dispatchEvent(new MessageEvent('message', { data }));
        for (const message of setup) post(message);
        const nextFrame = (): Promise<number> => new Promise((resolve) => requestAnimationFrame((frameStart) => resolve(frameStart)));
        await nextFrame();
        const costs: number[] = [];
        for (let at = 0; at < deltas.length; at += perFrame) {
          const batch = deltas.slice(at, at + perFrame);
          const started = performance.now();
          for (const message of batch) post(message);
          const handled = performance.now() - started;
          // The page renders in its own frame callback, which runs before this one; then force the layout.
          const frameStart = await nextFrame();
          void document.body.offsetHeight;
          const rendered = performance.now() - frameStart;
          for (let i = 0; i < batch.length; i++) costs.push((handled + rendered) / batch.length);
        }
        return costs;
      },
      { setup, deltas, perFrame },
    );
    const text = await page.evaluate(() => document.querySelector('.conversation')?.textContent ?? '');
    if (!text.includes('order')) throw new Error('the reply was not rendered');
    const tenth = Math.max(1, Math.floor(perDelta.length / 10));
    const mean = (values: number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;
    return { deltas: perDelta.length, firstTenthMs: mean(perDelta.slice(0, tenth)), lastTenthMs: mean(perDelta.slice(-tenth)) };
  } finally {
    await browser.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
