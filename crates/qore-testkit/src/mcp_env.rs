//! Real MCP servers for tests: `scripts/mcp-env.sh` (the pinned Python `mcp` SDK and npm's
//! server-everything under `$QORE_CACHE_DIR`) and a Python MCPServer (FastMCP) whose tools
//! cover the cases a client must handle.
//!
//! Promises: [`mcp_env`] installs on first use (serialised by the script's lock) and
//! returns the script's one line of output or an error with its stderr; [`PY_SERVER`] is a
//! stdio server taking one argument, a directory where it marks what it saw.

use std::path::Path;
use std::process::Command;

/// `scripts/mcp-env.sh ACTION` (`python`: the venv's interpreter; `everything`:
/// server-everything's entry script).
pub fn mcp_env(action: &str) -> Result<String, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/mcp-env.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(action)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "mcp-env.sh {action} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A stdio MCP server (Python `mcp` 2.x MCPServer): `greet(name)` answers text, `look` is
/// annotated read-only, `fail` raises a ToolError (an `isError` result), `slow(seconds)`
/// sleeps and marks `cancelled` in the directory when cancelled, `die` exits the process,
/// `headers` tells the `Authorization` and `X-Team` headers it got (HTTP), `grow` adds the
/// tool `grown` and says its tools changed (`notifications/tools/list_changed`: on a
/// `subscriptions/listen` stream at 2026-07-28, as it is on older protocols). Arguments: the
/// marks directory, then `http PORT` to serve streamable HTTP on 127.0.0.1:PORT/mcp.
pub const PY_SERVER: &str = r#"
import os, sys, anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("pytest")
marks = sys.argv[1]
print("pytest server starting", file=sys.stderr, flush=True)

@server.tool(description="Greet someone.")
def greet(name: str) -> str:
    return f"hello {name}"

@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def look() -> str:
    return "looked"

@server.tool()
def fail() -> str:
    raise ToolError("it broke")

@server.tool()
async def slow(seconds: float) -> str:
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        open(os.path.join(marks, "cancelled"), "w").close()
        raise
    return "done"

@server.tool()
def die() -> str:
    os._exit(1)

@server.tool()
def headers(ctx: Context) -> str:
    h = ctx.headers or {}
    return f"auth={h.get('authorization')} team={h.get('x-team')}"

@server.tool()
async def grow(ctx: Context) -> str:
    server.add_tool(lambda: "grown here", name="grown", description="Added by grow.")
    if ctx.protocol_version and ctx.protocol_version >= "2026-07-28":
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return "grew"

if len(sys.argv) > 3 and sys.argv[2] == "http":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]))
else:
    server.run()
"#;
