"""NM304 xla-ranks: torch_xla ordinals and world sizes become torchrun's environment (RANK, WORLD_SIZE, LOCAL_RANK).

What it does:

* ``xm.get_ordinal()``, ``xr.global_ordinal()``, ``xr.process_index()`` -> ``int(os.environ.get("RANK", 0))``
* ``xm.get_local_ordinal()``, ``xr.local_ordinal()`` -> ``int(os.environ.get("LOCAL_RANK", 0))``
* ``xm.xrt_world_size()``, ``xm.world_size()``, ``xr.world_size()``, ``xr.process_count()``,
  ``xr.global_device_count()`` -> ``int(os.environ.get("WORLD_SIZE", 1))``
* ``xr.local_process_count()``, ``xr.local_device_count()`` -> ``int(os.environ.get("LOCAL_WORLD_SIZE", 1))``
* ``xm.is_master_ordinal()`` (``local=True``) -> ``int(os.environ.get("LOCAL_RANK", 0)) == 0``;
  ``xm.is_master_ordinal(local=False)`` -> ``int(os.environ.get("RANK", 0)) == 0``
* ``xr.addressable_device_count()`` -> ``1``

``xm.is_master_ordinal()`` defaults to the LOCAL master (one per host); that default is kept. A non-literal
``local=`` argument gets a ``todo``.

Why:

Under torchrun there is one process per NeuronCore: a process addresses one device, so its index is its rank and a
host runs LOCAL_WORLD_SIZE of them. The environment, not ``dist.get_rank()``: torchrun sets these variables for
every worker, and the expressions also work in a single process where no process group exists
(``dist.get_rank()`` would raise there, while ``xm.get_ordinal()`` returned 0).

Before::

    if xm.is_master_ordinal():
        print("rank", xm.get_ordinal(), "of", xm.xrt_world_size())

After::

    if int(os.environ.get("LOCAL_RANK", 0)) == 0:
        print("rank", int(os.environ.get("RANK", 0)), "of", int(os.environ.get("WORLD_SIZE", 1)))

Safety: safe. Correct under torchrun, which replaces the ``xmp.spawn`` launcher (see NM310).

References:

* https://pytorch.org/docs/stable/elastic/run.html#environment-variables
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/guides/torch-distributed.html
"""

from __future__ import annotations

import libcst as cst

from codemods._lib.cst import Import
from codemods.xla._base import LOCAL_RANK, RANK, WORLD_SIZE, XM, XR, Safety, XlaRule, arg, names

GLOBAL = names((XM, ["get_ordinal"]), (XR, ["global_ordinal"]))
LOCAL = names((XM, ["get_local_ordinal"]), (XR, ["local_ordinal"]))
WORLD = names((XM, ["xrt_world_size", "world_size"]), (XR, ["world_size", "global_runtime_device_count", "process_count", "global_device_count"]))
PROCESS = names((XR, ["process_index"]))
LOCAL_WORLD = names((XR, ["local_process_count", "local_device_count"]))
ADDRESSABLE = names((XR, ["addressable_device_count", "addressable_runtime_device_count"]))
LOCAL_WORLD_SIZE = 'int(os.environ.get("LOCAL_WORLD_SIZE", 1))'
MASTER = names((XM, ["is_master_ordinal"]))
OS = Import("os")


class Ranks(XlaRule):
    """xm.get_ordinal()/xrt_world_size()/is_master_ordinal() -> RANK/WORLD_SIZE/LOCAL_RANK from torchrun."""

    id = "NM304"
    name = "xla-ranks"
    safety = Safety.SAFE

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if self.ctx.matches(func, GLOBAL):
            self.fixed(original, "global ordinal -> RANK")
            return self.expr(RANK, OS)
        if self.ctx.matches(func, PROCESS):
            self.fixed(original, "process index -> RANK (one process per NeuronCore)")
            return self.expr(RANK, OS)
        if self.ctx.matches(func, LOCAL_WORLD):
            self.fixed(original, "processes (devices) on this host -> LOCAL_WORLD_SIZE")
            return self.expr(LOCAL_WORLD_SIZE, OS)
        if self.ctx.matches(func, ADDRESSABLE):
            self.fixed(original, "devices this process addresses -> 1 (one NeuronCore per process)")
            return self.expr("1")
        if self.ctx.matches(func, LOCAL):
            self.fixed(original, "local ordinal -> LOCAL_RANK")
            return self.expr(LOCAL_RANK, OS)
        if self.ctx.matches(func, WORLD):
            self.fixed(original, "world size -> WORLD_SIZE")
            return self.expr(WORLD_SIZE, OS)
        if self.ctx.matches(func, MASTER):
            local = arg(original, 0, "local")
            if local is None or (isinstance(local.value, cst.Name) and local.value.value == "True"):
                self.fixed(original, "xm.is_master_ordinal() (local master, one per host) -> LOCAL_RANK == 0")
                return self.expr(f"{LOCAL_RANK} == 0", OS)
            if isinstance(local.value, cst.Name) and local.value.value == "False":
                self.fixed(original, "xm.is_master_ordinal(local=False) -> RANK == 0")
                return self.expr(f"{RANK} == 0", OS)
            self.todo(original, "xm.is_master_ordinal(local=<expr>): use int(os.environ.get(\"LOCAL_RANK\", 0)) == 0 for the local master or int(os.environ.get(\"RANK\", 0)) == 0 for the global one")
        return updated
