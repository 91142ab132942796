import { Ajv, type ValidateFunction } from "ajv";
import { InvalidValueError } from "../errors/index.js";
import { type ApiVersion, DEFAULT_API_VERSION, KNOWN_API_VERSIONS } from "../proto/api-version.js";
import { type SchemaComponents, schemaComponents } from "./schema-components.js";

const documentId = (version: ApiVersion) => `ledger-api-${version}`;

/**
 * Checks request JSON (HTTP bodies and WebSocket query frames alike) against its component
 * schema in the Canton release served (`served`, asked per request: the release may change
 * while the gateway runs); a misfit is `Invalid value for: body (...)`.
 */
export class BodyValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  /**
   * By release asked for, then schema: the validator `validate` uses, its release fallback
   * resolved once, not per request.
   */
  private readonly resolved = new Map<ApiVersion, Map<string, ValidateFunction>>();
  private readonly components = new Map<ApiVersion, SchemaComponents>();

  constructor(
    private readonly served: () => ApiVersion = () => DEFAULT_API_VERSION,
    components: (version: ApiVersion) => SchemaComponents = schemaComponents,
  ) {
    for (const version of KNOWN_API_VERSIONS) {
      const schemas = components(version);
      this.components.set(version, schemas);
      this.ajv.addSchema({ $id: documentId(version), components: { schemas: schemas.schemas } });
    }
  }

  /**
   * Compiles the schema up front (in the default release, or the first that has it; the others'
   * on first use), so that a route naming a schema no release has fails at start-up.
   */
  prepare(schema: string): void {
    const version = this.releaseHaving(schema, DEFAULT_API_VERSION);
    if (version === undefined) throw new Error(`no known Canton release has the schema ${schema}`);
    this.validator(schema, version);
  }

  validate(schema: string, json: unknown, version: ApiVersion = this.served()): void {
    // A route is served only in the releases that have its schema: another release's shape is
    // the fallback for a caller that asks for it anyway.
    let bySchema = this.resolved.get(version);
    if (bySchema === undefined) {
      bySchema = new Map();
      this.resolved.set(version, bySchema);
    }
    let validate = bySchema.get(schema);
    if (validate === undefined) {
      validate = this.validator(schema, this.releaseHaving(schema, version) ?? version);
      bySchema.set(schema, validate);
    }
    if (validate(json)) return;
    const error = validate.errors?.[0];
    const where = error?.instancePath ? ` at ${error.instancePath}` : "";
    throw new InvalidValueError("body", `${error?.message ?? "does not match"}${where}`);
  }

  /** `version` when it has the schema, else the default release, else the first known one that has it. */
  private releaseHaving(schema: string, version: ApiVersion): ApiVersion | undefined {
    if (this.has(schema, version)) return version;
    if (this.has(schema, DEFAULT_API_VERSION)) return DEFAULT_API_VERSION;
    return KNOWN_API_VERSIONS.find((known) => this.has(schema, known));
  }

  private has(schema: string, version: ApiVersion): boolean {
    return Object.hasOwn(this.components.get(version)?.schemas ?? {}, schema);
  }

  private validator(schema: string, version: ApiVersion): ValidateFunction {
    const key = `${version} ${schema}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${documentId(version)}#/components/schemas/${schema}` });
      this.compiled.set(key, validate);
    }
    return validate;
  }
}
