/** The commands of the code actions the server offers on selections and TODO comments. */
export const DISCUSS_SELECTION_COMMAND = 'repoDiscuss.discussSelection';
export const PROMOTE_LOCATION_COMMAND = 'repoDiscuss.promoteLocation';

/** Where an action points: the one argument of those commands. */
export interface CodeLocation {
  uri: string;
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  text: string;
  kind: 'selection' | 'todo';
}
