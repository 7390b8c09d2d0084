"""NM314 xla-utils: ``torch_xla.utils.checkpoint`` and the ``torch_xla.amp.syncfree`` optimizers become stock torch.

What it does:

Pure symbol moves (data, applied by the engine's SymbolMover):

* ``torch_xla.utils.checkpoint.checkpoint`` -> ``torch.utils.checkpoint.checkpoint``
* ``torch_xla.amp.syncfree.AdamW|Adam|SGD`` -> ``torch.optim.AdamW|Adam|SGD``

plus one structural fix: ``use_reentrant=True`` is added to ``checkpoint(...)`` when absent.

Why:

These torch_xla modules were drop-ins for stock torch utilities. torch_xla's ``checkpoint`` was the re-entrant
implementation by default, and stock ``checkpoint`` warns unless ``use_reentrant`` is given, so passing
``use_reentrant=True`` keeps the same behaviour (consider ``use_reentrant=False``, which torch recommends).

Before::

    from torch_xla.utils.checkpoint import checkpoint
    from torch_xla.amp import syncfree
    h = checkpoint(block, h)
    opt = syncfree.AdamW(model.parameters(), lr=1e-4)

After::

    from torch.utils.checkpoint import checkpoint
    import torch.optim
    h = checkpoint(block, h, use_reentrant=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

Safety: safe. The syncfree optimizers skipped the step on inf/nan gradients found by the XLA grad scaler; with
stock AMP use ``torch.amp.GradScaler`` (bf16 needs none).

References:

* https://pytorch.org/docs/stable/checkpoint.html
* https://pytorch.org/docs/stable/optim.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import find_keyword, has_star_kwargs, keyword_arg
from codemods.xla._base import Safety, XlaRule

CHECKPOINT = "torch_xla.utils.checkpoint.checkpoint"


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
