"""Skill search: tokenizer, BM25, semantic, hybrid fusion, trust weighting (service.py)."""

# The most results one search returns: `search --top-k` and the MCP tool's `top_k` (kept
# here, not in service.py, so the server can name it without importing the search stack).
MAX_TOP_K = 50
