/**
 * Where the value codec looks signatures up. The gateway plugs in its package cache (which
 * fetches and decodes packages on demand); `PackageSignatureIndex` is the in-memory version
 * over decoded packages, used by the sandbox and the tests.
 */
import type {
  DataTypeSignature,
  InterfaceSignature,
  PackageSignature,
  TemplateSignature,
  TypeConName,
} from "./signature-model.js";

export interface SignatureResolver {
  resolveDataType(id: TypeConName): DataTypeSignature | undefined;
  resolveTemplate(id: TypeConName): TemplateSignature | undefined;
  resolveInterface(id: TypeConName): InterfaceSignature | undefined;
}

/** `packageId:Module:Entity`: the one key format used for caches of per-type state. */
export function typeConKey(id: TypeConName): string {
  return `${id.packageId}:${id.moduleName}:${id.entityName}`;
}

export class PackageSignatureIndex implements SignatureResolver {
  private readonly dataTypes = new Map<string, DataTypeSignature>();
  private readonly templates = new Map<string, TemplateSignature>();
  private readonly interfaces = new Map<string, InterfaceSignature>();

  constructor(packages: Iterable<PackageSignature> = []) {
    for (const p of packages) this.add(p);
  }

  add(pkg: PackageSignature): void {
    for (const m of pkg.modules) {
      const key = (entityName: string) =>
        typeConKey({ packageId: pkg.packageId, moduleName: m.name, entityName });
      for (const d of m.dataTypes) this.dataTypes.set(key(d.name), d);
      for (const t of m.templates) this.templates.set(key(t.name), t);
      for (const i of m.interfaces) this.interfaces.set(key(i.name), i);
    }
  }

  resolveDataType(id: TypeConName): DataTypeSignature | undefined {
    return this.dataTypes.get(typeConKey(id));
  }

  resolveTemplate(id: TypeConName): TemplateSignature | undefined {
    return this.templates.get(typeConKey(id));
  }

  resolveInterface(id: TypeConName): InterfaceSignature | undefined {
    return this.interfaces.get(typeConKey(id));
  }
}
