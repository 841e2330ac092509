/**
 * Attachment chips: those of a sent message (from its `user_message`
 * outcomes) and those waiting in the input (picked with `@`, dropped, "Discuss
 * selection", and the implicit active-file chip). A path is repository input:
 * every label is shared/mentions.ts's attachmentLabel in the panel's look
 * (through printablePath and inertLine, as tool chips), set as text, never
 * markup.
 */
import type { Attachment, AttachmentOutcome } from '../../../shared/protocol';
import { attachmentLabel, PANEL_CHIP } from '../../../shared/mentions';
import { inertLine } from '../../../shared/printablePath';
import { element, icon } from './dom';
import type { Panel } from './panel';

function chipIcon(attachment: Attachment): string {
  return attachment.kind === 'selection' ? 'selection' : attachment.kind === 'symbol' ? 'symbol-method' : 'file';
}

/** The chips under a sent message: what was attached, what was cut and what was refused, with why. */
export function sentAttachmentChips(outcomes: readonly AttachmentOutcome[]): HTMLElement {
  return element(
    'ul',
    { class: 'attachment-chips', 'aria-label': 'Attached' },
    outcomes.map((outcome) => {
      const label = attachmentLabel(outcome, PANEL_CHIP);
      const note = outcome.note ? inertLine(outcome.note) : '';
      const status = outcome.status === 'refused' ? `not attached: ${note}` : outcome.status === 'cut' ? `cut: ${note}` : 'attached';
      return element('li', { class: `attachment-chip is-${outcome.status}`, title: `${label} — ${status}` }, [
        icon(outcome.status === 'refused' ? 'circle-slash' : outcome.status === 'cut' ? 'warning' : chipIcon(outcome)),
        element('span', { class: 'attachment-label' }, [label]),
        ...(outcome.status !== 'attached' && note ? [element('span', { class: 'attachment-note' }, [note])] : []),
      ]);
    }),
  );
}

function sameAttachment(a: Attachment, b: Attachment): boolean {
  return a.kind === b.kind && a.path === b.path && a.startLine === b.startLine && a.endLine === b.endLine && a.symbol === b.symbol;
}

/** Adds a chip to the input unless an equal one is there already. */
export function addPendingAttachment(panel: Panel, attachment: Attachment): void {
  if (!panel.pendingAttachments.some((existing) => sameAttachment(existing, attachment))) panel.pendingAttachments.push(attachment);
  renderPendingAttachments(panel);
}

/** What the next send carries: the chips, and the active file unless dropped (or already a chip). */
export function attachmentsToSend(panel: Panel): Attachment[] {
  const list = [...panel.pendingAttachments];
  const active = panel.activeFile;
  if (active && !panel.activeFileDropped && !list.some((a) => sameAttachment(a, active))) list.unshift(active);
  return list;
}

/** After a send: the chips are used; the active file comes back for the next message. */
export function clearPendingAttachments(panel: Panel): void {
  panel.pendingAttachments.length = 0;
  panel.activeFileDropped = false;
  renderPendingAttachments(panel);
}

export function setActiveFile(panel: Panel, attachment: Attachment | null): void {
  const previous = panel.activeFile;
  panel.activeFile = attachment;
  // Dropping is for this file: another file's chip is on again.
  if (!attachment || !previous || attachment.path !== previous.path) panel.activeFileDropped = false;
  renderPendingAttachments(panel);
}

export function renderPendingAttachments(panel: Panel): void {
  const { attachmentBar, activeFile, activeFileDropped, pendingAttachments } = panel;
  const chips: HTMLElement[] = [];
  if (activeFile && !activeFileDropped) {
    const label = attachmentLabel(activeFile, PANEL_CHIP);
    chips.push(
      element('li', { class: 'attachment-chip is-implicit', title: `Current ${activeFile.kind === 'selection' ? 'selection' : 'file'}: ${label}` }, [
        icon(activeFile.kind === 'selection' ? 'selection' : 'file'),
        element('span', { class: 'attachment-label' }, [label]),
        element('button', {
          type: 'button',
          class: 'icon-button attachment-remove',
          'data-action': 'drop-active-file',
          'aria-label': `Do not attach ${label} to this message`,
          title: 'Do not attach to this message',
        }, [icon('close')]),
      ]),
    );
  }
  pendingAttachments.forEach((attachment, index) => {
    const label = attachmentLabel(attachment, PANEL_CHIP);
    chips.push(
      element('li', { class: attachment.kind === 'symbol' ? 'attachment-chip is-symbol' : 'attachment-chip', title: label }, [
        icon(chipIcon(attachment)),
        element('span', { class: 'attachment-label' }, [label]),
        element('button', {
          type: 'button',
          class: 'icon-button attachment-remove',
          'data-action': 'remove-attachment',
          'data-index': String(index),
          'aria-label': `Remove ${label}`,
          title: 'Remove',
        }, [icon('close')]),
      ]),
    );
  });
  attachmentBar.replaceChildren(...chips);
  attachmentBar.hidden = chips.length === 0;
}

export function removePendingAttachment(panel: Panel, index: number): void {
  if (index >= 0 && index < panel.pendingAttachments.length) panel.pendingAttachments.splice(index, 1);
  renderPendingAttachments(panel);
}

/**
 * The folder-relative path of a dropped `file:` URI, or undefined when it is
 * not a file URI inside the discussed folder (the server checks again: this
 * only keeps the chip list honest).
 */
export function droppedPath(uri: string, repo: string | null): string | undefined {
  if (!repo) return undefined;
  let url: URL;
  try {
    url = new URL(uri.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'file:') return undefined;
  let filePath: string;
  try {
    filePath = decodeURIComponent(url.pathname);
  } catch {
    return undefined;
  }
  // file:///c%3A/x on Windows: drop the leading slash before a drive letter.
  if (/^\/[A-Za-z]:\//.test(filePath)) filePath = filePath.slice(1);
  const normalize = (p: string) => p.replace(/\\/g, '/').replace(/\/+$/, '');
  const root = normalize(repo);
  const file = normalize(filePath);
  const caseFree = /^[A-Za-z]:\//.test(root);
  const [rootKey, fileKey] = caseFree ? [root.toLowerCase(), file.toLowerCase()] : [root, file];
  if (!fileKey.startsWith(`${rootKey}/`)) return undefined;
  const relative = file.slice(root.length + 1);
  if (relative === '' || relative.split('/').some((part) => part === '..' || part === '.')) return undefined;
  return relative;
}

/** Files dropped from the Explorer or an editor tab become chips; anything outside the folder is turned down. */
export function handleDrops(panel: Panel, announce: (text: string) => void): void {
  const { app } = panel;
  const hasUris = (event: DragEvent) => {
    const types = Array.from(event.dataTransfer?.types ?? []);
    return types.includes('application/vnd.code.uri-list') || types.includes('text/uri-list');
  };
  app.addEventListener('dragover', (event) => {
    if (!hasUris(event)) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
  });
  app.addEventListener('drop', (event) => {
    const data = event.dataTransfer;
    if (!data) return;
    const raw = data.getData('application/vnd.code.uri-list') || data.getData('text/uri-list');
    if (!raw) return;
    event.preventDefault();
    let added = 0;
    let outside = 0;
    for (const line of raw.split(/\r?\n/)) {
      if (!line.trim() || line.startsWith('#')) continue;
      const relative = droppedPath(line, panel.model.state.repo);
      if (relative === undefined) outside += 1;
      else {
        addPendingAttachment(panel, { kind: 'file', path: relative });
        added += 1;
      }
    }
    if (outside > 0) announce(`${outside} dropped ${outside === 1 ? 'item is' : 'items are'} not a file in this folder: not attached`);
    else if (added > 0) announce(`Attached ${added} ${added === 1 ? 'file' : 'files'}`);
    panel.input.focus();
  });
}
