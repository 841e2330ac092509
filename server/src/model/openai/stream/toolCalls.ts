/**
 * Tool calls rebuilt from the fragments servers stream them in, however they
 * are cut up or numbered.
 */
import { randomBytes } from 'node:crypto';
import type { ToolCall } from '../../types';

export interface LooseToolCallFragment {
  index?: number;
  id?: string | null;
  function?: { name?: string | null; arguments?: unknown } | null;
}

/**
 * Rebuilds tool calls from streamed fragments: id and name come first, the
 * arguments in pieces. Fragments are matched by `index`; without one, a
 * fragment continues the last call unless it brings a new id, or a name
 * after the last call's arguments are already complete JSON.
 */
export class ToolCallAssembler {
  private readonly calls: Array<{ id: string; name: string; arguments: string }> = [];
  private readonly positionByIndex = new Map<number, number>();
  private lastPosition: number | undefined;

  add(fragment: LooseToolCallFragment): void {
    const position = this.positionFor(fragment);
    const call = this.calls[position];
    if (fragment.id && !call.id) call.id = fragment.id;
    const name = fragment.function?.name;
    // Some servers repeat the name on every fragment; the first one is the name.
    if (name && !call.name) call.name = name;
    const args = fragment.function?.arguments;
    if (typeof args === 'string') call.arguments += args;
    // Ollama-backed gateways pass Ollama's native shape through: arguments as an object.
    else if (args !== undefined && args !== null) call.arguments += JSON.stringify(args);
    this.lastPosition = position;
  }

  result(): ToolCall[] {
    // Tool results must be matched to calls by id, so a call without one gets one.
    return this.calls.map((call) => ({
      id: call.id || `call_${randomBytes(6).toString('hex')}`,
      name: call.name,
      arguments: call.arguments,
    }));
  }

  private positionFor(fragment: LooseToolCallFragment): number {
    const bringsOtherId = (position: number) => {
      const known = this.calls[position].id;
      return Boolean(fragment.id) && known !== '' && known !== fragment.id;
    };
    if (typeof fragment.index === 'number') {
      const known = this.positionByIndex.get(fragment.index);
      // A new id under a used index is a new call (some servers number every call 0).
      if (known !== undefined && !bringsOtherId(known)) return known;
      const position = this.openCall();
      this.positionByIndex.set(fragment.index, position);
      return position;
    }
    if (this.lastPosition !== undefined && !bringsOtherId(this.lastPosition) && !this.startsAnother(fragment, this.lastPosition)) {
      return this.lastPosition;
    }
    return this.openCall();
  }

  /**
   * Without index or id, a fragment naming a function after the last call's
   * arguments form a complete JSON value is the next call: no proper prefix of
   * a JSON object parses, so a server repeating the name mid-arguments is not
   * mistaken for one.
   */
  private startsAnother(fragment: LooseToolCallFragment, position: number): boolean {
    const last = this.calls[position];
    if (!fragment.function?.name || fragment.id || !last.name || last.arguments.trim() === '') return false;
    try {
      JSON.parse(last.arguments);
      return true;
    } catch {
      return false;
    }
  }

  private openCall(): number {
    this.calls.push({ id: '', name: '', arguments: '' });
    return this.calls.length - 1;
  }
}
