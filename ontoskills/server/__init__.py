"""The MCP server: `ontoskills serve` (app.py, official SDK over stdio or Streamable HTTP).
Import submodules directly; this package stays import-light. Client set-up (`mcp-config`)
is its own package, clientconfig/."""
