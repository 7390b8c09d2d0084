"""Where a scan runs: device, compile backend, dtype, versions, memory accounting.

On a Trainium host (``torch.neuron`` present and available) the scan uses the ``neuron`` device and the ``neuron``
compile backend. Elsewhere it runs the same checks on the best local device (cuda, else cpu) with a stand-in backend
(``aot_eager`` by default: full Dynamo capture plus AOTAutograd, like the Neuron pipeline up to its FX passes, without
Inductor's C++ compile time). The row's ``backend`` always names what ran.
"""

from __future__ import annotations

import os
import platform
import sys
from typing import Any

#: Stand-in compile backend off Neuron. Dynamo capture (graphs, breaks, recompiles) and AOTAutograd run for real.
DEFAULT_STANDIN_BACKEND = "aot_eager"
DTYPES = {
    "float32": "float32",
    "fp32": "float32",
    "bfloat16": "bfloat16",
    "bf16": "bfloat16",
    "float16": "float16",
    "fp16": "float16",
}


def _torch_neuron() -> Any:
    """``torch.neuron``, which torch-neuronx registers when it is imported (torch's own types do not declare it)."""
    import torch

    return torch.neuron  # type: ignore[attr-defined]


def neuron_available() -> bool:
    import torch

    neuron = getattr(torch, "neuron", None)
    try:
        return bool(neuron is not None and neuron.is_available())
    except Exception:  # noqa: BLE001 - is_available must never take the scan down
        return False


def best_device() -> str:
    import torch

    if neuron_available():
        return "neuron"
    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def device_count(device: str) -> int:
    import torch

    if device == "neuron":
        return int(_torch_neuron().device_count())
    if device == "cuda":
        return int(torch.cuda.device_count())
    return 1


def default_backend(device: str) -> str:
    return "neuron" if device == "neuron" else DEFAULT_STANDIN_BACKEND


def default_dtype(device: str) -> str:
    """The device's natural dtype: bf16 on Neuron (and cuda), fp32 on cpu."""
    return "bfloat16" if device in ("neuron", "cuda") else "float32"


def normalize_dtype(name: str) -> str:
    try:
        return DTYPES[name.lower()]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r} (choose from float32, bfloat16, float16)") from None


def versions() -> dict[str, Any]:
    import torch
    import transformers

    try:
        from importlib.metadata import version

        neuronx = version("torch-neuronx") if neuron_available() else None
    except Exception:  # noqa: BLE001
        neuronx = None
    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "torch_neuronx": neuronx,
        "python": platform.python_version(),
    }


def cpu_cores() -> int:
    """Cores this process may run on (its affinity mask: a container or ``taskset`` may allow fewer than the host
    has)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def default_jobs(device: str, count: int) -> int:
    """Workers when ``--jobs`` is not given: one per NeuronCore / GPU; on cpu one per core, each with one thread
    (``--jobs 2`` on 2 cores was 2.03x faster than ``--jobs 1`` with 2 threads: docs/performance.md, "Default
    --jobs on cpu"). Tiny models do not keep several threads busy; separate processes overlap everything."""
    return max(1, count) if device in ("neuron", "cuda") else cpu_cores()


def cpu_threads(jobs: int) -> int:
    """``OMP_NUM_THREADS`` for each of ``jobs`` cpu workers: the cores shared out, at least one."""
    return max(1, cpu_cores() // max(1, jobs))


def pin_env(device: str, slot: int, count: int) -> dict[str, str]:
    """Environment for worker ``slot``: one NeuronCore (or one GPU) per worker."""
    if device == "neuron" and count:
        return {"NEURON_RT_VISIBLE_CORES": str(slot % count)}
    if device == "cuda" and count:
        return {"CUDA_VISIBLE_DEVICES": str(slot % count)}
    return {}


# --- memory -----------------------------------------------------------------------------------------------------
def reset_peak_memory(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    elif device == "neuron":
        _torch_neuron().reset_peak_memory_stats()
    # Host: writing 5 to clear_refs resets VmHWM (Linux >= 4.0).
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        pass


def peak_memory_mb(device: str) -> float | None:
    import torch

    if device == "cuda":
        return round(torch.cuda.max_memory_allocated() / 2**20, 1)
    if device == "neuron":
        _torch_neuron().synchronize()
        return round(_torch_neuron().max_memory_allocated() / 2**20, 1)
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    if sys.platform != "win32":
        import resource

        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return None


def synchronize(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "neuron":
        _torch_neuron().synchronize()


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").lower() in ("1", "true", "yes")
