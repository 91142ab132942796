/**
 * Typed Daml value codec: JSON API v2 JSON <-> Ledger API `Value`, driven by signatures.
 *
 * Converters are compiled once per type and cached (json-shape-compiler.ts, value-object-target.ts); the entry
 * points that name a template, choice or interface cache their converter too, so the
 * per-event cost on the update stream is one Map lookup plus the walk over the value.
 *
 * @example
 * const codec = new ValueCodec(new PackageSignatureIndex([decodeDalf(bytes)]));
 * const value = codec.templatePayload(iouId).toValue(body.createArguments, "createArguments");
 * const json = codec.templatePayload(iouId).toJson(createdEvent.createArguments);
 */
import { SignatureNotFoundError } from "./errors.js";
import { JsonShapeCompiler } from "./json-shape-compiler.js";
import type { ChoiceSignature, LfType, TypeConName } from "./signature-model.js";
import { type SignatureResolver, typeConKey } from "./signature-resolver.js";
import { ValueFault } from "./value-fault.js";
import { type CompiledType, valueObjectTarget } from "./value-object-target.js";
import type { JsonValue, LedgerValue } from "./value-shapes.js";

export interface TypedValueCodec {
  readonly type: LfType;
  /** JSON -> Value. Throws ValueCodecError naming the JSON path under `rootPath`. */
  toValue(json: unknown, rootPath?: string): LedgerValue;
  /**
   * Value -> JSON. Field names come from the signature (labels in the Value are not
   * needed), so verbose and non-verbose ledger output give the same JSON.
   */
  toJson(value: LedgerValue, rootPath?: string): JsonValue;
}

function wrap(type: LfType, compiled: CompiledType): TypedValueCodec {
  return {
    type,
    toValue(json, rootPath = "") {
      try {
        return compiled.toValue(json);
      } catch (e) {
        throw e instanceof ValueFault ? e.toError(rootPath) : e;
      }
    },
    toJson(value, rootPath = "") {
      try {
        return compiled.toJson(value);
      } catch (e) {
        throw e instanceof ValueFault ? e.toError(rootPath) : e;
      }
    },
  };
}

const con = (tycon: TypeConName): LfType => ({ kind: "con", tycon, args: [] });

export class ValueCodec {
  private readonly compiler: JsonShapeCompiler<CompiledType>;
  private readonly byTypeObject = new WeakMap<LfType, TypedValueCodec>();
  private readonly byName = new Map<string, TypedValueCodec>();

  constructor(private readonly resolver: SignatureResolver) {
    this.compiler = new JsonShapeCompiler(resolver, valueObjectTarget);
  }

  /** Drops every cached converter (call it when the resolver's packages were replaced). */
  clear(): void {
    this.compiler.clear();
    this.byName.clear();
  }

  /** The converter for any closed type (a type object reused by the caller hits a WeakMap). */
  forType(type: LfType): TypedValueCodec {
    let codec = this.byTypeObject.get(type);
    if (codec === undefined) {
      codec = wrap(type, this.compiler.compile(type));
      this.byTypeObject.set(type, codec);
    }
    return codec;
  }

  private named(key: string, build: () => LfType): TypedValueCodec {
    let codec = this.byName.get(key);
    if (codec === undefined) {
      codec = this.forType(build());
      this.byName.set(key, codec);
    }
    return codec;
  }

  /** Create arguments / created-event payload of a template. */
  templatePayload(templateId: TypeConName): TypedValueCodec {
    return this.named(`payload ${typeConKey(templateId)}`, () => {
      if (!this.resolver.resolveTemplate(templateId))
        throw new SignatureNotFoundError("template", typeConKey(templateId));
      return con(templateId);
    });
  }

  /** Contract key of a template (SignatureNotFoundError if the template has none). */
  contractKey(templateId: TypeConName): TypedValueCodec {
    return this.named(`key ${typeConKey(templateId)}`, () => {
      const template = this.resolver.resolveTemplate(templateId);
      if (!template) throw new SignatureNotFoundError("template", typeConKey(templateId));
      if (template.key === undefined) {
        throw new SignatureNotFoundError("contract key", typeConKey(templateId));
      }
      return template.key;
    });
  }

  /** View of an interface (interface views in events and `InterfaceFilter` results). */
  interfaceView(interfaceId: TypeConName): TypedValueCodec {
    return this.named(`view ${typeConKey(interfaceId)}`, () => {
      const iface = this.resolver.resolveInterface(interfaceId);
      if (!iface) throw new SignatureNotFoundError("interface", typeConKey(interfaceId));
      return iface.view;
    });
  }

  /** Choice argument; `id` names the template or the interface the choice is exercised on. */
  choiceArgument(id: TypeConName, choice: string): TypedValueCodec {
    return this.named(`arg ${typeConKey(id)} ${choice}`, () => this.findChoice(id, choice).argType);
  }

  /** Choice result (exercise result in transaction trees and submit-and-wait responses). */
  choiceResult(id: TypeConName, choice: string): TypedValueCodec {
    return this.named(`result ${typeConKey(id)} ${choice}`, () => this.findChoice(id, choice).returnType);
  }

  /**
   * A template's own choices first, then those of the interfaces it implements (so an
   * interface choice named through the template id is still found).
   */
  private findChoice(id: TypeConName, name: string): ChoiceSignature {
    const template = this.resolver.resolveTemplate(id);
    const candidates = template ? [id, ...template.implements] : [id];
    for (const [i, owner] of candidates.entries()) {
      const choices = i === 0 && template ? template.choices : this.resolver.resolveInterface(owner)?.choices;
      const found = choices?.find((c) => c.name === name);
      if (found) return found;
    }
    // An unknown template or interface is reported as its choice not found, as Canton does.
    throw new SignatureNotFoundError("choice", typeConKey(id), { choice: name });
  }
}
