"""An MCP server (mcp SDK 2.x) for tests/mcp: `explode` fails with a JSON-RPC internal error."""

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


app.run()
