"""Skill search: tokenizer, BM25, semantic, hybrid fusion, trust weighting (service.py)."""
