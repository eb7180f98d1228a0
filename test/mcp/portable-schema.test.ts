import { describe, expect, it } from "vitest";
import { isPortablePattern, portableSchema } from "../../src/mcp/portable-schema.js";

describe("portableSchema: a passthrough server's schema as hosts get it", () => {
  it("drops the patterns with ECMAScript-only syntax, at any depth, and keeps the rest", () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string", pattern: "^\\p{L}+$", description: "letters" },
        id: { type: "string", pattern: "^[0-9a-f]{16}$" },
        tags: { type: "array", items: { type: "string", pattern: "^(?<word>\\w+)$" } },
        pattern: { type: "string" },
      },
    };
    expect(portableSchema(schema)).toEqual({
      type: "object",
      properties: {
        name: { type: "string", description: "letters" },
        id: { type: "string", pattern: "^[0-9a-f]{16}$" },
        tags: { type: "array", items: { type: "string" } },
        pattern: { type: "string" },
      },
    });
  });

  it("gives back the same object when every pattern is portable", () => {
    const schema = { type: "object", properties: { id: { type: "string", pattern: "^(?:a|b)(?=c)\\d{2}$" } } };
    expect(portableSchema(schema)).toBe(schema);
  });

  it("a dropped patternProperties key no longer makes its properties extra ones", () => {
    const schema = { type: "object", patternProperties: { "^\\p{Lu}": { type: "number" }, "^x_": { type: "string" } }, additionalProperties: false };
    expect(portableSchema(schema)).toEqual({ type: "object", patternProperties: { "^x_": { type: "string" } } });
  });

  it("tells ECMAScript-only syntax apart", () => {
    for (const p of ["\\p{L}", "\\P{N}", "\\u{1F600}", "(?<name>a)\\k<name>", "\\cA", "[^]"]) expect(isPortablePattern(p)).toBe(false);
    for (const p of ["^[a-z_][a-z0-9_]*$", "(?=a)", "(?!b)", "(?<=c)", "(?<!d)", "\\d+\\.\\d+", "[\\w-]+"]) expect(isPortablePattern(p)).toBe(true);
  });
});
