/**
 * A hand-written definition with its real package id filled in: what decoding its encoded
 * archive gives back. Lets the sandbox use its models' signatures without a decode, and
 * lets tests compare an archive with the definition it came from.
 */
import {
  type LfType,
  type LfVersion,
  type ModuleSignature,
  type PackageDefinition,
  type PackageSignature,
  SELF_PACKAGE_ID,
  type TypeConName,
} from "./signature-model.js";

export function instantiatePackage(
  def: PackageDefinition,
  packageId: string,
  lfVersion: LfVersion,
): PackageSignature {
  const imports = new Set<string>();
  const id = (n: TypeConName): TypeConName => {
    if (n.packageId !== SELF_PACKAGE_ID) {
      imports.add(n.packageId);
      return n;
    }
    return { ...n, packageId };
  };
  const type = (t: LfType): LfType => {
    switch (t.kind) {
      case "con":
        return { kind: "con", tycon: id(t.tycon), args: t.args.map(type) };
      case "builtin":
        switch (t.name) {
          case "contractId":
            return { ...t, template: type(t.template) };
          case "optional":
          case "list":
            return { ...t, elem: type(t.elem) };
          case "textMap":
            return { ...t, value: type(t.value) };
          case "genMap":
            return { ...t, key: type(t.key), value: type(t.value) };
          default:
            return t;
        }
      default:
        return t;
    }
  };
  const modules: ModuleSignature[] = def.modules.map((m) => ({
    name: m.name,
    dataTypes: m.dataTypes.map((d) => ({
      ...d,
      body:
        d.body.kind === "record"
          ? { kind: "record", fields: d.body.fields.map((f) => ({ name: f.name, type: type(f.type) })) }
          : d.body.kind === "variant"
            ? {
                kind: "variant",
                constructors: d.body.constructors.map((c) => ({ name: c.name, type: type(c.type) })),
              }
            : d.body,
    })),
    templates: m.templates.map((t) => ({
      name: t.name,
      choices: t.choices.map((c) => ({ ...c, argType: type(c.argType), returnType: type(c.returnType) })),
      ...(t.key === undefined ? {} : { key: type(t.key) }),
      implements: t.implements.map(id),
    })),
    interfaces: m.interfaces.map((i) => ({
      name: i.name,
      view: type(i.view),
      choices: i.choices.map((c) => ({ ...c, argType: type(c.argType), returnType: type(c.returnType) })),
    })),
  }));
  return { packageId, lfVersion, name: def.name, version: def.version, modules, imports: [...imports] };
}
