"""NM313 debug-metrics: a torch_xla metrics report is removed, but a branch that did nothing else keeps a line that
says so, and a todo (rt4F 4: `if args.debug:` was deleted and `--debug` became a silent no-op)."""

from __future__ import annotations

from tests.rules.case import findings, migrate

RULE = "NM313"
NOTE = "the torch_xla debug metrics report was all this block did"


def test_a_branch_that_only_reported_stays_printing_with_a_todo_above_it() -> None:
    result = migrate("""
        import torch_xla.debug.metrics as met

        def end_of_epoch(args, loss):
            if args.debug:
                print(met.metrics_report())
            elif args.verbose:
                print(met.short_metrics_report())
                met.clear_all()
            return loss
    """, RULE, family="NM3")
    assert "    if args.debug:\n        print(\"no XLA metrics report on TorchNeuron:" in result.text
    assert "    elif args.verbose:\n        print(\"no XLA metrics report on TorchNeuron:" in result.text
    assert "met." not in result.text and "torch_xla.debug" not in result.text
    assert result.text.count(NOTE) == 1  # one note, above the `if`
    assert findings(result, RULE) == {(4, "todo"), (8, "fixed")}
    note = next(f.message for f in result.findings if f.severity.value == "todo")
    assert "TORCH_NEURONX_ENABLED_METRIC_TABLES" in note and "torch.profiler" in note


def test_a_report_beside_other_statements_is_removed_as_before() -> None:
    result = migrate("""
        import torch_xla.debug.metrics as met

        def end_of_epoch(args, loss):
            if args.debug:
                print("epoch", loss)
                print(met.metrics_report())
            return loss
    """, RULE, family="NM3")
    assert "    if args.debug:\n        print(\"epoch\", loss)\n    return loss" in result.text
    assert NOTE not in result.text
    assert findings(result, RULE) == {(6, "fixed")}


def test_a_periodic_report_goes_as_before() -> None:
    # `step % 100 == 0` is no flag: nothing the user selects is lost, and a print every 100 steps would be noise
    result = migrate("""
        import torch_xla.debug.metrics as met

        def end_of_step(step):
            if step % 100 == 0:
                print(met.metrics_report())
            return step
    """, RULE, family="NM3")
    assert result.text.endswith("def end_of_step(step):\n    return step\n")
    assert findings(result, RULE) == {(5, "fixed")}


def test_a_branch_that_imports_the_metrics_module_itself_is_a_report_only_branch() -> None:
    # final4-DF N5: the local import counted as another statement, and `elif args.debug:` became `pass`, "fixed"
    result = migrate("""
        import torch_xla.core.xla_model as xm

        def report(args):
            if args.quiet:
                return
            elif args.debug:
                import torch_xla.debug.metrics as met
                xm.master_print(met.metrics_report())
            if args.trace:
                from torch_xla.debug import metrics
                print(metrics.short_metrics_report())
    """, RULE, family="NM3")
    # xm.master_print printed on global rank 0 only: so does its print (rt7M-M13); the plain print on every rank
    assert "    elif args.debug:\n        if int(os.environ.get(\"RANK\", 0)) == 0:\n            print(\"no XLA metrics " \
        "report on TorchNeuron:" in result.text
    assert "    if args.trace:\n        print(\"no XLA metrics report on TorchNeuron:" in result.text
    assert "pass" not in result.text and "import torch_xla" not in result.text and "from torch_xla" not in result.text
    assert findings(result, RULE) == {(4, "todo"), (9, "todo")}


def test_a_local_metrics_import_beside_other_work_goes_with_the_report_as_before() -> None:
    result = migrate("""
        def end_of_epoch(args, loss):
            if args.debug:
                import torch_xla.debug.metrics as met
                print("epoch", loss)
                print(met.metrics_report())
            return loss
    """, RULE, family="NM3")
    assert "    if args.debug:\n        print(\"epoch\", loss)\n    return loss" in result.text
    assert NOTE not in result.text and "torch_xla" not in result.text
