"""Migration rules, one module per rule, grouped by family. Adding a module registers its rules."""
