import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { chromium, type Page } from 'playwright-core';
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
  /** Median cost per delta, in ms, over the first and last 10% of the reply. */
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

/** In the page: posts the setup messages and the frame probe `feedFrames` calls. */
function installFrameProbe(setup: ExtensionToWebview[]): Promise<void> {
  const post = (data: unknown): void => void window.dispatchEvent(new MessageEvent('message', { data }));
  for (const message of setup) post(message);
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

/**
 * In the page: posts `batch` in frames of `perFrame` messages, and returns
 * each frame's cost per delta: its message handling, the page's frame
 * callback (the render it scheduled) and the layout it leaves.
 */
async function feedFrames({ batch, perFrame }: { batch: ExtensionToWebview[]; perFrame: number }): Promise<number[]> {
  const post = (data: unknown): void => void window.dispatchEvent(new MessageEvent('message', { data }));
  const nextFrame = (): Promise<void> => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  const costs: number[] = [];
  for (let at = 0; at < batch.length; at += perFrame) {
    const frame = batch.slice(at, at + perFrame);
    // Registered before the page's own frame callback, so it runs just before
    // it: the wait from the frame's start to its callbacks is the browser's.
    let pageFrameStart = 0;
    requestAnimationFrame(() => (pageFrameStart = performance.now()));
    const started = performance.now();
    for (const message of frame) post(message);
    const handled = performance.now() - started;
    await nextFrame();
    void document.body.offsetHeight;
    costs.push((handled + performance.now() - pageFrameStart) / frame.length);
  }
  return costs;
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
    const openPage = async (): Promise<Page> => {
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
      return page;
    };
    const setup: ExtensionToWebview[] = [
      { type: 'attached', discussionId: 'bench', repo: '/repo', model: 'fake-model', reset: true },
      { type: 'status', answering: true, model: 'fake-model' },
      { type: 'events', events: [event(0, { type: 'user_message', text: 'Explain the search path.' })] },
    ];
    const deltas = replyDeltas(tokens).map((text, i) => ({ type: 'events', events: [event(i + 1, { type: 'assistant_delta', text })] }) as ExtensionToWebview);
    const tenth = Math.max(perFrame, Math.floor(deltas.length / 10));
    // Two pages, measured in turns: one streams the reply's first tenth, the
    // other (already holding the first nine tenths) its last. Measured one
    // after the other, the two tenths were ten seconds apart, and on a shared
    // machine the load of those ten seconds, not the page, set the ratio.
    const early = await openPage();
    const late = await openPage();
    await early.evaluate(installFrameProbe, setup);
    await late.evaluate(installFrameProbe, setup);
    const before = deltas.slice(0, deltas.length - tenth);
    for (let at = 0; at < before.length; at += 500) await late.evaluate(feedFrames, { batch: before.slice(at, at + 500), perFrame });
    const first = deltas.slice(0, tenth);
    const last = deltas.slice(-tenth);
    const earlyCosts: number[] = [];
    const lateCosts: number[] = [];
    for (let at = 0; at < tenth; at += perFrame) {
      earlyCosts.push(...(await early.evaluate(feedFrames, { batch: first.slice(at, at + perFrame), perFrame })));
      lateCosts.push(...(await late.evaluate(feedFrames, { batch: last.slice(at, at + perFrame), perFrame })));
    }
    for (const page of [early, late]) {
      const text = await page.evaluate(() => document.querySelector('.conversation')?.textContent ?? '');
      if (!text.includes('order')) throw new Error('the reply was not rendered');
    }
    // Medians, not means: one descheduled frame (another process, a GC) moves
    // a mean over a hundred frames by tens of percent.
    const middle = (values: number[]): number => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted[Math.floor(sorted.length / 2)];
    };
    return { deltas: deltas.length, firstTenthMs: middle(earlyCosts), lastTenthMs: middle(lateCosts) };
  } finally {
    await browser.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
