"""Views of a run: text, JSON, Markdown, JUnit and HTML renderers. Renderers only read."""
