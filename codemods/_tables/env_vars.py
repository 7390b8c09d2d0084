"""ONE table for XLA-era / Neuron environment variables: what each becomes on TorchNeuron.

Used by the torch_xla Python rule (``os.environ[...] = ...``, ``os.environ.setdefault``, ``putenv``) and
by the launch-layer rules (shell ``export``, Dockerfile ``ENV``, YAML env lists). Source: the variables
TorchNeuron reads, https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/reference/env-vars.html.

Format (keep it this simple, other families read it)::

    ENV_VARS: dict[str, EnvVarAction]     exact variable names
    ENV_PREFIXES: dict[str, EnvVarAction] fallbacks for name prefixes (longest prefix wins)
    lookup(name) -> EnvVarAction | None   exact name first, then prefixes; None = not ours, leave alone

``EnvVarAction.action``:

* ``"remove"``: delete the assignment / export. ``message`` says why; when ``todo`` is True the message is a
  step a human must still take (report a ``todo``), else report a ``fixed``.
* ``"keep"``: leave untouched, no finding.
* ``"review"``: leave in place and report ``message`` as a ``todo``.
* ``"replace"``: rename the variable to ``replacement`` (value kept); report ``message`` (``todo`` decides
  the severity as for remove).

``CC_FLAGS`` classifies the options inside ``NEURON_CC_FLAGS`` the same way (``"remove"`` = XLA-era or
derived automatically by TorchNeuron; ``"keep"`` = still a neuronx-cc option).
``ADDITIONS`` lists variables worth ADDING to launchers (value, message); optional to apply.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnvVarAction:
    action: str  # "remove" | "keep" | "review" | "replace"
    replacement: str | None = None  # new variable name for "replace"
    message: str = ""
    todo: bool = False  # for remove/replace: the message is a step a human must take


_BF16 = (
    "{name} made torch_xla hold every fp32 tensor in bf16; removed: to keep full-bf16 numerics load the model "
    "with dtype=torch.bfloat16 (or model.to(torch.bfloat16)), or use bf16=True / torch.autocast(device_type, "
    "dtype=torch.bfloat16) for mixed precision"
)
_COMPILE_ONLY = (
    "{name} only served neuron_parallel_compile graph extraction; TorchNeuron compiles on first call (removed)"
)
_XLA_DEBUG = (
    "{name} is a torch_xla setting with no effect on TorchNeuron (removed); compiler artifacts: "
    "TORCH_NEURONX_DEBUG_DIR and TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS=1"
)
_OPTIMUM = "{name} configured optimum-neuron, which is gone (removed)"
_RUNTIME_U = (
    "review {name}: a Neuron runtime knob from the XLA stack whose effect on TorchNeuron is unverified; keep it "
    "only if a run on TorchNeuron shows it still helps"
)


def _remove(message: str, todo: bool = False) -> EnvVarAction:
    return EnvVarAction("remove", None, message, todo)


def _review(message: str) -> EnvVarAction:
    return EnvVarAction("review", None, message, True)


KEEP = EnvVarAction("keep")

ENV_VARS: dict[str, EnvVarAction] = {
    # precision by environment: on TorchNeuron the dtype comes from the code
    "XLA_USE_BF16": _remove(_BF16, todo=True),
    "XLA_DOWNCAST_BF16": _remove(_BF16, todo=True),
    # compiler flags (still read by TorchNeuron)
    "NEURON_CC_FLAGS": _review(
        "review NEURON_CC_FLAGS: TorchNeuron still passes it to neuronx-cc but derives --target/--lnc itself; "
        "drop those and XLA-era cache flags (--cache_dir: use TORCH_NEURONX_NEFF_CACHE_DIR, "
        "--retry_failed_compilation)"
    ),
    "NEURON_COMPILER_OPT_LEVEL": KEEP,
    # the compile-only pass of neuron_parallel_compile: TorchNeuron compiles just in time
    "NEURON_EXTRACT_GRAPHS_ONLY": _remove(_COMPILE_ONLY),
    "NEURON_PARALLEL_COMPILE": _remove(_COMPILE_ONLY),
    "NEURON_PARALLEL_COMPILE_MAX_RETRIES": _remove(_COMPILE_ONLY),
    # XLA-era compile knobs
    "NEURON_FUSE_SOFTMAX": _remove("{name} was a torch-neuronx (XLA) attention compile knob; no effect on TorchNeuron (removed)"),
    # runtime knobs, effect unverified
    "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS": _review(_RUNTIME_U),
    "NEURON_RT_STOCHASTIC_ROUNDING_EN": _review(
        "review NEURON_RT_STOCHASTIC_ROUNDING_EN: optimum-neuron switched stochastic rounding on through it and "
        "nothing in the stock stack does; its effect on TorchNeuron is unverified"
    ),
    "NEURON_NUM_RECENT_MODELS_TO_KEEP": _review(_RUNTIME_U),
    # core selection: one NeuronCore per process under torchrun
    "NEURON_RT_NUM_CORES": _review(
        "review NEURON_RT_NUM_CORES: TorchNeuron drives one NeuronCore per process; launch with torchrun "
        "--nproc_per_node <cores> instead and remove this"
    ),
    "NEURONCORE_NUM_DEVICES": _review(
        "review NEURONCORE_NUM_DEVICES: an XLA-era torch-neuronx setting for how many NeuronCores the run uses; "
        "TorchNeuron takes that from the process count (torchrun --nproc_per_node, one process per NeuronCore): "
        "remove it once --nproc_per_node says the same"
    ),
    "NEURON_RT_VISIBLE_CORES": _review(
        "review NEURON_RT_VISIBLE_CORES: under torchrun remove it (init_process_group(backend=\"neuron\") binds "
        "core LOCAL_RANK when it is unset); keep it only for independent single-process workers"
    ),
    "NEURON_RT_ROOT_COMM_ID": _review(
        "review NEURON_RT_ROOT_COMM_ID: the neuron process group derives it from MASTER_ADDR; remove it unless "
        "a multi-node bootstrap needs it"
    ),
    "NEURON_RT_LOG_LEVEL": KEEP,
    "NEURON_LOGICAL_NC_CONFIG": KEEP,
    "NEURON_LAUNCH_BLOCKING": KEEP,
    # harmless / multi-node
    "MALLOC_ARENA_MAX": KEEP,
    "FI_PROVIDER": KEEP,
    # optimum-neuron configuration
    "CUSTOM_CACHE_REPO": _remove("{name} pointed at optimum-neuron's Hub compile cache, which has no TorchNeuron counterpart (removed)"),
    "DISABLE_TRANSFORMERS_PATCHING": _remove(_OPTIMUM),
    "NEURON_CUSTOM_SILU": _remove(_OPTIMUM),
    "NEURON_PLATFORM_TARGET_OVERRIDE": _review(
        "review NEURON_PLATFORM_TARGET_OVERRIDE: TorchNeuron derives the target and supports only trn2/trn3; "
        "remove it unless you compile for another host on purpose"
    ),
    "NEURON_COMPILE_CACHE_URL": _review(
        "review NEURON_COMPILE_CACHE_URL: the XLA-era compile cache is gone; TorchNeuron's persistent NEFF cache "
        "is TORCH_NEURONX_NEFF_CACHE_DIR (a shared path; S3 URLs unverified)"
    ),
    # torch_xla / PJRT runtime and debug
    "PJRT_DEVICE": _remove("{name} selected the torch_xla PJRT device; TorchNeuron needs no device variable (removed)"),
    "XLA_FLAGS": _remove(_XLA_DEBUG),
    "XLA_IR_DEBUG": _remove(_XLA_DEBUG),
    "XLA_HLO_DEBUG": _remove(_XLA_DEBUG),
    "XLA_USE_SPMD": _remove(
        "{name} switched torch_xla to SPMD; removed: shard with DTensor (DistributedConfig / parallelize_module)",
        todo=True,
    ),
    "XLA_DISABLE_FUNCTIONALIZATION": _remove(_XLA_DEBUG),
    "XLA_ALWAYS_ALLREDUCE": _remove(_XLA_DEBUG),
    "ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB": _remove(
        "{name} sized torch_xla gradient all-reduce buckets; removed: DDP takes bucket_cap_mb instead", todo=False
    ),
    "NEURON_FRAMEWORK_DEBUG": EnvVarAction(
        "replace",
        "TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS",
        "NEURON_FRAMEWORK_DEBUG -> TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS (keeps the compiler's artifacts, the "
        "NEFFs among them, after the run); they are now written under TORCH_NEURONX_DEBUG_DIR (default "
        "/tmp/neuron_backend, neff/ per proc_<rank>), not the working directory: set TORCH_NEURONX_DEBUG_DIR or "
        "update where this project looks for them",
        todo=True,
    ),
    "NEURONX_DUMP_TO": EnvVarAction(
        "replace",
        "TORCH_NEURONX_DEBUG_DIR",
        "NEURONX_DUMP_TO -> TORCH_NEURONX_DEBUG_DIR (per-rank fx/stablehlo/neff dumps); set "
        "TORCH_NEURONX_PRESERVE_COMPILATION_ARTIFACTS=1 to keep them after the run",
        todo=True,
    ),
    "TPU_NUM_DEVICES": _remove(_XLA_DEBUG),
    "GPU_NUM_DEVICES": _remove(_XLA_DEBUG),
    # new TorchNeuron variables: keep
    "TORCH_NEURONX_NEFF_CACHE_DIR": KEEP,
    "TORCH_NEURONX_DEBUG_DIR": KEEP,
    "HF_DEACTIVATE_ASYNC_LOAD": KEEP,
    "USE_TORCH_XLA": KEEP,
}

ENV_PREFIXES: dict[str, EnvVarAction] = {
    "XLA_": _remove(_XLA_DEBUG),
    # the torch_xla runtime's device and topology variables (TPU_NUM_DEVICES, TPU_CHIPS_PER_HOST_BOUNDS,
    # XRT_TPU_CONFIG ...), which torch_xla's Neuron plugin read as well
    "TPU_": _remove(_XLA_DEBUG),
    "XRT_": _remove(_XLA_DEBUG),
    "OPTIMUM_NEURON_": _remove(_OPTIMUM),
    "NEURON_RT_": _review(_RUNTIME_U),
    "FI_EFA_": KEEP,
    "TORCH_NEURONX_": KEEP,
}

#: Options inside NEURON_CC_FLAGS (matched on the option name before any "=" / value).
CC_FLAGS: dict[str, EnvVarAction] = {
    "--target": _remove("--target is derived by TorchNeuron from the host"),
    "--lnc": _remove("--lnc is derived by TorchNeuron from NEURON_LOGICAL_NC_CONFIG"),
    "--logical-nc-config": _remove("--logical-nc-config is derived by TorchNeuron from NEURON_LOGICAL_NC_CONFIG"),
    "--cache_dir": _remove("--cache_dir was the torch_xla persistent cache; TorchNeuron uses TORCH_NEURONX_NEFF_CACHE_DIR", todo=True),
    "--retry_failed_compilation": _remove("--retry_failed_compilation belonged to the XLA-era compile cache"),
    "--model-type": KEEP,
    "--distribution-strategy": KEEP,
    "--enable-saturate-infinity": KEEP,
    "--auto-cast": KEEP,
    "--auto-cast-type": KEEP,
    "-O1": KEEP,
    "-O2": KEEP,
    "-O3": KEEP,
}

#: Variables worth adding to launchers: name -> (value, message).
ADDITIONS: dict[str, tuple[str, str]] = {
    "HF_DEACTIVATE_ASYNC_LOAD": ("1", "disable transformers' threaded weight loader on Neuron hosts"),
    "USE_TORCH_XLA": ("0", "only when torch-xla cannot be uninstalled: keeps transformers off its XLA branches"),
}


def lookup(name: str) -> EnvVarAction | None:
    """The action for variable ``name`` (exact name, then the longest matching prefix), or None."""
    if name in ENV_VARS:
        return ENV_VARS[name]
    for prefix in sorted(ENV_PREFIXES, key=len, reverse=True):
        if name.startswith(prefix):
            return ENV_PREFIXES[prefix]
    return None


def message_for(name: str, action: EnvVarAction) -> str:
    """``action.message`` with ``{name}`` filled in."""
    return action.message.replace("{name}", name)


def cc_flag_actions(flags: str) -> list[tuple[str, EnvVarAction]]:
    """The options of a NEURON_CC_FLAGS value that are not plain keeps: [(option token, action)]."""
    found = []
    for token in flags.split():
        option = token.split("=", 1)[0]
        action = CC_FLAGS.get(option)
        if action is not None and action.action != "keep":
            found.append((token, action))
    return found
