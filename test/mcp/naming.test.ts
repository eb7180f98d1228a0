import { describe, expect, it } from "vitest";
import { assignToolIds, baseToolId, mayBeToolOf, uniqueToolId } from "../../src/mcp/naming.js";
import { TOOL_ID_PATTERN } from "../../src/dispatch/tool.js";

describe("the passthrough naming rule (SPEC 12)", () => {
  it("is NAME_TOOL, lower-cased, invalid characters as _", () => {
    expect(baseToolId("github", "create_issue")).toBe("github_create_issue");
    expect(baseToolId("GitHub", "createIssue")).toBe("github_createissue");
    expect(baseToolId("my-server.v2", "read file/now")).toBe("my_server_v2_read_file_now");
    expect(baseToolId("srv", "ünïcode")).toBe("srv__n_code");
  });

  it("does not prefix a tool whose name already starts with NAME_", () => {
    expect(baseToolId("codegraph", "codegraph_search")).toBe("codegraph_search");
    expect(baseToolId("CodeGraph", "CodeGraph_Search")).toBe("codegraph_search");
    expect(baseToolId("my-srv", "my_srv_list")).toBe("my_srv_list");
    // A name that merely starts with NAME (no underscore) is still prefixed.
    expect(baseToolId("git", "github_pr")).toBe("git_github_pr");
  });

  it("cuts to 64 characters", () => {
    const id = baseToolId("server", "t".repeat(100));
    expect(id).toHaveLength(64);
    expect(id.startsWith("server_ttt")).toBe(true);
  });

  it("starts with a letter even for a server named with a digit or symbol", () => {
    expect(baseToolId("1password", "get")).toBe("mcp_1password_get");
    expect(baseToolId("_x", "y")).toBe("mcp__x_y");
  });

  it("settles clashes with _2, _3, keeping within 64", () => {
    expect(uniqueToolId("a_b", new Set(["a_b"]))).toBe("a_b_2");
    expect(uniqueToolId("a_b", new Set(["a_b", "a_b_2"]))).toBe("a_b_3");
    const long = "x".repeat(64);
    expect(uniqueToolId(long, new Set([long]))).toBe(`${"x".repeat(62)}_2`);
  });

  it("assigns ids to one server's tools, clashing with built-ins, other servers and each other", () => {
    const ids = assignToolIds("git", ["status", "Status", "git_status", "log"], new Set(["git_status", "file_read"]));
    expect([...ids.entries()]).toEqual([
      ["status", "git_status_2"],
      ["Status", "git_status_3"],
      ["git_status", "git_status_4"],
      ["log", "git_log"],
    ]);
  });

  it("every id matches the registry's pattern, whatever the names", () => {
    const names = ["", "-", "9lives", "a".repeat(200), "naïve", "x y z", "UPPER", "__", "srv_srv_srv"];
    const ids = assignToolIds("9-Ünicode Server!", names, new Set());
    for (const id of ids.values()) expect(id).toMatch(TOOL_ID_PATTERN);
    expect(new Set(ids.values()).size).toBe(names.length);
  });

  it("keeps a tool's id when the list changes, so a model never sees a tool renamed", () => {
    const first = assignToolIds("s", ["b"], new Set(["s_a"]));
    expect(first.get("b")).toBe("s_b");
    // A new tool whose base id is the one "b" got after a clash must not take it over.
    const clash = assignToolIds("s", ["x"], new Set(["s_x"]));
    expect(clash.get("x")).toBe("s_x_2");
    const again = assignToolIds("s", ["x_2", "x"], new Set(["s_x"]), clash);
    expect(again.get("x")).toBe("s_x_2");
    expect(again.get("x_2")).toBe("s_x_2_2");
    // A removed tool gives its id up.
    expect(assignToolIds("s", ["y"], new Set(), clash).has("x")).toBe(false);
  });
});

describe("mayBeToolOf", () => {
  it("holds for every id assignToolIds gives a server's tools, prefixed or not, clashes included, and not for another server's", () => {
    const cases: [string, string[]][] = [
      ["github", ["create_issue", "github_search", "Get-Repo"]],
      ["1password", ["read"]],
      ["My Server", ["x", "x"]],
    ];
    for (const [server, tools] of cases) {
      for (const id of assignToolIds(server, tools, new Set(["github_create_issue"])).values()) {
        expect(mayBeToolOf(server, id)).toBe(true);
        expect(mayBeToolOf("other", id)).toBe(false);
      }
    }
  });
});
