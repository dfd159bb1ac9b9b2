"""An MCP server (mcp SDK 2.x) for tests/mcp: `explode` fails with a JSON-RPC internal error;
`db.query` has a name chat-model APIs refuse."""

import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

app = MCPServer("flaky")


@app.tool()
def explode() -> str:
    """Fails with a JSON-RPC internal error."""
    raise MCPError(code=mcp_types.INTERNAL_ERROR, message="the database exploded")


@app.tool()
def fine() -> str:
    """Works."""
    return "fine"


@app.tool(name="db.query")
def db_query(sql: str) -> str:
    """A dotted name, as MCP allows and chat-model APIs do not."""
    return f"rows for {sql}"


app.run()
