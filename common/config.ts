// JSON configs validated against JSON Schemas (ajv); errors name the file and the field.
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { readFileSync } from "node:fs";

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const compiled = new Map<string, ValidateFunction>();

/** Raised when a config or record fails validation; the message is one line naming source and field. */
export class ValidationError extends Error {
  override name = "ValidationError";
}

/** Load and compile a JSON Schema file (cached by path; `import.meta.resolve` URLs or paths both work). */
export function loadSchema(schemaPath: string | URL): ValidateFunction {
  const key = String(schemaPath);
  if (!compiled.has(key)) {
    const text = readFileSync(schemaPath instanceof URL ? schemaPath : new URL(key, "file://"), "utf8");
    compiled.set(key, ajv.compile(JSON.parse(text)));
  }
  return compiled.get(key)!;
}

/** Compile an in-memory schema object. */
export function compileSchema(schema: object): ValidateFunction {
  return ajv.compile(schema);
}

/** One-line description of ajv errors, e.g. `methods[2].alpha: must be >= 0`. */
export function describeErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors?.length) return "invalid";
  return errors.slice(0, 3).map((e) => {
    const field = e.instancePath.replace(/\/(\d+)/g, "[$1]").replace(/\//g, ".").replace(/^\./, "") ||
      "(root)";
    const extra = e.keyword === "additionalProperties"
      ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'`
      : e.keyword === "enum"
      ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")})`
      : "";
    return `${field}: ${e.message}${extra}`;
  }).join("; ");
}

/** Validate a value (defaults from the schema are filled in); throws ValidationError naming `source` and the field. */
export function validate<T>(validator: ValidateFunction, value: unknown, source: string): T {
  if (!validator(value)) throw new ValidationError(`${source}: ${describeErrors(validator.errors)}`);
  return value as T;
}
