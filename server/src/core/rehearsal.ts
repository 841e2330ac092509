import type { DiscussionEvent } from '../../../shared/protocol';
import { isVscodeModelId } from '../model/sources';
import type { ChatModel } from '../model/types';
import type { DiscussionStore } from '../store/types';
import { errorText } from '../../../shared/errorText';
import { silentLogger, type Clock, type CoreDeps, type Logger } from './deps';
import { DiscussionService } from './service';

/** What a rehearsed turn asks: any short question does, the model's reply is fixed. */
const REHEARSAL_QUESTION = 'Say hello.';
/** The one subscriber a rehearsed discussion has. */
const REHEARSAL_SUBSCRIBER = 'rehearsal';

/**
 * One turn of a discussion no client sees, on `folder`, through the code a
 * real question takes: the start and its first save, the system prompt and
 * tools, the budget, the request, the streamed reply, the events and the
 * turn's saves. Code runs slowly the first time it runs: a fresh server's
 * first question reached its first delta 3.5-5 ms later than the next
 * discussion's first question did, and the warm-up of the model's own code
 * (model/openai/warmup.ts) left most of that. Rehearsed, the first question
 * finds that code run once.
 *
 * Nothing of it reaches the real discussions: it has a service of its own
 * (so it counts against no limit and lists nowhere), `scratch` for its store,
 * and `model` for its model, which the caller points somewhere that is not
 * the user's endpoint. Rejects when the turn ends in an error.
 */
export async function rehearseTurn(deps: CoreDeps, folder: string, model: ChatModel, scratch: DiscussionStore): Promise<void> {
  const service = new DiscussionService(
    {
      ...deps,
      model,
      logger: silentLogger,
      onProgress: undefined,
      // The real default model, so the request is the one a first question
      // makes (its context window sizes the repository map and the budget);
      // the model given answers any. A VS Code model's turn would be asked of
      // the client, which must not see a rehearsal: that turn asks the
      // endpoint's default instead, through the same turn code.
      defaultModel: () => {
        const id = deps.defaultModel();
        return isVscodeModelId(id) ? undefined : id;
      },
    },
    scratch,
  );
  try {
    const { discussionId } = await service.start({ folder });
    const failures: string[] = [];
    await new Promise<void>((resolve) => {
      service.subscribe(discussionId, REHEARSAL_SUBSCRIBER, {
        deliver: (event: DiscussionEvent) => {
          if (event.type === 'error') failures.push(event.message);
          if (event.type === 'turn_complete') resolve();
        },
      });
      service.send(discussionId, REHEARSAL_QUESTION);
    });
    if (failures.length > 0) throw new Error(failures.join('; '));
  } finally {
    await service.dispose();
  }
}

/** Lends a model and a scratch store for the length of one rehearsed turn, then takes both down (the entry point makes them). */
export type RehearsalStage = (turn: (model: ChatModel, scratch: DiscussionStore) => Promise<void>) => Promise<void>;

/**
 * One rehearsal per server, on the folder of the first discussion whose
 * loads ahead of need are done; every later call settles with that one. None
 * once `asked()` says a real question came first: its turn has run that code
 * already, and a rehearsal would only take a CPU from the turns streaming.
 * Never rejects: a turn that was not rehearsed only runs colder, and the log
 * says why.
 */
export function rehearseOnce(
  stage: RehearsalStage,
  options: { logger: Logger; clock: Clock; /** Whether a real question has been asked of this server. */ asked: () => boolean },
): (deps: CoreDeps, folder: string) => Promise<void> {
  const { logger, clock, asked } = options;
  let rehearsal: Promise<void> | undefined;
  return (deps, folder) =>
    (rehearsal ??= (async () => {
      if (asked()) return;
      const started = clock.now();
      try {
        await stage((model, scratch) => rehearseTurn(deps, folder, model, scratch));
        logger.info(`Rehearsed a turn ahead of the first question, on the loopback (${clock.now() - started} ms).`);
      } catch (err) {
        logger.info(`The first question was not rehearsed (${errorText(err)}); it runs a turn's code for the first time.`);
      }
    })());
}
