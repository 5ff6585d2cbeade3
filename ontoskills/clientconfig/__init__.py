"""MCP client configuration (`ontoskills mcp-config`): which file each client reads and the
entry it documents (`clients.py`), writing it back merged, backed up and checked (`write.py`),
YAML ones through `yamlconfig.py`. Its own package beside the base layer: it needs no MCP SDK
and nothing of the server, and only the `mcp-config` verb imports it."""
