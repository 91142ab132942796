import { type TypeConName, typeConKey } from "../../../lf/index.js";
import type {
  EventFormat__Output,
  Filters__Output,
  Identifier__Output,
} from "../../../proto/ledger-api-types.js";
import type { Requirement } from "../../auth/authorization.js";
import { errors } from "../../errors.js";
import { partyStringError } from "../../identifiers.js";
import type { ModelRegistry } from "../../models/model-registry.js";
import { ledgerErrors } from "../ledger-errors.js";

export interface InterfaceSelection {
  readonly interfaceId: TypeConName;
  readonly includeView: boolean;
  readonly includeBlob: boolean;
}

/** One party's cumulative filter, compiled. */
interface PartyFilter {
  readonly wildcard: boolean;
  readonly wildcardBlob: boolean;
  /** template key -> include created event blob */
  readonly templates: ReadonlyMap<string, boolean>;
  readonly interfaces: readonly InterfaceSelection[];
}

/** How an event shows for a request: who sees it, and what to add to a created event. */
export interface EventSelection {
  readonly witnesses: readonly string[];
  readonly includeBlob: boolean;
  /** Interfaces matched through interface filters (views are computed for those that ask). */
  readonly interfaces: readonly InterfaceSelection[];
}

/**
 * An EventFormat compiled for matching: per party (or for any party) which templates,
 * interfaces or all (wildcard) it asks for, with the blob and view flags. `select` answers for
 * one event: the parties among its stakeholders or witnesses whose filter matches its template.
 */
export class CompiledEventFormat {
  /** Identifies the format: renderings are cached under it. */
  readonly key: string;

  private constructor(
    private readonly registry: ModelRegistry,
    private readonly anyParty: PartyFilter | undefined,
    private readonly byParty: ReadonlyMap<string, PartyFilter>,
    readonly verbose: boolean,
  ) {
    this.key = JSON.stringify([
      verbose,
      anyParty && describeFilter(anyParty),
      [...byParty].map(([party, filter]) => [party, describeFilter(filter)]),
    ]);
  }

  static compile(
    registry: ModelRegistry,
    message: EventFormat__Output | null,
    field: string,
  ): CompiledEventFormat {
    if (message === null) throw errors.missingField(field);
    const byParty = new Map<string, PartyFilter>();
    const unknown = { templates: [] as string[], interfaces: [] as string[] };
    for (const [party, filters] of Object.entries(message.filtersByParty)) {
      const error = partyStringError(party);
      if (error !== undefined) throw errors.invalidArgument(`Invalid party: ${error}`);
      byParty.set(party, compileFilters(registry, filters, unknown));
    }
    const anyParty =
      message.filtersForAnyParty === null
        ? undefined
        : compileFilters(registry, message.filtersForAnyParty, unknown);
    if (unknown.templates.length > 0 || unknown.interfaces.length > 0) {
      throw ledgerErrors.templatesOrInterfacesNotFound(unknown.templates, unknown.interfaces);
    }
    if (byParty.size === 0 && anyParty === undefined) {
      throw errors.invalidArgument("filtersByParty and filtersForAnyParty cannot be empty simultaneously");
    }
    return new CompiledEventFormat(registry, anyParty, byParty, message.verbose);
  }

  /** A wildcard format for these parties (submit-and-wait-for-transaction's default). */
  static wildcard(
    registry: ModelRegistry,
    parties: readonly string[],
    verbose: boolean,
  ): CompiledEventFormat {
    const filter: PartyFilter = { wildcard: true, wildcardBlob: false, templates: new Map(), interfaces: [] };
    return new CompiledEventFormat(registry, undefined, new Map(parties.map((p) => [p, filter])), verbose);
  }

  get forAnyParty(): boolean {
    return this.anyParty !== undefined;
  }

  get parties(): readonly string[] {
    return [...this.byParty.keys()];
  }

  /** Whether a submitter's command id may be shown (a submitter is among the readers). */
  readsAsAnyOf(parties: readonly string[]): boolean {
    return this.anyParty !== undefined || parties.some((p) => this.byParty.has(p));
  }

  /** The rights the reader needs. */
  requirement(): Requirement {
    return this.anyParty !== undefined
      ? { kind: "read-as-any-party" }
      : { kind: "read-as", parties: this.parties };
  }

  select(templateId: TypeConName, candidates: Iterable<string>): EventSelection | undefined {
    const templateKey = typeConKey(templateId);
    let witnesses: string[] | undefined;
    let includeBlob = false;
    let interfaces: InterfaceSelection[] | undefined;
    const take = (filter: PartyFilter) => {
      const match = this.match(filter, templateId, templateKey);
      if (match === undefined) return false;
      includeBlob ||= match.blob;
      if (match.interfaces.length > 0) {
        interfaces ??= [];
        for (const i of match.interfaces) if (!interfaces.includes(i)) interfaces.push(i);
      }
      return true;
    };
    if (this.anyParty !== undefined && take(this.anyParty)) witnesses = [...candidates];
    for (const party of candidates) {
      const filter = this.byParty.get(party);
      if (filter !== undefined && take(filter)) {
        witnesses ??= [];
        if (!witnesses.includes(party)) witnesses.push(party);
      }
    }
    if (witnesses === undefined || witnesses.length === 0) return undefined;
    return { witnesses, includeBlob, interfaces: interfaces ?? [] };
  }

  private match(
    filter: PartyFilter,
    templateId: TypeConName,
    templateKey: string,
  ): { blob: boolean; interfaces: readonly InterfaceSelection[] } | undefined {
    let matched = filter.wildcard;
    let blob = filter.wildcard && filter.wildcardBlob;
    const templateBlob = filter.templates.get(templateKey);
    if (templateBlob !== undefined) {
      matched = true;
      blob ||= templateBlob;
    }
    let interfaces: InterfaceSelection[] | undefined;
    if (filter.interfaces.length > 0) {
      const implemented = this.registry.template(templateId).implements;
      for (const selection of filter.interfaces) {
        if (implemented.some((i) => typeConKey(i.interfaceId) === typeConKey(selection.interfaceId))) {
          matched = true;
          blob ||= selection.includeBlob;
          interfaces ??= [];
          interfaces.push(selection);
        }
      }
    }
    return matched ? { blob, interfaces: interfaces ?? [] } : undefined;
  }
}

function compileFilters(
  registry: ModelRegistry,
  filters: Filters__Output,
  unknown: { templates: string[]; interfaces: string[] },
): PartyFilter {
  let wildcard = filters.cumulative.length === 0;
  let wildcardBlob = false;
  const templates = new Map<string, boolean>();
  const interfaces: InterfaceSelection[] = [];
  for (const cumulative of filters.cumulative) {
    if (cumulative.templateFilter) {
      const given = cumulative.templateFilter.templateId;
      if (given === null) throw errors.missingField("template_id");
      const id = resolveOrNull(registry, given);
      if (id === undefined || registry.knows(id) !== "template") {
        unknown.templates.push(`${given.packageId}:${given.moduleName}:${given.entityName}`);
        continue;
      }
      const key = typeConKey(id);
      templates.set(key, (templates.get(key) ?? false) || cumulative.templateFilter.includeCreatedEventBlob);
    } else if (cumulative.interfaceFilter) {
      const given = cumulative.interfaceFilter.interfaceId;
      if (given === null) throw errors.missingField("interface_id");
      const id = resolveOrNull(registry, given);
      if (id === undefined || registry.knows(id) !== "interface") {
        unknown.interfaces.push(`${given.packageId}:${given.moduleName}:${given.entityName}`);
        continue;
      }
      interfaces.push({
        interfaceId: id,
        includeView: cumulative.interfaceFilter.includeInterfaceView,
        includeBlob: cumulative.interfaceFilter.includeCreatedEventBlob,
      });
    } else {
      // A wildcard filter, or a cumulative filter with no identifier filter set (also a wildcard).
      wildcard = true;
      wildcardBlob ||= cumulative.wildcardFilter?.includeCreatedEventBlob ?? false;
    }
  }
  return { wildcard, wildcardBlob, templates, interfaces };
}

function resolveOrNull(registry: ModelRegistry, id: Identifier__Output): TypeConName | undefined {
  try {
    return registry.resolve(id);
  } catch {
    return undefined;
  }
}

function describeFilter(filter: PartyFilter): unknown {
  return [
    filter.wildcard,
    filter.wildcardBlob,
    [...filter.templates],
    filter.interfaces.map((i) => [typeConKey(i.interfaceId), i.includeView, i.includeBlob]),
  ];
}
