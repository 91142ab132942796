/**
 * A queue served by owner in turn: each owner's items in arrival order, and the owners one item
 * each in a rotation, an owner that arrives joining at the rotation's end. So an owner with a
 * thousand items waiting delays another owner's one by at most one item per owner ahead of it,
 * not by a thousand: what the stream budget's queues need so that one user's crowd of claims
 * cannot starve another user's claim (docs/security.md).
 */
export class FairQueue<T> {
  /** Owners in the order they are served next (a Map keeps insertion order), each with its items. */
  readonly #owners = new Map<string, T[]>();
  #length = 0;

  get length(): number {
    return this.#length;
  }

  push(owner: string, item: T): void {
    const items = this.#owners.get(owner);
    if (items === undefined) this.#owners.set(owner, [item]);
    else items.push(item);
    this.#length += 1;
  }

  /** The next owner's oldest item; that owner goes to the rotation's end if it has more. */
  shift(): T | undefined {
    for (const [owner, items] of this.#owners) {
      const item = items.shift() as T;
      this.#owners.delete(owner);
      if (items.length > 0) this.#owners.set(owner, items);
      this.#length -= 1;
      return item;
    }
    return undefined;
  }

  /** Takes `item` of `owner` out of the queue, wherever it stands; false when it is not there. */
  remove(owner: string, item: T): boolean {
    const items = this.#owners.get(owner);
    const at = items === undefined ? -1 : items.indexOf(item);
    if (items === undefined || at < 0) return false;
    items.splice(at, 1);
    if (items.length === 0) this.#owners.delete(owner);
    this.#length -= 1;
    return true;
  }
}
