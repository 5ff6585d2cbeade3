"""ontoskills: package manager, registry tool and MCP server for OntoSkills."""

__version__ = "0.1.0"
