"""Renderers: they read results and format them, computing nothing."""
