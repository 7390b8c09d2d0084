"""NM7xx: the verification pass. The Python a run leaves is checked against the target stock libraries
(imports, keywords, attributes, overrides) from a generated index; see docs/rules-verify.md."""
