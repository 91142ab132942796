/** Instantiating a generic data type: type parameters replaced by the arguments given. */
import type { LfType } from "./signature-model.js";

export function substitute(t: LfType, env: ReadonlyMap<string, LfType>): LfType {
  if (env.size === 0) return t;
  switch (t.kind) {
    case "var":
      return env.get(t.name) ?? t;
    case "con":
      return t.args.length === 0 ? t : { ...t, args: t.args.map((a) => substitute(a, env)) };
    case "nat":
    case "unserializable":
      return t;
    case "builtin":
      switch (t.name) {
        case "numeric": {
          if (typeof t.scale === "number") return t;
          const bound = env.get(t.scale.name);
          if (bound?.kind === "nat") return { kind: "builtin", name: "numeric", scale: bound.value };
          if (bound?.kind === "var") return { kind: "builtin", name: "numeric", scale: bound };
          return t;
        }
        case "contractId":
          return { ...t, template: substitute(t.template, env) };
        case "optional":
        case "list":
          return { ...t, elem: substitute(t.elem, env) };
        case "textMap":
          return { ...t, value: substitute(t.value, env) };
        case "genMap":
          return { ...t, key: substitute(t.key, env), value: substitute(t.value, env) };
        default:
          return t;
      }
  }
}

/** A canonical text of a type: equal types give equal keys (the codec cache key). */
export function typeKey(t: LfType): string {
  switch (t.kind) {
    case "var":
      return `'${t.name}`;
    case "nat":
      return `#${t.value}`;
    case "unserializable":
      return `?${t.description}`;
    case "con": {
      const head = `${t.tycon.packageId}:${t.tycon.moduleName}:${t.tycon.entityName}`;
      return t.args.length === 0 ? head : `${head}(${t.args.map(typeKey).join(",")})`;
    }
    case "builtin":
      switch (t.name) {
        case "numeric":
          return `Numeric(${typeof t.scale === "number" ? t.scale : `'${t.scale.name}`})`;
        case "contractId":
          return `ContractId(${typeKey(t.template)})`;
        case "optional":
          return `Optional(${typeKey(t.elem)})`;
        case "list":
          return `List(${typeKey(t.elem)})`;
        case "textMap":
          return `TextMap(${typeKey(t.value)})`;
        case "genMap":
          return `GenMap(${typeKey(t.key)},${typeKey(t.value)})`;
        default:
          return t.name;
      }
  }
}
