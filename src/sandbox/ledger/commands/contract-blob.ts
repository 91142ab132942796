import { createHmac, timingSafeEqual } from "node:crypto";
import type { JsonValue } from "../../../lf/index.js";
import type { StoredContract } from "../ledger-records.js";

/**
 * The sandbox's `createdEventBlob`: an opaque, self-contained description of a contract that a
 * client passes back as a disclosed contract. Canton's blob is a serialized FatContractInstance
 * authenticated by the contract id's hash; the sandbox's ids are not hashes, so the blob binds
 * template id, contract id, argument, parties, key and creation time with an HMAC under a
 * per-sandbox secret instead: any change to a single byte is detected.
 *
 * Layout: magic `SBX1` | 32-byte HMAC-SHA256 | UTF-8 JSON of `BlobContents`.
 */
/** The contract's own fields, with its key as JSON and its creation time as ISO text. */
export type BlobContents = Pick<
  StoredContract,
  "templateId" | "contractId" | "packageName" | "argument" | "signatories" | "observers"
> & {
  readonly key: JsonValue | undefined;
  readonly createdAt: string;
};

const MAGIC = Buffer.from("SBX1");
const MAC_LENGTH = 32;

export class ContractBlobCodec {
  constructor(private readonly secret: Buffer) {}

  encode(contents: BlobContents): Buffer {
    const body = Buffer.from(JSON.stringify(contents));
    return Buffer.concat([MAGIC, this.mac(body), body]);
  }

  /** The contents, or the reason the blob is not one this sandbox issued unchanged. */
  decode(blob: Buffer): BlobContents | string {
    if (blob.length < MAGIC.length + MAC_LENGTH || !blob.subarray(0, MAGIC.length).equals(MAGIC)) {
      return "the created event blob is not a sandbox contract blob";
    }
    const mac = blob.subarray(MAGIC.length, MAGIC.length + MAC_LENGTH);
    const body = blob.subarray(MAGIC.length + MAC_LENGTH);
    if (!timingSafeEqual(mac, this.mac(body))) {
      return "the created event blob does not match its authentication code (it was altered)";
    }
    return JSON.parse(body.toString("utf8")) as BlobContents;
  }

  private mac(body: Buffer): Buffer {
    return createHmac("sha256", this.secret).update(body).digest();
  }
}
