// IMClient: see Docs/architecture.md. Filled in by its issue.
