import type protobuf from "protobufjs";

const IDENTIFIER = "com.daml.ledger.api.v2.Identifier";
/** Identifiers inside Daml values (record/variant ids) are not needed to type the value. */
const SKIP = new Set(["com.daml.ledger.api.v2.Value", "com.daml.ledger.api.v2.Record"]);

type Collect = (message: Record<string, unknown>, into: Set<string>) => void;

/**
 * The package ids a decoded message names in its Identifier fields (template and interface
 * ids of events): the packages whose signatures must be loaded before the message can be
 * written as JSON. Compiled once per message type, since it runs for every stream element.
 */
export class IdentifierCollector {
  private readonly compiled = new Map<string, Collect>();

  constructor(private readonly root: protobuf.Root) {}

  packageIds(typeName: string, message: unknown): Set<string> {
    const into = new Set<string>();
    this.collector(typeName)(message as Record<string, unknown>, into);
    return into;
  }

  private collector(typeName: string): Collect {
    let collect = this.compiled.get(typeName);
    if (collect) return collect;
    let steps: Collect[] = [];
    // Registered before compiling so that recursive types terminate.
    collect = (message, into) => {
      for (const step of steps) step(message, into);
    };
    this.compiled.set(typeName, collect);
    steps = this.compile(this.root.lookupType(typeName));
    return collect;
  }

  private compile(type: protobuf.Type): Collect[] {
    const steps: Collect[] = [];
    for (const field of type.fieldsArray) {
      const resolved = field.resolvedType;
      if (!resolved || !("fieldsArray" in resolved)) continue;
      const fieldType = resolved.fullName.slice(1);
      if (SKIP.has(fieldType)) continue;
      const name = field.name;
      if (fieldType === IDENTIFIER) {
        steps.push((message, into) => {
          const value = message[name];
          for (const id of (Array.isArray(value) ? value : [value]) as ({ packageId?: string } | null)[]) {
            if (id?.packageId) into.add(id.packageId);
          }
        });
        continue;
      }
      if (!this.mayHoldIdentifiers(fieldType, new Set())) continue;
      steps.push((message, into) => {
        const value = message[name];
        if (value === null || value === undefined) return;
        const inner = this.collector(fieldType);
        if (field.map) for (const v of Object.values(value as object)) inner(v, into);
        else if (Array.isArray(value)) for (const v of value) inner(v, into);
        else inner(value as Record<string, unknown>, into);
      });
    }
    return steps;
  }

  /** Prunes subtrees without identifiers (timestamps, statuses, ...) from the walk. */
  private mayHoldIdentifiers(typeName: string, seen: Set<string>): boolean {
    if (typeName === IDENTIFIER) return true;
    if (SKIP.has(typeName) || seen.has(typeName)) return false;
    seen.add(typeName);
    const type = this.root.lookupType(typeName);
    return type.fieldsArray.some((f) => {
      const resolved = f.resolvedType;
      return (
        !!resolved && "fieldsArray" in resolved && this.mayHoldIdentifiers(resolved.fullName.slice(1), seen)
      );
    });
  }
}
