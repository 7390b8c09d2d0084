"""One rank of a `neuron-compat scan --mode tp` group. Started by `compat_matrix.tp.run_tp_job` through `torchrun`
(``python -m torch.distributed.run``), never imported by the runner.

Each rank:

1. writes ``OUT/rank<R>.pid`` first thing (before importing torch), so the parent can kill the rank's own session:
   torchrun starts every worker with ``start_new_session=True``, outside torchrun's process group;
2. initialises the process group (``gloo`` on CPU, ``nccl`` on CUDA, ``neuron`` on Neuron; on Neuron the process group
   sets ``NEURON_RT_VISIBLE_CORES=LOCAL_RANK`` itself unless the parent handed a core list down, see ``_bind_device``);
3. rank 0 only: loads the checkpoint *unsharded* on its own device and records the reference logits and greedy tokens;
4. every rank: loads the checkpoint with ``DistributedConfig(tp_size=WORLD_SIZE)`` and a ``DeviceMesh``, counts the
   DTensor parameters, runs the forward and a static-cache greedy ``generate``;
5. rank 0 compares with the reference.

After every stage the rank rewrites ``OUT/rank<R>.json`` (``stage``, ``error``, measurements), so a rank that is killed
or hangs still says how far it got. A rank that fails exits non-zero, and torchrun then stops the other ranks.
"""

from __future__ import annotations

import json
import os
import sys
import time

# Pure Python: importable before torch (the launcher puts the repository on PYTHONPATH).
from compat_matrix.common import one_line

_RESULT: dict = {}
_OUT_DIR = ""


def _write_result() -> None:
    path = os.path.join(_OUT_DIR, f"rank{_RESULT.get('rank', 'x')}.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(_RESULT, handle, default=str)
    os.replace(tmp, path)


def _stage(name: str) -> None:
    _RESULT["stage"] = name
    _RESULT.setdefault("stages_started", {})[name] = time.time()
    _write_result()


def _watch_parent(parent_pid: int) -> None:
    """Exit when the process that called ``run_tp_job`` is gone (e.g. SIGKILLed by the scan runner's own timeout):
    the group lives in sessions of its own, so nobody else would reap it."""
    import threading

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(parent_pid, 0)
            except ProcessLookupError:
                os._exit(5)
            except PermissionError:
                pass

    threading.Thread(target=watch, name="tp-parent-watch", daemon=True).start()


def _bind_device(device: str, local_rank: int):
    """Return the torch.device of this rank; set the per-rank environment before the runtime is touched."""
    import torch

    if device == "neuron":
        cores = os.environ.get("NEURON_COMPAT_TP_CORES", "")
        if cores:
            # The parent was pinned to a core range (e.g. by the scan runner's isolation): give rank i the i-th core.
            listed = _expand_cores(cores)
            os.environ["NEURON_RT_VISIBLE_CORES"] = str(listed[local_rank])
        # Otherwise leave NEURON_RT_VISIBLE_CORES unset: init_process_group("neuron") sets it to LOCAL_RANK.
        try:  # the 2.33 guide imports torch_neuronx to register the "neuron" process-group backend
            import torch_neuronx  # noqa: F401
        except ImportError:  # an optional extra: without it init_process_group("neuron") fails and the rank reports it
            pass
        return torch.device("neuron")
    if device == "cuda":
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def _expand_cores(spec: str) -> list[int]:
    cores: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if "-" in part:
            low, high = part.split("-")
            cores.extend(range(int(low), int(high) + 1))
        elif part:
            cores.append(int(part))
    return cores


def _inputs(vocab_size: int, batch: int, seq_len: int):
    import torch

    generator = torch.Generator().manual_seed(1234)
    high = max(2, min(int(vocab_size), 1000))
    # Start at 1: id 0 is a common pad/bos id.
    input_ids = torch.randint(1, high, (batch, seq_len), generator=generator)
    return input_ids, torch.ones_like(input_ids)


def _full(tensor):
    from torch.distributed.tensor import DTensor

    if isinstance(tensor, DTensor):
        return tensor.full_tensor()
    return tensor


def _generate(model, input_ids, attention_mask, max_new_tokens: int, cache: str | None):
    """Greedy tokens after the prompt; ``cache="static"`` asks for a StaticCache, anything else the default cache."""
    kwargs = dict(
        input_ids=input_ids,
        attention_mask=attention_mask,
        max_new_tokens=max_new_tokens,
        min_new_tokens=max_new_tokens,
        do_sample=False,
        num_beams=1,
        pad_token_id=0,
    )
    if cache == "static":
        kwargs["cache_implementation"] = "static"
    out = model.generate(**kwargs)
    return _full(out)[:, input_ids.shape[1] :].cpu()


def _layer_pattern(name: str) -> str:
    return ".".join("*" if part.isdigit() else part for part in name.split("."))


def _inspect_sharding(model) -> dict:
    """DTensor parameters of this rank: how many, which modules carry a Shard placement, how much is local."""
    from torch.distributed.tensor import DTensor, Shard

    dtensor_params = 0
    sharded: dict[str, str] = {}
    replicated_dtensor: set[str] = set()
    local_numel = full_numel = 0
    for name, param in model.named_parameters():
        full_numel += param.numel()
        if isinstance(param, DTensor):
            dtensor_params += 1
            local_numel += param.to_local().numel()
            module = _layer_pattern(name.rsplit(".", 1)[0])
            placements = param.placements
            if any(isinstance(p, Shard) for p in placements):
                sharded.setdefault(module, ",".join(str(p) for p in placements))
            else:
                replicated_dtensor.add(module)
        else:
            local_numel += param.numel()
    mesh = getattr(model, "_device_mesh", None)
    return {
        "dtensor_params": dtensor_params,
        "sharded_modules": sorted(sharded),
        "placements": dict(sorted(sharded.items())),
        "replicated_dtensor_modules": sorted(replicated_dtensor - set(sharded)),
        "local_param_fraction": round(local_numel / full_numel, 4) if full_numel else None,
        "mesh": None
        if mesh is None
        else {
            "device_type": mesh.device_type,
            "shape": list(mesh.shape),
            "dim_names": list(mesh.mesh_dim_names or ()),
        },
    }


def _peak_rss_mb() -> float:
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def main(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--seq-len", type=int, default=8)
    parser.add_argument("--max-new-tokens", type=int, default=8)
    parser.add_argument("--pg-timeout", type=float, default=600.0)
    parser.add_argument("--parent-pid", type=int, default=0)
    args = parser.parse_args(argv)

    global _OUT_DIR
    _OUT_DIR = args.out_dir
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    _RESULT.update(rank=rank, world_size=world_size, pid=os.getpid(), error=None, error_at=None, timings={})
    with open(os.path.join(_OUT_DIR, f"rank{rank}.pid"), "w") as handle:
        handle.write(str(os.getpid()))
    timings = _RESULT["timings"]
    if args.parent_pid:
        _watch_parent(args.parent_pid)

    try:
        _stage("import")
        import torch
        import torch.distributed as dist
        from torch.distributed.device_mesh import DeviceMesh
        from transformers import AutoModelForCausalLM
        from transformers.distributed import DistributedConfig

        dtype = getattr(torch, args.dtype)
        backend = {"cpu": "gloo", "cuda": "nccl", "neuron": "neuron"}[args.device]
        _RESULT["backend"] = backend

        _stage("init_process_group")
        device = _bind_device(args.device, local_rank)
        start = time.perf_counter()
        from datetime import timedelta

        dist.init_process_group(backend=backend, timeout=timedelta(seconds=args.pg_timeout))
        timings["init_process_group"] = time.perf_counter() - start

        reference = None
        if rank == 0:
            _stage("reference_load")
            start = time.perf_counter()
            ref_model = AutoModelForCausalLM.from_pretrained(args.model_dir, dtype=dtype).to(device).eval()
            timings["reference_load"] = time.perf_counter() - start
            input_ids, attention_mask = _inputs(ref_model.config.get_text_config().vocab_size, 1, args.seq_len)
            _stage("reference_forward")
            start = time.perf_counter()
            with torch.no_grad():
                ref_logits = ref_model(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device)).logits
            ref_logits = ref_logits.float().cpu()
            timings["reference_forward"] = time.perf_counter() - start
            _stage("reference_generate")
            start = time.perf_counter()
            cache = "static"
            try:
                with torch.no_grad():
                    ref_tokens = _generate(
                        ref_model, input_ids.to(device), attention_mask.to(device), args.max_new_tokens, "static"
                    )
            except Exception as exc:  # the eager mode reports this; compare TP on the default cache instead
                _RESULT["reference_static_cache_error"] = one_line(exc)
                cache = "dynamic"
                with torch.no_grad():
                    ref_tokens = _generate(
                        ref_model, input_ids.to(device), attention_mask.to(device), args.max_new_tokens, "dynamic"
                    )
            timings["reference_generate"] = time.perf_counter() - start
            reference = {"logits": ref_logits, "tokens": ref_tokens, "cache": cache}
            _RESULT["cache"] = cache
            del ref_model
        # The other ranks wait here while rank 0 computes the reference; the cache kind travels with the barrier.
        _stage("barrier")
        box: list[str | None] = [reference["cache"] if reference else None]
        dist.broadcast_object_list(box, src=0)
        shared_cache = box[0]

        _stage("shard_load")
        mesh = DeviceMesh(device.type, list(range(world_size)))
        start = time.perf_counter()
        model = AutoModelForCausalLM.from_pretrained(
            args.model_dir,
            dtype=dtype,
            distributed_config=DistributedConfig(tp_size=world_size),
            device_mesh=mesh,
        ).eval()
        timings["load"] = time.perf_counter() - start
        tp_plan = dict(getattr(model, "tp_plan", None) or {})
        _RESULT["tp_plan"] = tp_plan
        _RESULT.update(_inspect_sharding(model))

        input_ids, attention_mask = _inputs(model.config.get_text_config().vocab_size, 1, args.seq_len)
        input_ids, attention_mask = input_ids.to(device), attention_mask.to(device)
        _stage("forward")
        start = time.perf_counter()
        with torch.no_grad():
            logits = _full(model(input_ids=input_ids, attention_mask=attention_mask).logits)
        logits = logits.float().cpu()
        timings["first_call"] = time.perf_counter() - start
        if reference is not None:
            # Record the logits parity now, so that a failing generate still reports it.
            if logits.shape != reference["logits"].shape:
                _RESULT["parity"] = {
                    "max_abs_diff": None,
                    "tokens_match": None,
                    "shapes": [list(logits.shape), list(reference["logits"].shape)],
                }
            else:
                diff = (logits - reference["logits"]).abs().max().item()
                _RESULT["parity"] = {
                    "max_abs_diff": diff if diff == diff else float("inf"),  # NaN -> inf: never within tolerance
                    "tokens_match": None,
                    "logits_absmax": reference["logits"].abs().max().item(),
                }
            _write_result()

        _stage("generate")
        start = time.perf_counter()
        with torch.no_grad():
            tokens = _generate(model, input_ids, attention_mask, args.max_new_tokens, shared_cache)
        timings["generate"] = time.perf_counter() - start

        if reference is not None:
            _stage("compare")
            _RESULT["parity"].update(
                tokens_match=bool(torch.equal(tokens, reference["tokens"])),
                reference_tokens=reference["tokens"][0].tolist(),
                tp_tokens=tokens[0].tolist(),
            )
        _stage("done")
        dist.destroy_process_group()
    except BaseException as exc:  # noqa: BLE001 - report everything, then fail so torchrun stops the group
        _RESULT["error"] = one_line(exc)
        _RESULT["error_at"] = time.time()
        if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():
            _RESULT["oom"] = True
        import traceback

        _RESULT["traceback"] = traceback.format_exc()[-4000:]
        _RESULT["peak_rss_mb"] = _peak_rss_mb()
        _write_result()
        sys.stderr.write(_RESULT["traceback"])
        sys.stderr.flush()
        os._exit(3)
    _RESULT["peak_rss_mb"] = _peak_rss_mb()
    _write_result()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
