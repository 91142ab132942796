import { randomBytes } from "node:crypto";

/**
 * Contract ids in Canton's V1 shape (`00` + hex): a random per-sandbox discriminator prefix and a
 * counter, so ids are unique across restarts of a test run and cheap enough for bulk preloading.
 */
export class ContractIdAllocator {
  private readonly prefix = randomBytes(12).toString("hex");
  private counter = 0;

  next(): string {
    this.counter += 1;
    return `00${this.prefix}${this.counter.toString(16).padStart(40, "0")}`;
  }
}
