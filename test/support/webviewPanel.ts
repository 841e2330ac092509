import assert from 'node:assert/strict';
import * as path from 'node:path';
import { build } from 'esbuild';
import { JSDOM } from 'jsdom';
import type { DiscussionEvent, DiscussionEventBody, ExtensionToWebview } from '../../shared/protocol';

/**
 * The webview script itself (client/src/webview/main.ts, bundled as the build
 * does) in jsdom, with a fake VS Code API: what it posts, what it saves, what
 * it shows. Shared by the panel's test files.
 */

const ROOT = path.resolve(__dirname, '..', '..', '..');
let bundle = '';

/** Bundles the webview once per test file (mocha `before`). */
export async function buildWebviewBundle(): Promise<void> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, 'client', 'src', 'webview', 'main.ts')],
    tsconfig: path.join(ROOT, 'client', 'src', 'webview', 'tsconfig.json'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  bundle = result.outputFiles[0].text;
}

export interface Panel {
  window: JSDOM['window'];
  document: Document;
  input: HTMLTextAreaElement;
  posted: Array<Record<string, unknown>>;
  copied: string[];
  receive(message: ExtensionToWebview): void;
  /** Resolves after the panel's own pending animation frame has run. */
  nextFrame(): Promise<void>;
  /** What the panel would get back from getState after a reload. */
  savedState(): unknown;
  close(): void;
}

export function openPanel(savedState?: unknown): Panel {
  assert.ok(bundle, 'buildWebviewBundle() runs first');
  const dom = new JSDOM('<!DOCTYPE html><html><body><div id="app"></div></body></html>', {
    runScripts: 'outside-only',
    pretendToBeVisual: true,
    url: 'https://webview.test/index.html',
  });
  const { window } = dom;
  const posted: Array<Record<string, unknown>> = [];
  const copied: string[] = [];
  let state = savedState;
  Object.assign(window, {
    acquireVsCodeApi: () => ({
      // Cloned as postMessage does, which also brings it into this realm for deepEqual.
      postMessage: (message: Record<string, unknown>) => posted.push(JSON.parse(JSON.stringify(message))),
      getState: () => state,
      setState: (next: unknown) => {
        state = JSON.parse(JSON.stringify(next));
      },
    }),
  });
  Object.defineProperty(window.navigator, 'clipboard', {
    value: { writeText: async (text: string) => void copied.push(text) },
  });
  window.eval(bundle);
  return {
    window,
    document: window.document,
    input: window.document.querySelector('#message-input') as HTMLTextAreaElement,
    posted,
    copied,
    receive: (message) => window.dispatchEvent(new window.MessageEvent('message', { data: message })),
    nextFrame: () => new Promise((resolve) => window.requestAnimationFrame(() => resolve())),
    savedState: () => {
      window.dispatchEvent(new window.Event('pagehide'));
      return state;
    },
    close: () => window.close(),
  };
}

export function numbered(bodies: DiscussionEventBody[], firstSeq = 0): DiscussionEvent[] {
  return bodies.map((body, i) => ({ discussionId: 'disc-1', seq: firstSeq + i, ts: 1_700_000_000_000, ...body }) as DiscussionEvent);
}

export const ATTACHED: ExtensionToWebview = { type: 'attached', discussionId: 'disc-1', repo: '/work/repo', model: 'model-a', reset: true };

export function press(panel: Panel, target: Element, key: string, init: Record<string, unknown> = {}): KeyboardEvent {
  const event = new panel.window.KeyboardEvent('keydown', { key, bubbles: true, cancelable: true, ...init });
  target.dispatchEvent(event);
  return event;
}

export function click(panel: Panel, target: Element | null): MouseEvent {
  assert.ok(target, 'nothing to click');
  const event = new panel.window.MouseEvent('click', { bubbles: true, cancelable: true });
  target.dispatchEvent(event);
  return event;
}
