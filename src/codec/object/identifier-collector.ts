import type protobuf from "protobufjs";
import { messageLayout, messageTypeOf, typeNameOf } from "../rules/message-layout.js";
import type { WellKnownKind } from "../rules/well-known.js";

/** Identifiers inside Daml values (record/variant ids) are not needed to type the value. */
const kindOf = (type: protobuf.Type): WellKnownKind | undefined => messageLayout(type).wellKnown;

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
      const resolved = messageTypeOf(field);
      if (!resolved) continue;
      const kind = kindOf(resolved);
      if (kind === "untypedValue") continue;
      const fieldType = typeNameOf(resolved);
      const name = field.name;
      if (kind === "identifier") {
        steps.push((message, into) => {
          const value = message[name];
          for (const id of (Array.isArray(value) ? value : [value]) as ({ packageId?: string } | null)[]) {
            if (id?.packageId) into.add(id.packageId);
          }
        });
        continue;
      }
      if (!mayHoldIdentifiers(resolved, new Set())) continue;
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
}

/** Prunes subtrees without identifiers (timestamps, statuses, ...) from the walk. */
function mayHoldIdentifiers(type: protobuf.Type, seen: Set<protobuf.Type>): boolean {
  const kind = kindOf(type);
  if (kind === "identifier") return true;
  if (kind === "untypedValue" || seen.has(type)) return false;
  seen.add(type);
  return type.fieldsArray.some((f) => {
    const resolved = messageTypeOf(f);
    return resolved !== undefined && mayHoldIdentifiers(resolved, seen);
  });
}
