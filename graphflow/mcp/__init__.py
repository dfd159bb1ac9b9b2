"""MCP servers as tools: `MCPToolset.from_config("mcp.json").tools()` (mcp SDK 2.x).

Needs the `mcp` extra: `pip install "graphflow-agents[mcp]"`.
"""

try:
    import mcp as _mcp  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('MCP support needs: pip install "graphflow-agents[mcp]"') from exc

from graphflow.mcp._tool import MCPTool
from graphflow.mcp.config import HttpServer, MCPServer, SseServer, StdioServer, load_mcp_config
from graphflow.mcp.toolset import MCPToolset

__all__ = (
    "HttpServer",
    "MCPServer",
    "MCPTool",
    "MCPToolset",
    "SseServer",
    "StdioServer",
    "load_mcp_config",
)
