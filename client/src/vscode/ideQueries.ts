import * as vscode from 'vscode';
import type { IdeItem, IdeQueryRequest, IdeRange } from '../../../shared/protocol';

/**
 * Answers the server's `discuss/ideQuery` from VS Code's own language
 * providers, so the symbol tools are precise in every language the user has
 * an extension for. Only locations go back, never file contents: the server
 * applies its read boundary to each one and reads the cited lines itself.
 */

/** More than this many items in one answer are dropped: the server shows far fewer, and a reply must stay small. */
const MAX_ITEMS = 5000;
/** How long a just-opened file's diagnostics are waited for (a language server checks it after it opens). */
const DIAGNOSTICS_WAIT_MS = 2_000;

const SEVERITIES: Record<vscode.DiagnosticSeverity, NonNullable<IdeItem['severity']>> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

function rangeOf(range: vscode.Range): IdeRange {
  return { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } };
}

function kindName(kind: vscode.SymbolKind): string {
  return vscode.SymbolKind[kind] ?? 'Symbol';
}

/** A Location or a LocationLink (definition providers answer either) as a protocol item. */
export function locationItem(location: vscode.Location | vscode.LocationLink): IdeItem {
  if ('targetUri' in location) {
    return {
      uri: location.targetUri.toString(),
      range: rangeOf(location.targetRange),
      ...(location.targetSelectionRange ? { selectionRange: rangeOf(location.targetSelectionRange) } : {}),
    };
  }
  return { uri: location.uri.toString(), range: rangeOf(location.range) };
}

/** A SymbolInformation or a DocumentSymbol (with its children) as a protocol item. */
export function symbolItem(symbol: vscode.SymbolInformation | vscode.DocumentSymbol, uri: vscode.Uri | undefined, budget = { left: MAX_ITEMS }): IdeItem | undefined {
  if (budget.left <= 0) return undefined;
  budget.left -= 1;
  if ('location' in symbol) {
    return {
      uri: symbol.location.uri.toString(),
      range: rangeOf(symbol.location.range),
      name: symbol.name,
      kind: kindName(symbol.kind),
      ...(symbol.containerName ? { container: symbol.containerName } : {}),
    };
  }
  if (!uri) return undefined;
  const children = (symbol.children ?? []).flatMap((child) => symbolItem(child, uri, budget) ?? []);
  return {
    uri: uri.toString(),
    range: rangeOf(symbol.range),
    selectionRange: rangeOf(symbol.selectionRange),
    name: symbol.name,
    kind: kindName(symbol.kind),
    ...(children.length > 0 ? { children } : {}),
  };
}

export function diagnosticItem(uri: vscode.Uri, diagnostic: vscode.Diagnostic): IdeItem {
  return {
    uri: uri.toString(),
    range: rangeOf(diagnostic.range),
    severity: SEVERITIES[diagnostic.severity] ?? 'error',
    message: diagnostic.message,
    ...(diagnostic.source ? { source: diagnostic.source } : {}),
  };
}

class Cancelled extends Error {}

/** Rejects with Cancelled once the server withdraws the question, so no provider is waited on for nothing. */
function unlessCancelled<T>(work: Thenable<T>, token: vscode.CancellationToken): Promise<T> {
  if (token.isCancellationRequested) return Promise.reject(new Cancelled());
  return new Promise<T>((resolve, reject) => {
    const listener = token.onCancellationRequested(() => reject(new Cancelled()));
    work.then(
      (value) => (listener.dispose(), resolve(value)),
      (error: unknown) => (listener.dispose(), reject(error)),
    );
  });
}

/** Only `file:` URIs are asked about: the server names files in its folder and nothing else. */
function fileUri(uri: unknown): vscode.Uri | undefined {
  if (typeof uri !== 'string') return undefined;
  try {
    const parsed = vscode.Uri.parse(uri, true);
    return parsed.scheme === 'file' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function positionOf(params: IdeQueryRequest.Params): vscode.Position | undefined {
  const p = params.position;
  return p && Number.isInteger(p.line) && p.line >= 0 && Number.isInteger(p.character) && p.character >= 0 ? new vscode.Position(p.line, p.character) : undefined;
}

/** The document loaded (not shown), so a provider that needs it has it. */
async function opened(uri: vscode.Uri, token: vscode.CancellationToken): Promise<vscode.TextDocument> {
  return unlessCancelled(vscode.workspace.openTextDocument(uri), token);
}

async function diagnosticsOf(uri: vscode.Uri, token: vscode.CancellationToken): Promise<vscode.Diagnostic[]> {
  const wasOpen = vscode.workspace.textDocuments.some((document) => document.uri.toString() === uri.toString());
  if (wasOpen) return vscode.languages.getDiagnostics(uri);
  // A file just opened is checked afterwards: wait for its first report, within a bound.
  const arrived = new Promise<void>((resolve) => {
    const timer = setTimeout(() => (listener.dispose(), resolve()), DIAGNOSTICS_WAIT_MS);
    const listener = vscode.languages.onDidChangeDiagnostics((event) => {
      if (event.uris.some((changed) => changed.toString() === uri.toString())) {
        clearTimeout(timer);
        listener.dispose();
        resolve();
      }
    });
  });
  await opened(uri, token);
  await unlessCancelled(arrived, token);
  return vscode.languages.getDiagnostics(uri);
}

async function answer(params: IdeQueryRequest.Params, token: vscode.CancellationToken): Promise<IdeItem[]> {
  const uri = fileUri(params.uri);
  const position = positionOf(params);
  switch (params.kind) {
    case 'workspaceSymbols': {
      if (typeof params.query !== 'string' || params.query === '') return [];
      const found = await unlessCancelled(vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', params.query), token);
      const budget = { left: MAX_ITEMS };
      return (found ?? []).flatMap((symbol) => symbolItem(symbol, undefined, budget) ?? []);
    }
    case 'definition':
    case 'references': {
      if (!uri || !position) return [];
      await opened(uri, token);
      const command = params.kind === 'definition' ? 'vscode.executeDefinitionProvider' : 'vscode.executeReferenceProvider';
      const found = await unlessCancelled(vscode.commands.executeCommand<Array<vscode.Location | vscode.LocationLink> | undefined>(command, uri, position), token);
      return (found ?? []).slice(0, MAX_ITEMS).map(locationItem);
    }
    case 'documentSymbols': {
      if (!uri) return [];
      await opened(uri, token);
      const found = await unlessCancelled(
        vscode.commands.executeCommand<Array<vscode.SymbolInformation | vscode.DocumentSymbol> | undefined>('vscode.executeDocumentSymbolProvider', uri),
        token,
      );
      const budget = { left: MAX_ITEMS };
      return (found ?? []).flatMap((symbol) => symbolItem(symbol, uri, budget) ?? []);
    }
    case 'diagnostics': {
      if (params.uri !== undefined) {
        if (!uri) return [];
        return (await diagnosticsOf(uri, token)).slice(0, MAX_ITEMS).map((diagnostic) => diagnosticItem(uri, diagnostic));
      }
      const items: IdeItem[] = [];
      for (const [fileUri, diagnostics] of vscode.languages.getDiagnostics()) {
        for (const diagnostic of diagnostics) if (items.length < MAX_ITEMS) items.push(diagnosticItem(fileUri, diagnostic));
      }
      return items;
    }
    default:
      return [];
  }
}

/** The request handler: a failing or cancelled provider is an empty answer, and the server falls back to its own index. */
export async function answerIdeQuery(params: IdeQueryRequest.Params, token: vscode.CancellationToken): Promise<IdeQueryRequest.Result> {
  try {
    return { items: await answer(params ?? ({} as IdeQueryRequest.Params), token) };
  } catch {
    return { items: [] };
  }
}
