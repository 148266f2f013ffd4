/**
 * The OpenAPI 3.1 document of Silt's own API (GET /api/v1/openapi.json), generated from the
 * route schemas the requests are validated against (request-schemas.ts), so it cannot drift from
 * what the routes accept. OpenAPI 3.1 schemas are JSON Schema 2020-12, which zod emits. What a
 * request may send is documented (`io: "input"`): a field that also takes a string shows both.
 */
import * as z from "zod";
import { ARROW_STREAM } from "./http.ts";
import { ROUTES, type RouteSpec } from "./request-schemas.ts";

const DIALECT = "https://json-schema.org/draft/2020-12/schema";

type JsonSchema = Record<string, unknown>;

/** `/api/v1/tables/:name` -> `/api/v1/tables/{name}` */
export const openApiPath = (honoPath: string) => honoPath.replace(/:(\w+)/g, "{$1}");

/** Built once: the schemas are fixed at load. */
let document: JsonSchema | undefined;

export function openApiDocument(): JsonSchema {
  document ??= build();
  return document;
}

function build(): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const [id, route] of Object.entries(ROUTES) as [string, RouteSpec][]) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method] = operation(id, route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Silt",
      version: "1",
      description:
        "Catalog-managed Delta Lake tables. A request field or query parameter a route does not declare is refused with 400 INVALID_REQUEST (UNKNOWN_FIELD).",
    },
    jsonSchemaDialect: DIALECT,
    paths,
    components: {
      schemas: {
        Error: {
          type: "object",
          properties: {
            error_class: { type: "string" },
            message: { type: "string" },
            sqlstate: { type: "string" },
          },
          required: ["error_class", "message"],
        },
      },
    },
  };
}

function operation(id: string, route: RouteSpec): JsonSchema {
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  // With an Arrow body, the body's other fields travel in the query string.
  const query = route.arrowRows && route.body ? route.body.omit({ rows: true }) : route.query;
  const queryParams = Object.entries(query.shape).map(([name, field]) => ({
    name,
    in: "query",
    required: !field.safeParse(undefined).success,
    schema: jsonSchema(field as z.ZodType),
  }));
  return {
    summary: route.summary,
    operationId: id,
    parameters: [...pathParams, ...queryParams],
    ...(route.body === undefined ? {} : { requestBody: requestBody(route, route.body) }),
    responses: {
      "200": { description: "success" },
      default: {
        description: "an error, with its HTTP status",
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
    },
  };
}

function requestBody(route: RouteSpec, body: z.ZodObject): JsonSchema {
  const content: Record<string, JsonSchema> = {
    "application/json": { schema: jsonSchema(body) },
  };
  if (route.arrowRows) {
    content[ARROW_STREAM] = { schema: { type: "string", contentMediaType: ARROW_STREAM } };
  }
  return { required: !route.bodyOptional, content };
}

function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input" }) as JsonSchema;
  return rest;
}
