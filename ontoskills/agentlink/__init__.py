"""`ontoskills link --agent A` / `unlink`: every served skill written into an agent's own
skills folder (agents.py: where each agent reads them, from its docs; record.py: what we
wrote, per file sha256, under the home's state/; sync.py: plan, ownership checks, writes).
See docs/AGENTS.md."""
