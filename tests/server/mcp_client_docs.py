"""Each MCP client's config format as its own documentation shows it: the file, the map of
servers and one documented entry per transport (values are the docs' examples; only the
shape matters). tests/server/test_mcp_clients.py checks that what `mcp-config` writes uses
exactly these field names and types. The URL above each client is where the example is from.
"""

from __future__ import annotations

from typing import Any

DOCS: dict[str, dict[str, Any]] = {
    # https://code.claude.com/docs/en/mcp ("Project scope": .mcp.json; "User scope": ~/.claude.json)
    "claude": {
        "files": {"project": ".mcp.json", "global": "~/.claude.json"},
        "key": "mcpServers",
        "stdio": {"type": "stdio", "command": "/path/to/server", "args": [], "env": {}},
        "http": {
            "type": "http",
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${API_KEY}"},
        },
    },
    # https://modelcontextprotocol.io/docs/develop/connect-local-servers (Linux: ~/.config/Claude)
    "claude-desktop": {
        "files": {"global": "~/.config/Claude/claude_desktop_config.json"},
        "key": "mcpServers",
        "stdio": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]},
        "http": None,  # remote servers: Settings > Connectors in the app
    },
    # https://cursor.com/docs/mcp (project .cursor/mcp.json, global ~/.cursor/mcp.json)
    "cursor": {
        "files": {"project": ".cursor/mcp.json", "global": "~/.cursor/mcp.json"},
        "key": "mcpServers",
        "stdio": {"command": "npx", "args": ["-y", "mcp-server"], "env": {"API_KEY": "value"}},
        "http": {
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${env:MY_SERVICE_TOKEN}"},
        },
    },
    # https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
    "vscode": {
        "files": {"project": ".vscode/mcp.json", "global": "~/.config/Code/User/mcp.json"},
        "key": "servers",
        "stdio": {"type": "stdio", "command": "npx", "args": ["-y", "server"], "env": {}},
        "http": {
            "type": "http",
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${env:TOKEN}"},
        },
    },
    # https://docs.windsurf.com/windsurf/cascade/mcp (remote servers use serverUrl)
    "windsurf": {
        "files": {"global": "~/.codeium/windsurf/mcp_config.json"},
        "key": "mcpServers",
        "stdio": {"command": "npx", "args": ["-y", "server"], "env": {}},
        "http": {
            "serverUrl": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${env:TOKEN}"},
        },
    },
    # https://developers.openai.com/codex/mcp ([mcp_servers.NAME]; url + bearer_token_env_var)
    "codex": {
        "files": {"project": ".codex/config.toml", "global": "~/.codex/config.toml"},
        "key": "mcp_servers",
        "stdio": {"command": "npx", "args": ["-y", "server"], "env": {}},
        "http": {"url": "https://api.example.com/mcp", "bearer_token_env_var": "TOKEN"},
    },
    # https://zed.dev/docs/ai/mcp ("As Custom Servers": context_servers in settings.json)
    "zed": {
        "files": {"project": ".zed/settings.json", "global": "~/.config/zed/settings.json"},
        "key": "context_servers",
        "stdio": {"command": "some-command", "args": ["arg-1", "arg-2"], "env": {}},
        "http": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer <t>"}},
    },
    # https://geminicli.com/docs/tools/mcp-server/ (httpUrl: Streamable HTTP)
    "gemini": {
        "files": {"project": ".gemini/settings.json", "global": "~/.gemini/settings.json"},
        "key": "mcpServers",
        "stdio": {"command": "path/to/server", "args": ["--arg1"], "env": {}, "timeout": 30000},
        "http": {
            "httpUrl": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"},
        },
    },
    # https://opencode.ai/docs/mcp-servers/ (local: command array; remote: url)
    "opencode": {
        "files": {"project": "opencode.json", "global": "~/.config/opencode/opencode.json"},
        "key": "mcp",
        "stdio": {
            "type": "local",
            "command": ["bun", "x", "my-mcp-command"],
            "enabled": True,
            "environment": {"MY_ENV_VAR": "value"},
        },
        "http": {
            "type": "remote",
            "url": "https://my-mcp-server.com",
            "enabled": True,
            "headers": {"Authorization": "Bearer {env:MY_API_KEY}"},
        },
    },
    # https://block.github.io/goose/docs/guides/config-files (extensions in config.yaml)
    "goose": {
        "files": {"global": "~/.config/goose/config.yaml"},
        "key": "extensions",
        "stdio": {
            "enabled": True,
            "type": "stdio",
            "name": "my-custom-tool",
            "cmd": "npx",
            "args": ["-y", "@my/tool"],
            "envs": {},
            "timeout": 300,
            "description": "My custom tool",
        },
        "http": {
            "enabled": True,
            "type": "streamable_http",
            "name": "remote",
            "uri": "http://localhost:8000/mcp",
            "envs": {},
            "timeout": 300,
        },
    },
    # https://docs.cline.bot/mcp/configuring-mcp-servers (cline_mcp_settings.json)
    "cline": {
        "files": {
            "global": "~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/"
            "cline_mcp_settings.json"
        },
        "key": "mcpServers",
        "stdio": {
            "command": "node",
            "args": ["/path/to/server.js"],
            "env": {"API_KEY": "your_api_key"},
            "disabled": False,
            "autoApprove": [],
        },
        "http": {
            "type": "streamableHttp",
            "url": "https://your-server.com/mcp",
            "disabled": False,
            "headers": {"Authorization": "Bearer token"},
        },
    },
}
