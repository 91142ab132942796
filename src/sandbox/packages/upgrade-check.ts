/**
 * The part of Canton's smart-contract-upgrade validation (PackageUpgradeValidator) the sandbox
 * enforces when a set of packages is about to be vetted together. Only packages that take part in
 * upgrades are compared: utility packages (no template, no interface, no serializable data type),
 * and the known `daml-prim` / `daml-stdlib` ids of old snapshots, are exempt, so every DAR can
 * bring its own SDK's `daml-prim` and `daml-stdlib`. Among the rest:
 * - two packages with the same name and version but different ids (KNOWN_PACKAGE_VERSION);
 * - between neighbouring versions of a name, the newer one must keep every serializable data
 *   type, template and choice of the older one; a record keeps its fields in order (same
 *   types, package ids aside) and may only append Optional fields; a variant or enum keeps its
 *   constructors in order and may only append (NOT_VALID_UPGRADE_PACKAGE).
 * A package named `daml-prim` or `daml-stdlib` must be a utility package (DAML_PRIM_NOT_UTILITY_PACKAGE).
 * Left out (a real participant checks them): choice argument/result and key type changes,
 * interface instances, dependency upgrades, LF version ordering.
 */
import type { DataTypeSignature, LfType, PackageSignature } from "../../lf/index.js";
import type { ArchivedPackage } from "./dar-reader.js";
import { LEGACY_DAML_PRIM_IDS, LEGACY_DAML_STDLIB_IDS } from "./legacy-utility-packages.js";
import { packageErrors } from "./package-errors.js";
import { compareVersions } from "./package-version.js";

/** Throws the Canton error for the first violation among packages of which one is in `changed`. */
export function checkVettingSet(vetted: Iterable<ArchivedPackage>, changed: ReadonlySet<string>): void {
  const byName = new Map<string, ArchivedPackage[]>();
  for (const p of vetted) {
    const group = byName.get(p.name) ?? [];
    if (!group.some((q) => q.packageId === p.packageId)) group.push(p);
    byName.set(p.name, group);
  }
  for (const group of byName.values()) {
    if (!group.some((p) => changed.has(p.packageId))) continue;
    const notUtility = group.find(isInvalidDamlPrimOrStdlib);
    if (notUtility !== undefined) throw packageErrors.damlPrimNotUtilityPackage(notUtility);
    const lineage = group
      .filter(takesPartInUpgrades)
      .sort((a, b) => compareVersions(a.version, b.version) || a.packageId.localeCompare(b.packageId));
    for (let i = 1; i < lineage.length; i++) {
      const older = lineage[i - 1]!;
      const newer = lineage[i]!;
      if (!changed.has(older.packageId) && !changed.has(newer.packageId)) continue;
      if (compareVersions(older.version, newer.version) === 0) {
        throw packageErrors.knownPackageVersion(older, newer);
      }
      const reason = upgradeViolation(older.signature, newer.signature);
      if (reason !== undefined) throw packageErrors.notValidUpgrade(older, newer, reason);
    }
  }
}

/** Canton's `isUtilityPackage`: every module is free of templates, interfaces and serializable types. */
function isUtilityPackage(signature: PackageSignature): boolean {
  return signature.modules.every(
    (m) => m.templates.length === 0 && m.interfaces.length === 0 && m.dataTypes.every((d) => !d.serializable),
  );
}

const isLegacyUtility = (packageId: string): boolean =>
  LEGACY_DAML_PRIM_IDS.has(packageId) || LEGACY_DAML_STDLIB_IDS.has(packageId);

/** Canton's `supportsUpgrades` (every LF 2 version supports them): neither utility nor a legacy id. */
function takesPartInUpgrades(p: ArchivedPackage): boolean {
  return !isLegacyUtility(p.packageId) && !isUtilityPackage(p.signature);
}

/** Canton's `isInvalidDamlPrimOrStdlib`: the Daml libraries must be utility packages. */
function isInvalidDamlPrimOrStdlib(p: ArchivedPackage): boolean {
  if (p.name === "daml-prim") return !LEGACY_DAML_PRIM_IDS.has(p.packageId) && !isUtilityPackage(p.signature);
  if (p.name === "daml-stdlib")
    return !LEGACY_DAML_STDLIB_IDS.has(p.packageId) && !isUtilityPackage(p.signature);
  return false;
}

/** Why `newer` cannot upgrade `older`, or undefined when it can (as far as checked). */
function upgradeViolation(older: PackageSignature, newer: PackageSignature): string | undefined {
  for (const oldModule of older.modules) {
    const newModule = newer.modules.find((m) => m.name === oldModule.name);
    if (newModule === undefined) return `module ${oldModule.name} is missing`;
    for (const oldType of oldModule.dataTypes) {
      if (!oldType.serializable) continue;
      const newType = newModule.dataTypes.find((d) => d.name === oldType.name);
      const where = `${oldModule.name}:${oldType.name}`;
      if (newType === undefined) return `data type ${where} is missing`;
      const reason = dataTypeViolation(oldType, newType);
      if (reason !== undefined) return `data type ${where}: ${reason}`;
    }
    for (const oldTemplate of oldModule.templates) {
      const newTemplate = newModule.templates.find((t) => t.name === oldTemplate.name);
      const where = `${oldModule.name}:${oldTemplate.name}`;
      if (newTemplate === undefined) return `template ${where} is missing`;
      for (const choice of oldTemplate.choices) {
        if (!newTemplate.choices.some((c) => c.name === choice.name)) {
          return `choice ${choice.name} of template ${where} is missing`;
        }
      }
    }
  }
  return undefined;
}

function dataTypeViolation(older: DataTypeSignature, newer: DataTypeSignature): string | undefined {
  const a = older.body;
  const b = newer.body;
  if (a.kind !== b.kind) return `changed from ${a.kind} to ${b.kind}`;
  if (older.params.length !== newer.params.length) return "changed its type parameters";
  if (a.kind === "record" && b.kind === "record") {
    for (const [i, field] of a.fields.entries()) {
      const other = b.fields[i];
      if (other === undefined || other.name !== field.name) return `field ${field.name} is missing or moved`;
      if (!sameShape(field.type, other.type)) return `field ${field.name} changed its type`;
    }
    const added = b.fields.slice(a.fields.length).find((f) => !isOptional(f.type));
    return added === undefined ? undefined : `added field ${added.name} is not Optional`;
  }
  if (a.kind === "variant" && b.kind === "variant") {
    for (const [i, ctor] of a.constructors.entries()) {
      const other = b.constructors[i];
      if (other === undefined || other.name !== ctor.name)
        return `constructor ${ctor.name} is missing or moved`;
      if (!sameShape(ctor.type, other.type)) return `constructor ${ctor.name} changed its type`;
    }
  }
  if (a.kind === "enum" && b.kind === "enum") {
    const moved = a.constructors.find((c, i) => b.constructors[i] !== c);
    if (moved !== undefined) return `constructor ${moved} is missing or moved`;
  }
  return undefined;
}

const isOptional = (type: LfType): boolean => type.kind === "builtin" && type.name === "optional";

/** Types compared with package ids left out: an upgrade refers to its own (new) package. */
function sameShape(a: LfType, b: LfType): boolean {
  const withoutIds = (_key: string, value: unknown) => (_key === "packageId" ? undefined : value);
  return JSON.stringify(a, withoutIds) === JSON.stringify(b, withoutIds);
}
