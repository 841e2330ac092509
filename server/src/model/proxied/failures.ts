/**
 * What the client reported about a failed language-model request, as a
 * ModelError that says what to do next. The remedies live here, not in the
 * client, so every client that runs these requests words them alike.
 */
import { NO_VSCODE_MODELS_REMEDY, type LmFailure } from '../../../../shared/protocol';
import { shortLine } from '../../../../shared/oneLine';
import { ModelError } from '../types';

export const NO_MODELS_REMEDY = NO_VSCODE_MODELS_REMEDY;

export function modelErrorFrom(failure: LmFailure, modelName: string): ModelError {
  // 300 characters of the client's words and the ellipsis.
  const detail = failure.detail ? ` (${shortLine(failure.detail, 301)})` : '';
  switch (failure.kind) {
    case 'no_models':
      return new ModelError('not_configured', `VS Code offers no language models${detail}. ${NO_MODELS_REMEDY} (Repo Discuss: Select endpoint).`);
    case 'model_not_found': {
      const others = (failure.available ?? []).filter((n) => typeof n === 'string').slice(0, 8);
      const offer = others.length
        ? `Pick another in Repo Discuss: Select model (${others.join(', ')}).`
        : `${NO_MODELS_REMEDY} (Repo Discuss: Select endpoint).`;
      return new ModelError('unknown_model', `The VS Code language model ${modelName} is no longer available — its extension was disabled, signed out or stopped offering it${detail}. ${offer}`);
    }
    case 'no_consent':
      return new ModelError(
        'auth',
        `Repo Discuss may not use ${modelName}: access was not granted${detail}. Send the message again and choose Allow when VS Code asks, or allow it under Accounts › Manage Language Model Access; or pick an OpenAI-compatible endpoint.`,
      );
    case 'blocked':
      return new ModelError(
        'rate_limited',
        `${modelName} refused the request: a quota or rate limit was reached${detail}. Wait and send again, or pick another model in Repo Discuss: Select model.`,
      );
    case 'cancelled':
      return new ModelError('cancelled', 'The model request was cancelled.');
    default:
      return new ModelError('server', `${modelName} failed to answer${detail}. Send the message again, or pick another model in Repo Discuss: Select model.`);
  }
}
