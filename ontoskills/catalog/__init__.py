"""Installed tree -> skills: verification, Turtle headers, intent vectors, cached snapshot."""
