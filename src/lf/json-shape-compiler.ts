/**
 * The JSON shape of a closed LF type, decided once for every converter built on it (JSON <->
 * Value objects in value-object-target.ts; wire bytes -> JSON text in the codec's wire path).
 * The shape rules of Canton's JSON API v2 live here; a target only says how to read and
 * write each shape in its own representation:
 * - data types are resolved through the signatures and their type arguments substituted;
 *   an unknown data type is a SignatureNotFoundError, a wrong arity has no JSON encoding;
 * - a record's fields keep the signature's order, and the Optional ones may be left out
 *   (they are None then; trailing Nones are never written);
 * - a variant constructor whose argument is Unit may leave its `value` out on input;
 * - an Optional inside an Optional, or holding one, uses [] / [x] at every level so that
 *   None and Some None stay apart; a lone Optional is null / the value;
 * - Numeric scales outside 0..37, unbound type variables, type-level numbers, interfaces and
 *   unserializable types have no JSON encoding.
 * Compiled converters are cached by the canonical type key; recursive types get a placeholder
 * that is filled in once their body is compiled.
 */
import { SignatureNotFoundError } from "./errors.js";
import { type LfType, qualifiedName, type TypeConName } from "./signature-model.js";
import { type SignatureResolver, typeConKey } from "./signature-resolver.js";
import { substitute, typeKey } from "./type-substitution.js";

/** How an Optional is written: null / x alone; [] / [x] as the outermost or an inner level of a chain. */
export type OptionalForm = "alone" | "outer" | "inner";

export interface RecordFieldShape<C> {
  readonly name: string;
  readonly codec: C;
  /** The field's type is an Optional: it may be left out, and is None then. */
  readonly optional: boolean;
}

export interface ConstructorShape<C> {
  readonly name: string;
  readonly codec: C;
  /** The argument is Unit: `value` may be left out on input. */
  readonly isUnit: boolean;
}

/** What one representation builds for each JSON shape. */
export interface JsonShapeTarget<C> {
  readonly unit: C;
  readonly bool: C;
  readonly int64: C;
  readonly text: C;
  readonly party: C;
  readonly contractId: C;
  readonly date: C;
  readonly timestamp: C;
  /** A scale already checked to be 0..37. */
  numeric(scale: number): C;
  optional(elem: C, form: OptionalForm): C;
  list(elem: C): C;
  textMap(value: C): C;
  genMap(key: C, value: C): C;
  /** `name` is `Module:Entity`, for messages. */
  record(name: string, fields: readonly RecordFieldShape<C>[]): C;
  variant(name: string, constructors: readonly ConstructorShape<C>[]): C;
  enumeration(name: string, constructors: readonly string[]): C;
  /** A type with no JSON encoding; `description` names it for the error. */
  unsupported(description: string): C;
  /** Stands for a data type while its body compiles; `fill` completes it. */
  placeholder(typeKey: string): C;
  fill(placeholder: C, body: C): void;
}

const isOptionalType = (type: LfType): type is Extract<LfType, { elem: LfType }> =>
  type.kind === "builtin" && type.name === "optional";

export class JsonShapeCompiler<C> {
  private readonly cache = new Map<string, C>();
  /** Keys added by the compile in progress, dropped together if it fails. */
  private pending: string[] | undefined;

  constructor(
    private readonly resolver: Pick<SignatureResolver, "resolveDataType">,
    private readonly target: JsonShapeTarget<C>,
  ) {}

  /** Forgets every compiled type (after the resolver's packages changed). */
  clear(): void {
    this.cache.clear();
  }

  get size(): number {
    return this.cache.size;
  }

  /** The converter of a closed type; throws SignatureNotFoundError for an unknown data type. */
  compile(type: LfType): C {
    if (this.pending !== undefined) return this.compileCached(type);
    this.pending = [];
    try {
      return this.compileCached(type);
    } catch (e) {
      for (const key of this.pending) this.cache.delete(key);
      throw e;
    } finally {
      this.pending = undefined;
    }
  }

  private remember(key: string, compiled: C): C {
    this.cache.set(key, compiled);
    this.pending?.push(key);
    return compiled;
  }

  private compileCached(type: LfType): C {
    const key = typeKey(type);
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit;
    if (type.kind === "con") {
      const placeholder = this.remember(key, this.target.placeholder(key));
      this.target.fill(placeholder, this.compileCon(type.tycon, type.args));
      return placeholder;
    }
    return this.remember(key, this.compileUncached(type));
  }

  private compileUncached(type: Exclude<LfType, { kind: "con" }>): C {
    const target = this.target;
    switch (type.kind) {
      case "var":
        return target.unsupported(`the unbound type variable ${type.name}`);
      case "nat":
        return target.unsupported("a type-level number");
      case "unserializable":
        return target.unsupported(type.description);
      case "builtin":
        break;
    }
    switch (type.name) {
      case "unit":
      case "bool":
      case "int64":
      case "text":
      case "party":
      case "date":
      case "timestamp":
      case "contractId":
        return target[type.name];
      case "numeric": {
        const scale = type.scale;
        if (typeof scale !== "number")
          return target.unsupported(`Numeric with an unbound scale ${scale.name}`);
        if (!Number.isInteger(scale) || scale < 0 || scale > 37)
          return target.unsupported(`Numeric ${scale}`);
        return target.numeric(scale);
      }
      case "optional":
        return this.optional(type.elem, false);
      case "list":
        return target.list(this.compileCached(type.elem));
      case "textMap":
        return target.textMap(this.compileCached(type.value));
      case "genMap":
        return target.genMap(this.compileCached(type.key), this.compileCached(type.value));
    }
  }

  /** `chained`: this Optional sits directly inside another one (not cached: its form depends on that). */
  private optional(elem: LfType, chained: boolean): C {
    const elemIsOptional = isOptionalType(elem);
    const inner = elemIsOptional ? this.optional(elem.elem, true) : this.compileCached(elem);
    const form: OptionalForm = chained ? "inner" : elemIsOptional ? "outer" : "alone";
    return this.target.optional(inner, form);
  }

  private compileCon(tycon: TypeConName, args: readonly LfType[]): C {
    const dt = this.resolver.resolveDataType(tycon);
    if (dt === undefined) throw new SignatureNotFoundError("data type", typeConKey(tycon));
    const name = qualifiedName(tycon);
    if (dt.params.length !== args.length) {
      return this.target.unsupported(
        `${name} applied to ${args.length} type argument(s) (it takes ${dt.params.length})`,
      );
    }
    const env = new Map(dt.params.map((p, i) => [p, args[i] as LfType]));
    const body = dt.body;
    switch (body.kind) {
      case "record":
        return this.target.record(
          name,
          body.fields.map((f) => {
            const type = substitute(f.type, env);
            return { name: f.name, codec: this.compileCached(type), optional: isOptionalType(type) };
          }),
        );
      case "variant":
        return this.target.variant(
          name,
          body.constructors.map((c) => {
            const type = substitute(c.type, env);
            return {
              name: c.name,
              codec: this.compileCached(type),
              isUnit: type.kind === "builtin" && type.name === "unit",
            };
          }),
        );
      case "enum":
        return this.target.enumeration(name, body.constructors);
      case "interface":
        return this.target.unsupported(`interface ${name}`);
    }
  }
}
