/**
 * The live calls of this node (jambonz feature-server's SessionTracker): found by UUID, by user
 * and by platform number in O(1). A call is added when the engine makes it and leaves when it
 * ends; its user and number maps follow its changes (an IVR's redirect to another number).
 */
import type { Call, CallKeys } from './call.js';

export class CallRegistry {
  readonly #byUuid = new Map<string, Call>();
  readonly #byUser = new Map<string, Set<Call>>();
  readonly #byNumber = new Map<string, Set<Call>>();
  readonly #unwatch = new Map<Call, () => void>();
  readonly #listeners: ((call: Call) => void)[] = [];

  /** Told of every call added (it can `watch` the call from there). */
  onAdd(listener: (call: Call) => void): void {
    this.#listeners.push(listener);
  }

  /** Registers a live call; it leaves by itself when it ends. */
  add(call: Call): void {
    if (call.ended || this.#byUuid.has(call.uuid)) return;
    this.#byUuid.set(call.uuid, call);
    this.index(call.keys, call);
    for (const listener of this.#listeners) listener(call);
    this.#unwatch.set(
      call,
      call.watch((changed, before) => {
        this.unindex(before, changed);
        if (changed.ended) this.remove(changed);
        else this.index(changed.keys, changed);
      }),
    );
  }

  remove(call: Call): void {
    if (this.#byUuid.get(call.uuid) !== call) return;
    this.#byUuid.delete(call.uuid);
    this.unindex(call.keys, call);
    this.#unwatch.get(call)?.();
    this.#unwatch.delete(call);
  }

  get(uuid: string): Call | undefined {
    return this.#byUuid.get(uuid);
  }

  /** The live calls a user owns or is called in. */
  ofUser(user: string): ReadonlySet<Call> {
    return this.#byUser.get(user) ?? new Set();
  }

  /** The live calls to or from a platform number. */
  ofNumber(number: string): ReadonlySet<Call> {
    return this.#byNumber.get(number) ?? new Set();
  }

  get size(): number {
    return this.#byUuid.size;
  }

  [Symbol.iterator](): IterableIterator<Call> {
    return this.#byUuid.values();
  }

  private index(keys: CallKeys, call: Call): void {
    for (const user of keys.users) add(this.#byUser, user, call);
    for (const number of keys.numbers) add(this.#byNumber, number, call);
  }

  private unindex(keys: CallKeys, call: Call): void {
    for (const user of keys.users) drop(this.#byUser, user, call);
    for (const number of keys.numbers) drop(this.#byNumber, number, call);
  }
}

function add(map: Map<string, Set<Call>>, key: string, call: Call): void {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(call);
}

function drop(map: Map<string, Set<Call>>, key: string, call: Call): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(call);
  if (set.size === 0) map.delete(key);
}
