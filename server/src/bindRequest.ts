import { ErrorCodes, ResponseError, type Connection } from 'vscode-languageserver';
import type { DiscussErrorData, DiscussMethod, ParamsOf, ResultOf, Untrusted } from '../../shared/protocol';
import { DiscussError } from './core/errors';
import { errorClause } from '../../shared/errorText';

/**
 * Binds one protocol request to `handler`, typed by the protocol's request
 * map: the handler sees the params' field names (unchecked values) and must
 * return that method's result, so a changed field breaks the build here too.
 */
export function bindRequest<M extends DiscussMethod>(
  connection: Connection,
  method: M,
  handler: (params: Untrusted<ParamsOf<M>>) => ResultOf<M> | Promise<ResultOf<M>>,
): void {
  // A client may send no params, or a non-object: every field is then absent.
  connection.onRequest(method, (params: unknown) =>
    answer(() => handler((params !== null && typeof params === 'object' ? params : {}) as Untrusted<ParamsOf<M>>)),
  );
}

/** Runs a handler, turning a refusal into a JSON-RPC error a person can act on. */
export async function answer<T>(run: () => T | Promise<T>): Promise<T | ResponseError<DiscussErrorData | undefined>> {
  try {
    return await run();
  } catch (err) {
    return asResponseError(err);
  }
}

export function asResponseError(err: unknown): ResponseError<DiscussErrorData | undefined> {
  if (err instanceof DiscussError) return new ResponseError(err.code, err.message, err.remedy ? { remedy: err.remedy } : undefined);
  return new ResponseError(ErrorCodes.InternalError, `The server failed: ${errorClause(err)}. See the server log for details.`, undefined);
}
