/**
 * The gateway's package signature cache. Daml values in requests and events can only be
 * translated with the type signatures of their packages, which only the Daml-LF archives
 * carry; the gateway fetches them from the ledger (PackageService.GetPackage) on first need,
 * decodes them with src/lf and keeps them in a bounded LRU.
 *
 * Lookups are synchronous (the value codec runs inside a frame encoder); callers first
 * `ensure` the package ids a message mentions, which fetches the missing ones. The token of
 * the request that caused a fetch is used for that call only and never kept.
 *
 * @example
 * const cache = new PackageSignatureCache({ ledger });
 * await cache.ensure([templateId.packageId], ctx.token);
 * const json = cache.codec.templatePayload(templateId).toJson(createArguments);
 */
import {
  type DataTypeSignature,
  decodeDalf,
  type InterfaceSignature,
  type PackageSignature,
  PackageSignatureIndex,
  type SignatureResolver,
  type TemplateSignature,
  type TypeConName,
  ValueCodec,
  wrapArchive,
} from "../lf/index.js";
import type { LedgerClient } from "./ledger-client.js";

export interface PackageSignatureCacheOptions {
  /** Only `unary` is used; tests may pass a stub. */
  readonly ledger: Pick<LedgerClient, "unary">;
  /** Most packages kept (default 512). */
  readonly maxPackages?: number;
  /** Most archive payload bytes kept, a proxy for decoded size (default 128 MiB). */
  readonly maxBytes?: number;
  /** How long a `#name` -> package id preference is reused (default 5 s). */
  readonly preferenceTtlMs?: number;
  /** Clock, for tests of the preference expiry. */
  readonly now?: () => number;
}

interface CachedPackage {
  readonly signature: PackageSignature;
  readonly index: PackageSignatureIndex;
  readonly bytes: number;
}

interface Fetch {
  readonly promise: Promise<void>;
  readonly token: string | undefined;
}

interface GetPackageResponse {
  archivePayload: Buffer;
  hash: string;
}

interface GetPreferredPackagesResponse {
  packageReferences: { packageId: string; packageName: string; packageVersion: string }[];
}

const INTERACTIVE = "interactive.InteractiveSubmissionService";

export class PackageSignatureCache implements SignatureResolver {
  /** A value codec over this cache; its compiled converters are dropped when a package is evicted. */
  readonly codec: ValueCodec = new ValueCodec(this);
  private readonly ledger: Pick<LedgerClient, "unary">;
  private readonly maxPackages: number;
  private readonly maxBytes: number;
  private readonly preferenceTtlMs: number;
  private readonly now: () => number;
  /** Map order is recency order: a hit moves the entry to the end, eviction takes the front. */
  private readonly packages = new Map<string, CachedPackage>();
  private readonly inFlight = new Map<string, Fetch>();
  private readonly preferences = new Map<string, { packageId: string; expires: number }>();
  private totalBytes = 0;

  constructor(options: PackageSignatureCacheOptions) {
    this.ledger = options.ledger;
    this.maxPackages = options.maxPackages ?? 512;
    this.maxBytes = options.maxBytes ?? 128 * 1024 * 1024;
    this.preferenceTtlMs = options.preferenceTtlMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /** Packages held now (for metrics and tests). */
  get size(): number {
    return this.packages.size;
  }

  has(packageId: string): boolean {
    return this.packages.has(packageId);
  }

  /** The decoded package, if held (marks it recently used). */
  package(packageId: string): PackageSignature | undefined {
    return this.touch(packageId)?.signature;
  }

  resolveDataType(id: TypeConName): DataTypeSignature | undefined {
    return this.touch(id.packageId)?.index.resolveDataType(id);
  }

  resolveTemplate(id: TypeConName): TemplateSignature | undefined {
    return this.touch(id.packageId)?.index.resolveTemplate(id);
  }

  resolveInterface(id: TypeConName): InterfaceSignature | undefined {
    return this.touch(id.packageId)?.index.resolveInterface(id);
  }

  /**
   * Loads every missing package of `packageIds` (and the packages they import, so that types
   * from dependencies resolve too). Concurrent misses of one package share one GetPackage call.
   */
  async ensure(packageIds: Iterable<string>, token: string | undefined): Promise<void> {
    const missing = [...new Set(packageIds)].filter((id) => !this.packages.has(id));
    await Promise.all(missing.map((id) => this.load(id, token)));
  }

  /**
   * The package id the ledger prefers for `#name` when `party` submits (GetPreferredPackages,
   * reused for a short while). The caller still sends the `#name` form to the ledger; the id
   * is what its values are typed with.
   */
  async resolvePackageName(name: string, party: string, token: string | undefined): Promise<string> {
    const held = this.preferredPackageNow(name, party);
    if (held !== undefined) return held;
    const key = `${name}\u0000${party}`;
    const response = await this.ledger.unary<GetPreferredPackagesResponse>(
      INTERACTIVE,
      "GetPreferredPackages",
      { packageVettingRequirements: [{ parties: [party], packageName: name }] },
      token,
    );
    const reference = response.packageReferences.find((r) => r.packageName === name);
    // The ledger answers FAILED_PRECONDITION when there is none; an answer without it is a bug there.
    if (reference === undefined) throw new Error(`the ledger returned no preferred package for ${name}`);
    this.preferences.set(key, { packageId: reference.packageId, expires: this.now() + this.preferenceTtlMs });
    return reference.packageId;
  }

  /** The preference `resolvePackageName` holds for `name` and `party`, while it is fresh. */
  preferredPackageNow(name: string, party: string): string | undefined {
    const cached = this.preferences.get(`${name}\u0000${party}`);
    return cached !== undefined && cached.expires > this.now() ? cached.packageId : undefined;
  }

  /** Loads every package the ledger lists that is not held yet (e.g. to warm up at start). */
  async refresh(token: string | undefined): Promise<void> {
    const { packageIds } = await this.ledger.unary<{ packageIds: string[] }>(
      "PackageService",
      "ListPackages",
      {},
      token,
    );
    await this.ensure(packageIds, token);
  }

  private touch(packageId: string): CachedPackage | undefined {
    const entry = this.packages.get(packageId);
    if (entry !== undefined) {
      this.packages.delete(packageId);
      this.packages.set(packageId, entry);
    }
    return entry;
  }

  private load(packageId: string, token: string | undefined): Promise<void> {
    const running = this.inFlight.get(packageId);
    if (running !== undefined) {
      // A fetch another request started may fail for reasons of its token only: retry with ours.
      return running.token === token
        ? running.promise
        : running.promise.catch(() => this.load(packageId, token));
    }
    const promise = this.fetch(packageId, token).finally(() => this.inFlight.delete(packageId));
    this.inFlight.set(packageId, { promise, token });
    return promise;
  }

  private async fetch(packageId: string, token: string | undefined): Promise<void> {
    const response = await this.ledger.unary<GetPackageResponse>(
      "PackageService",
      "GetPackage",
      { packageId },
      token,
    );
    const signature = decodeDalf(archiveOf(response));
    if (signature.packageId !== packageId) {
      throw new Error(`the ledger served package ${signature.packageId} for ${packageId}`);
    }
    this.insert(signature, response.archivePayload.byteLength);
    await this.ensure(signature.imports, token);
  }

  private insert(signature: PackageSignature, bytes: number): void {
    if (this.packages.has(signature.packageId)) return;
    this.packages.set(signature.packageId, {
      signature,
      index: new PackageSignatureIndex([signature]),
      bytes,
    });
    this.totalBytes += bytes;
    let evicted = false;
    for (const [id, entry] of this.packages) {
      if (this.packages.size <= this.maxPackages && this.totalBytes <= this.maxBytes) break;
      if (id === signature.packageId) break; // the newest one stays, even alone over the byte budget
      this.packages.delete(id);
      this.totalBytes -= entry.bytes;
      evicted = true;
    }
    // Compiled converters hold the signatures they were built from; drop them with the package.
    if (evicted) this.codec.clear();
  }
}

/** GetPackage answers with the Archive's parts; src/lf reads whole Archives (the .dalf form). */
function archiveOf(response: GetPackageResponse): Uint8Array {
  return wrapArchive(response.archivePayload, response.hash);
}
