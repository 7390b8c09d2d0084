"""NM314 xla-utils: ``torch_xla.utils.checkpoint`` and the ``torch_xla.amp.syncfree`` optimizers become stock torch.

What it does:

Pure symbol moves (data, applied by the engine's SymbolMover):

* ``torch_xla.utils.checkpoint.checkpoint`` -> ``torch.utils.checkpoint.checkpoint``
* ``torch_xla.amp.syncfree.AdamW|Adam|SGD`` -> ``torch.optim.AdamW|Adam|SGD``

plus one structural fix: ``use_reentrant=True`` is added to ``checkpoint(...)`` when absent, and
``torch_xla.__version__`` reads as ``torch.__version__`` (``from torch_xla import __version__`` -> ``from
torch.version import __version__``) in a file that imports torch_xla at module level outside ``if`` / ``try``:
torch_xla X.Y shipped for torch X.Y, so a test such as ``is_pt21_plus`` picks the branch of the torch it runs on
(TorchNeuron's is newer than every torch_xla release). Behind a guarded import the version may test for the XLA
stack itself: left to NM317 / NM318.

Why:

These torch_xla modules were drop-ins for stock torch utilities. torch_xla's ``checkpoint`` was the re-entrant
implementation by default, and stock ``checkpoint`` warns unless ``use_reentrant`` is given, so passing
``use_reentrant=True`` keeps the same behaviour (consider ``use_reentrant=False``, which torch recommends).

Before::

    from torch_xla.utils.checkpoint import checkpoint
    from torch_xla.amp import syncfree
    h = checkpoint(block, h)
    opt = syncfree.AdamW(model.parameters(), lr=1e-4)
    is_pt21_plus = tuple(map(int, torch_xla.__version__.split(".")[:2])) >= (2, 1)

After::

    from torch.utils.checkpoint import checkpoint
    import torch.optim
    h = checkpoint(block, h, use_reentrant=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    is_pt21_plus = tuple(map(int, torch.__version__.split(".")[:2])) >= (2, 1)

Safety: safe. The syncfree optimizers skipped the step on inf/nan gradients found by the XLA grad scaler; with
stock AMP use ``torch.amp.GradScaler`` (bf16 needs none).

References:

* https://pytorch.org/docs/stable/checkpoint.html
* https://pytorch.org/docs/stable/optim.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import find_keyword, has_star_kwargs, keyword_arg
from codemods.xla._base import VERSION, Safety, XlaRule, version_port
from migrate.rule import dotted_name
from migrate.snippets import parse_expression

CHECKPOINT = "torch_xla.utils.checkpoint.checkpoint"
VERSION_NOTE = ("torch_xla.__version__ -> torch.__version__ (torch_xla X.Y shipped for torch X.Y: the same release "
                "number; TorchNeuron has no torch_xla, and its torch is newer than every torch_xla release)")


class XlaUtils(XlaRule):
    """torch_xla.utils.checkpoint / torch_xla.amp.syncfree optimizers -> stock torch."""

    id = "NM314"
    name = "xla-utils"
    safety = Safety.SAFE
    moves = {
        CHECKPOINT: "torch.utils.checkpoint.checkpoint",
        "torch_xla.amp.syncfree.AdamW": "torch.optim.AdamW",
        "torch_xla.amp.syncfree.Adam": "torch.optim.Adam",
        "torch_xla.amp.syncfree.SGD": "torch.optim.SGD",
        "torch_xla.amp.syncfree.adamw.AdamW": "torch.optim.AdamW",
        "torch_xla.amp.syncfree.adam.Adam": "torch.optim.Adam",
        "torch_xla.amp.syncfree.sgd.SGD": "torch.optim.SGD",
    }

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        # `from torch_xla import __version__` at module level: the PyTorch release the file runs on
        names_ = updated.names
        if updated.relative or updated.module is None or dotted_name(updated.module) != "torch_xla" \
                or isinstance(names_, cst.ImportStar) or len(self.ctx.statement_stack) != 1 \
                or any(dotted_name(alias.name) != "__version__" for alias in names_) or not version_port(self.ctx):
            return updated
        self.fixed(original, VERSION_NOTE)
        return updated.with_changes(module=cst.Attribute(cst.Name("torch"), cst.Name("version")))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if original.attr.value != "__version__" or not self.ctx.matches(original, {VERSION}) \
                or not version_port(self.ctx):
            return updated
        self.ctx.add_import("torch")
        self.fixed(original, VERSION_NOTE)
        return parse_expression("torch.__version__")

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not self.ctx.matches(original.func, {CHECKPOINT}):
            return updated
        if find_keyword(updated, "use_reentrant") is not None or has_star_kwargs(updated):
            return updated
        args = list(updated.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        args.append(keyword_arg("use_reentrant", cst.Name("True")))
        return updated.with_changes(args=args)
