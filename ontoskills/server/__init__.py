"""The MCP side: `ontoskills serve` (app.py, official SDK over stdio) and client set-up
(clients.py). Import submodules directly; this package stays import-light so `mcp-config`
does not pay for the SDK."""
