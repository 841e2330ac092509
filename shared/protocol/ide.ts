import { LmModelsRequest, LmRequest } from './languageModels';

/**
 * Server → client requests: questions the server asks the editor it runs in.
 * Only a client that says so in `initialize` (`ideQueries: true`) is asked.
 */

export interface IdePosition {
  /** 0-based, as in the editor. */
  line: number;
  /** 0-based UTF-16 offset. */
  character: number;
}

export interface IdeRange {
  start: IdePosition;
  end: IdePosition;
}

/** One location the editor's language service answered with: never file contents. */
export interface IdeItem {
  /** A URI as the editor spells it; the server maps `file:` URIs to paths and leaves out every other. */
  uri: string;
  /** For a definition, the whole declaration; otherwise the name or the cited span. */
  range: IdeRange;
  /** The name's span when `range` is a whole declaration (definitions, document symbols). */
  selectionRange?: IdeRange;
  name?: string;
  /** The editor's symbol kind, e.g. "Class", "Function", "EnumMember". */
  kind?: string;
  container?: string;
  severity?: 'error' | 'warning' | 'info' | 'hint';
  message?: string;
  source?: string;
  /** Nested document symbols. */
  children?: IdeItem[];
}

/** Server → client: ask the editor's own language providers. */
export namespace IdeQueryRequest {
  export const method = 'discuss/ideQuery';
  export type Kind = 'workspaceSymbols' | 'definition' | 'references' | 'documentSymbols' | 'diagnostics';
  export interface Params {
    kind: Kind;
    /** The file asked about (definition, references, documentSymbols; diagnostics of one file). */
    uri?: string;
    position?: IdePosition;
    /** The name searched for (workspaceSymbols). */
    query?: string;
    includeDeclaration?: boolean;
  }
  export interface Result {
    items: IdeItem[];
    /** The editor gave up waiting for its provider; `items` may be partial. */
    timedOut?: boolean;
  }
}

/** The requests the server sends to the client: `method → [params, result]`. */
export interface ClientRequests {
  [IdeQueryRequest.method]: [IdeQueryRequest.Params, IdeQueryRequest.Result];
  [LmRequest.method]: [LmRequest.Params, LmRequest.Result];
  [LmModelsRequest.method]: [LmModelsRequest.Params, LmModelsRequest.Result];
}

export type ClientMethod = keyof ClientRequests;
export type ClientParamsOf<M extends ClientMethod> = ClientRequests[M][0];
export type ClientResultOf<M extends ClientMethod> = ClientRequests[M][1];
