"""What every app shares: roles, the domain-error base, JSON-Lines reading, chart geometry.

The bottom of the layer contract (docs/architecture.md): nothing here imports an app of
Winnow's."""
