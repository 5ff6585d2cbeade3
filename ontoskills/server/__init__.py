"""The MCP side: `ontoskills serve` (app.py, official SDK over stdio or Streamable HTTP) and
client set-up (mcpconfig.py, mcpclients.py). Import submodules directly; this package stays
import-light so `mcp-config` does not pay for the SDK."""
