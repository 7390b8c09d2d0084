"""neuron-compat reports: read result rows (``compat_matrix.schema``), aggregate them, render them, and
compare them (merge, diff, baseline, gate). Pure Python: never imports torch, transformers or libcst.

Module map:

- ``results``  read ``results.jsonl`` files / scan output folders, validate every row, collect problems
- ``merge``    fold rows from several sources into one row per job, reporting duplicates and conflicts
- ``summary``  aggregate rows into the one view model every renderer reads
- ``render``   write the view model as HTML, Markdown, JSON or JUnit XML (format chosen by file extension)
- ``diff``     compare two result sets: regressions, improvements, new and removed architectures
- ``baseline`` the small checked-in file the gate compares against
- ``gate``     the CI decision: one aligned line per architecture and an exit code
"""
