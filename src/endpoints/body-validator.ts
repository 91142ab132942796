import { Ajv, type ValidateFunction } from "ajv";
import { InvalidValueError } from "../errors/index.js";
import { type SchemaComponents, schemaComponents } from "./schema-components.js";

const DOCUMENT_ID = "ledger-api";

/**
 * Checks request JSON (HTTP bodies and WebSocket query frames alike) against its component
 * schema; a misfit is `Invalid value for: body (...)`.
 */
export class BodyValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(schemas: SchemaComponents = schemaComponents()) {
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: { schemas: schemas.schemas } });
  }

  /** Compiles the schema up front so that a route naming a missing schema fails at start-up. */
  prepare(schema: string): void {
    this.validator(schema);
  }

  validate(schema: string, json: unknown): void {
    const validate = this.validator(schema);
    if (validate(json)) return;
    const error = validate.errors?.[0];
    const where = error?.instancePath ? ` at ${error.instancePath}` : "";
    throw new InvalidValueError("body", `${error?.message ?? "does not match"}${where}`);
  }

  private validator(schema: string): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/components/schemas/${schema}` });
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}
