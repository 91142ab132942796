import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { strToU8, unzipSync, zipSync } from "fflate";
import { sha256Hex } from "../../src/lf/archive-decode.js";
import { archiveSchema } from "../../src/lf/archive-proto.js";
import { decodeDar, MANIFEST_PATH, readDar, writeDar } from "../../src/lf/dar.js";
import { DarError, LfArchiveError, LfEncodeError } from "../../src/lf/errors.js";
import { formatManifest, parseManifest } from "../../src/lf/manifest.js";
import { decodeDalf } from "../../src/lf/package-decode.js";
import { encodePackage } from "../../src/lf/package-encode.js";
import { instantiatePackage } from "../../src/lf/package-instantiate.js";
import { type PackageDefinition, SELF_PACKAGE_ID, t } from "../../src/lf/signature-model.js";
import {
  SAMPLE_PACKAGE_ID,
  SAMPLE_PACKAGE_NAME,
  SAMPLE_PACKAGE_VERSION,
  sampleDalf,
  sampleDar,
  samplePackageDefinition,
  samplePackageSignature,
} from "../../src/sandbox/sample-package/index.js";

/** The sample package without its one contract key: encodable at every LF version. */
const keyless: PackageDefinition = {
  ...samplePackageDefinition,
  modules: samplePackageDefinition.modules.map((m) => ({
    ...m,
    templates: m.templates.map(({ key: _key, ...rest }) => rest),
  })),
};

function assertThrowsCode(
  fn: () => unknown,
  cls: typeof LfArchiveError | typeof DarError,
  code: string,
  message: RegExp,
) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof cls, `expected ${cls.name}, got ${String(e)}`);
    assert.equal((e as LfArchiveError | DarError).code, code);
    assert.match((e as Error).message, message);
    return true;
  });
}

describe("sample package archive", () => {
  it("decodes the sample DAR to exactly the model's signatures", () => {
    const { main, dependencies } = decodeDar(sampleDar);
    assert.equal(main.packageId, SAMPLE_PACKAGE_ID);
    assert.equal(main.name, SAMPLE_PACKAGE_NAME);
    assert.equal(main.version, SAMPLE_PACKAGE_VERSION);
    assert.equal(main.lfVersion, "2.3");
    assert.deepEqual(dependencies, []);
    assert.deepEqual(main, samplePackageSignature);
  });

  it("keeps the details a signature reader needs: generics, enum, variant, key, interface", () => {
    const pkg = decodeDalf(sampleDalf);
    const types = pkg.modules.find((m) => m.name === "Types");
    const pair = types?.dataTypes.find((d) => d.name === "Pair");
    assert.deepEqual(pair?.params, ["a", "b"]);
    assert.deepEqual(pair?.body, {
      kind: "record",
      fields: [
        { name: "first", type: { kind: "var", name: "a" } },
        { name: "second", type: { kind: "var", name: "b" } },
      ],
    });
    const color = types?.dataTypes.find((d) => d.name === "Color");
    assert.deepEqual(color?.body, { kind: "enum", constructors: ["Red", "Green", "Blue"] });
    const shape = types?.dataTypes.find((d) => d.name === "Shape");
    assert.deepEqual(shape?.body.kind === "variant" && shape.body.constructors.map((c) => c.name), [
      "Circle",
      "Rect",
    ]);
    const account = pkg.modules.find((m) => m.name === "Account")?.templates[0];
    assert.deepEqual(account?.key, {
      kind: "con",
      tycon: { packageId: SAMPLE_PACKAGE_ID, moduleName: "Account", entityName: "AccountKey" },
      args: [],
    });
    const iouModule = pkg.modules.find((m) => m.name === "Iou");
    assert.deepEqual(iouModule?.templates[0]?.implements, [
      { packageId: SAMPLE_PACKAGE_ID, moduleName: "Iou", entityName: "Asset" },
    ]);
    const describe = iouModule?.interfaces[0]?.choices[0];
    assert.deepEqual(describe && { name: describe.name, consuming: describe.consuming }, {
      name: "Describe",
      consuming: false,
    });
  });

  it("is deterministic: same bytes and package id on every encode", () => {
    const again = encodePackage(samplePackageDefinition, { lfVersion: "2.3" });
    assert.equal(again.packageId, SAMPLE_PACKAGE_ID);
    assert.deepEqual(again.dalf, sampleDalf);
    assert.match(SAMPLE_PACKAGE_ID, /^[0-9a-f]{64}$/);
  });

  it("LF 2.1, 2.2 and 2.3 encodings decode to the same signatures", () => {
    const decoded = (["2.1", "2.2", "2.3"] as const).map((v) => {
      const enc = encodePackage(keyless, { lfVersion: v });
      const pkg = decodeDalf(enc.dalf);
      assert.equal(pkg.lfVersion, v);
      assert.deepEqual(pkg, instantiatePackage(keyless, enc.packageId, v));
      return pkg;
    });
    const strip = ({ packageId: _p, lfVersion: _v, ...rest }: (typeof decoded)[number]) =>
      JSON.parse(JSON.stringify(rest).replaceAll(decodedIdPattern(decoded), "ID"));
    assert.deepEqual(strip(decoded[0]!), strip(decoded[1]!));
    assert.deepEqual(strip(decoded[1]!), strip(decoded[2]!));
  });

  it("uses inline type arguments in 2.1 and nested tapp in 2.2", () => {
    const wire = (v: "2.1" | "2.2") => {
      const enc = encodePackage(keyless, { lfVersion: v });
      const schema = archiveSchema();
      const archive = schema.Archive.decode(enc.dalf) as unknown as { payload: Uint8Array };
      const payload = schema.ArchivePayload.decode(archive.payload) as unknown as { damlLf_2: Uint8Array };
      return schema.Package.toObject(schema.Package.decode(payload.damlLf_2), { oneofs: true }) as {
        internedTypes: { Sum: string; builtin?: { args?: unknown[] } }[];
        packageImports?: unknown;
      };
    };
    const v21 = wire("2.1");
    const v22 = wire("2.2");
    assert.equal(v21.internedTypes.filter((e) => e.Sum === "tapp").length, 0);
    assert.ok(v21.internedTypes.some((e) => e.Sum === "builtin" && (e.builtin?.args?.length ?? 0) > 0));
    assert.ok(v22.internedTypes.filter((e) => e.Sum === "tapp").length > 0);
    assert.ok(v22.internedTypes.every((e) => e.Sum !== "builtin" || (e.builtin?.args?.length ?? 0) === 0));
    assert.equal(v21.packageImports, undefined);
    assert.deepEqual(v22.packageImports, {});
  });

  it("refers to other packages by interned id in 2.1 and through package_imports in 2.2", () => {
    const iou = { packageId: SAMPLE_PACKAGE_ID, moduleName: "Iou", entityName: "Iou" };
    const dependent: PackageDefinition = {
      name: "dependent",
      version: "0.1.0",
      modules: [
        {
          name: "Holder",
          dataTypes: [
            {
              name: "Holder",
              params: [],
              serializable: true,
              body: { kind: "record", fields: [{ name: "iou", type: t.contractId(t.con(iou)) }] },
            },
          ],
          templates: [],
          interfaces: [],
        },
      ],
    };
    for (const v of ["2.1", "2.2"] as const) {
      const pkg = decodeDalf(encodePackage(dependent, { lfVersion: v }).dalf);
      assert.deepEqual(pkg.imports, [SAMPLE_PACKAGE_ID]);
      const field = pkg.modules[0]?.dataTypes[0]?.body;
      assert.deepEqual(field, { kind: "record", fields: [{ name: "iou", type: t.contractId(t.con(iou)) }] });
    }
  });

  it("refuses a contract key below LF 2.3 (a real decoder would reject the archive)", () => {
    assert.throws(
      () => encodePackage(samplePackageDefinition, { lfVersion: "2.2" }),
      (e: unknown) =>
        e instanceof LfEncodeError && /Account:Account has a contract key.*2\.3/.test(e.message),
    );
  });

  it("refuses a template without its parameter record and an unserializable type", () => {
    const broken: PackageDefinition = {
      name: "broken",
      version: "1",
      modules: [
        {
          name: "M",
          dataTypes: [],
          templates: [{ name: "T", choices: [], implements: [] }],
          interfaces: [],
        },
      ],
    };
    assert.throws(() => encodePackage(broken), /template M:T needs a record data type/);
    const fn: PackageDefinition = {
      ...broken,
      modules: [
        {
          name: "M",
          dataTypes: [
            {
              name: "F",
              params: [],
              serializable: false,
              body: {
                kind: "record",
                fields: [{ name: "f", type: { kind: "unserializable", description: "a function type" } }],
              },
            },
          ],
          templates: [],
          interfaces: [],
        },
      ],
    };
    assert.throws(() => encodePackage(fn), /cannot encode a function type/);
    assert.throws(() => encodePackage({ ...broken, name: "bad name!" }), /invalid package name/);
  });

  it("writes self references as self, so the id can be computed after encoding", () => {
    assert.equal(JSON.stringify(samplePackageDefinition).includes(SAMPLE_PACKAGE_ID), false);
    assert.ok(JSON.stringify(samplePackageDefinition).includes(`"${SELF_PACKAGE_ID}"`));
  });
});

function decodedIdPattern(pkgs: readonly { packageId: string }[]): RegExp {
  return new RegExp(pkgs.map((p) => p.packageId).join("|"), "g");
}

describe("malformed archives", () => {
  it("rejects an archive whose hash is not the payload's SHA-256", () => {
    const schema = archiveSchema();
    const archive = schema.Archive.decode(sampleDalf) as unknown as { payload: Uint8Array };
    const forged = schema.Archive.encode({ payload: archive.payload, hash: "0".repeat(64) }).finish();
    assertThrowsCode(() => decodeDalf(forged), LfArchiveError, "hash-mismatch", /does not match the SHA-256/);
  });

  it("rejects a payload that was tampered with", () => {
    const tampered = Uint8Array.from(sampleDalf);
    tampered[40] = (tampered[40] ?? 0) ^ 0xff;
    assert.throws(() => decodeDalf(tampered), LfArchiveError);
  });

  it("rejects truncated bytes", () => {
    assertThrowsCode(
      () => decodeDalf(sampleDalf.subarray(0, sampleDalf.length >> 1)),
      LfArchiveError,
      "malformed-archive",
      /not a Daml-LF archive/,
    );
    // Cut inside the trailing hash string: protobufjs reads the short string, the check catches it.
    assertThrowsCode(
      () => decodeDalf(sampleDalf.subarray(0, sampleDalf.length - 7)),
      LfArchiveError,
      "hash-mismatch",
      /does not match/,
    );
  });

  it("rejects garbage and empty input", () => {
    const garbage = new Uint8Array(256).map((_, i) => (i * 131 + 7) & 0xff);
    assert.throws(
      () => decodeDalf(garbage),
      (e: unknown) => e instanceof LfArchiveError,
    );
    assertThrowsCode(() => decodeDalf(new Uint8Array()), LfArchiveError, "malformed-archive", /no payload/);
  });

  it("rejects an LF 1 payload and an unknown minor version", () => {
    const schema = archiveSchema();
    const wrap = (payloadFields: object) => {
      const payload = schema.ArchivePayload.encode(payloadFields).finish();
      return schema.Archive.encode({ payload, hash: sha256Hex(payload) }).finish();
    };
    assertThrowsCode(
      () => decodeDalf(wrap({ minor: "8", damlLf_1: new Uint8Array([1]) })),
      LfArchiveError,
      "unsupported-version",
      /Daml-LF 1/,
    );
    assertThrowsCode(
      () => decodeDalf(wrap({ minor: "9", damlLf_2: new Uint8Array() })),
      LfArchiveError,
      "unsupported-version",
      /2\.9/,
    );
  });

  it("rejects a package whose metadata is missing", () => {
    const schema = archiveSchema();
    const pkg = schema.Package.encode({ internedStrings: ["x"] }).finish();
    const payload = schema.ArchivePayload.encode({ minor: "2", damlLf_2: pkg }).finish();
    const dalf = schema.Archive.encode({ payload, hash: sha256Hex(payload) }).finish();
    assertThrowsCode(() => decodeDalf(dalf), LfArchiveError, "malformed-package", /metadata is missing/);
  });
});

describe("DAR files", () => {
  it("writes damlc's layout and manifest", () => {
    const files = unzipSync(sampleDar);
    const dir = `${SAMPLE_PACKAGE_NAME}-${SAMPLE_PACKAGE_VERSION}-${SAMPLE_PACKAGE_ID}`;
    assert.deepEqual(Object.keys(files).sort(), [MANIFEST_PATH, `${dir}/${dir}.dalf`]);
    const text = new TextDecoder().decode(files[MANIFEST_PATH]);
    for (const line of text.split("\n")) assert.ok(Buffer.byteLength(line) <= 72, `line too long: ${line}`);
    assert.ok(text.endsWith("\n"));
    const manifest = parseManifest(text);
    assert.equal(manifest.get("Main-Dalf"), `${dir}/${dir}.dalf`);
    assert.equal(manifest.get("Format"), "daml-lf");
    assert.equal(manifest.get("Name"), `${SAMPLE_PACKAGE_NAME}-${SAMPLE_PACKAGE_VERSION}`);
  });

  it("wraps long manifest values on 72-byte lines and reads them back", () => {
    const long = `${"x".repeat(100)}é${"y".repeat(80)}`;
    const text = formatManifest([
      ["Main-Dalf", long],
      ["Format", "daml-lf"],
    ]);
    const lines = text.split("\n");
    assert.equal(lines[0]?.length, 72);
    assert.ok(lines.slice(1, -1).every((l) => Buffer.byteLength(l) <= 72));
    assert.ok(lines[1]?.startsWith(" "));
    assert.equal(parseManifest(text).get("Main-Dalf"), long);
    assert.equal(parseManifest(text.replaceAll("\n", "\r\n")).get("Main-Dalf"), long);
  });

  it("reads the dependencies listed in Dalfs, and the DAR is byte-stable", () => {
    const dep = encodePackage(keyless, { lfVersion: "2.2" });
    const dar = writeDar({ name: "main", version: "1.0.0", packageId: SAMPLE_PACKAGE_ID, dalf: sampleDalf }, [
      { name: "dep", packageId: dep.packageId, dalf: dep.dalf },
    ]);
    const again = writeDar(
      { name: "main", version: "1.0.0", packageId: SAMPLE_PACKAGE_ID, dalf: sampleDalf },
      [{ name: "dep", packageId: dep.packageId, dalf: dep.dalf }],
    );
    assert.deepEqual(dar, again);
    const contents = readDar(dar);
    assert.deepEqual(
      contents.dependencies.map((d) => d.path),
      [`main-1.0.0-${SAMPLE_PACKAGE_ID}/dep-${dep.packageId}.dalf`],
    );
    const decoded = decodeDar(dar);
    assert.equal(decoded.main.packageId, SAMPLE_PACKAGE_ID);
    assert.deepEqual(
      decoded.dependencies.map((d) => d.packageId),
      [dep.packageId],
    );
  });

  it("rejects bytes that are not a zip", () => {
    assertThrowsCode(
      () => readDar(new Uint8Array([1, 2, 3, 4, 5])),
      DarError,
      "not-a-zip",
      /not a readable zip/,
    );
    assertThrowsCode(() => readDar(sampleDalf), DarError, "not-a-zip", /not a DAR/);
  });

  it("rejects a zip without manifest", () => {
    const zip = zipSync({ "a.dalf": sampleDalf });
    assertThrowsCode(() => readDar(zip), DarError, "missing-manifest", /no META-INF\/MANIFEST\.MF/);
  });

  it("rejects a manifest without Main-Dalf", () => {
    const zip = zipSync({ [MANIFEST_PATH]: strToU8("Manifest-Version: 1.0\nFormat: daml-lf\n") });
    assertThrowsCode(() => readDar(zip), DarError, "missing-main-dalf", /no Main-Dalf/);
  });

  it("rejects a manifest naming an entry the zip lacks, another format, or a broken line", () => {
    const missing = zipSync({ [MANIFEST_PATH]: strToU8("Main-Dalf: x.dalf\nDalfs: x.dalf, y.dalf\n") });
    assertThrowsCode(() => readDar(missing), DarError, "missing-entry", /lists x\.dalf/);
    const format = zipSync({ [MANIFEST_PATH]: strToU8("Main-Dalf: x.dalf\nFormat: daml-lf-1\n") });
    assertThrowsCode(() => readDar(format), DarError, "unsupported-format", /daml-lf-1/);
    const broken = zipSync({ [MANIFEST_PATH]: strToU8(" continued\n") });
    assertThrowsCode(() => readDar(broken), DarError, "malformed-manifest", /line 1/);
  });

  it("reports a corrupt .dalf inside a DAR as an archive error", () => {
    const dir = "p-1-x";
    const zip = zipSync({
      [MANIFEST_PATH]: strToU8(formatManifest([["Main-Dalf", `${dir}/p.dalf`]])),
      [`${dir}/p.dalf`]: new Uint8Array([0xff, 0xff, 0xff]),
    });
    assert.throws(() => decodeDar(zip), LfArchiveError);
  });
});
