import { splitIdentifier } from "../rules/well-known.js";

/** The template references of a JsCommands body, for resolving `#name` and loading signatures first. */
export function commandTemplateRefs(commands: unknown): string[] {
  const refs = new Set<string>();
  const body = commands as { commands?: unknown; prefetchContractKeys?: unknown } | null;
  for (const command of Array.isArray(body?.commands) ? body.commands : []) {
    if (command === null || typeof command !== "object") continue;
    for (const inner of Object.values(command)) {
      const templateId = (inner as { templateId?: unknown } | null)?.templateId;
      if (typeof templateId === "string") refs.add(templateId);
    }
  }
  for (const prefetch of Array.isArray(body?.prefetchContractKeys) ? body.prefetchContractKeys : []) {
    const templateId = (prefetch as { templateId?: unknown } | null)?.templateId;
    if (typeof templateId === "string") refs.add(templateId);
  }
  return [...refs].flatMap((ref) => {
    const parts = splitIdentifier(ref);
    return parts ? [parts.packageId] : [];
  });
}
