"""Which words of a launch line are the values of the launcher's options.

``torchrun --nproc_per_node $NPROC train.py``: ``$NPROC`` is the value of ``--nproc_per_node``, not the command or
script the line runs. A value is read by its position, whatever its form (``8``, ``$NPROC``, ``${NPROC}``,
``{nproc}`` of a notebook, ``$(nproc)``): an option word written without ``=`` takes the next word as its value,
unless it is one of the options that take none (``FLAGS``).

``FLAGS`` are the options declared with no argument (argparse ``nargs=0``) by the launchers whose lines the rules
read: ``torchrun`` / ``python -m torch.distributed.run`` (torch 2.1-2.9), ``accelerate launch`` (0.29-1.x),
``deepspeed``, ``neuron_parallel_compile`` and the Python interpreter's own one-letter switches. An option missing
from the table is read as one that takes a value: the word after it is then not taken for the script (a script
named ``x.py`` is recognised by its name in any case).
"""

from __future__ import annotations

FLAGS = frozenset({
    # torchrun / python -m torch.distributed.run / torch.distributed.launch
    "--standalone", "--module", "-m", "--no-python", "--no_python", "--run-path", "--run_path",
    "--virtual-local-rank", "--virtual_local_rank", "--use-env", "--use_env", "-h", "--help",
    # accelerate launch
    "--cpu", "--debug", "--downcast-bf16", "--downcast_bf16", "--dynamo-use-dynamic", "--dynamo_use_dynamic",
    "--dynamo-use-fullgraph", "--dynamo_use_fullgraph", "--dynamo-use-regional-compilation",
    "--dynamo_use_regional_compilation", "--enable-cpu-affinity", "--enable_cpu_affinity",
    "--fp8-use-autocast-during-eval", "--fp8_use_autocast_during_eval", "--multi-gpu", "--multi_gpu",
    "--no-tpu-cluster", "--no_tpu_cluster", "--quiet", "-q", "--same-network", "--same_network", "--tpu",
    "--tpu-cluster", "--tpu_cluster", "--tpu-use-sudo", "--tpu_use_sudo", "--use-deepspeed", "--use_deepspeed",
    "--use-fsdp", "--use_fsdp", "--use-megatron-lm", "--use_megatron_lm", "--use-parallelism-config",
    "--use_parallelism_config", "--ipex", "--use_xpu", "--use-xpu",
    # deepspeed
    "--no_local_rank", "--no-local-rank", "--no_ssh_check", "--autotuning", "--force_multi", "--save_pid",
    "--enable_each_rank_log", "--bind_cores_to_rank", "--elastic_training", "--no_ssh",
    # python
    "-u", "-B", "-O", "-OO", "-s", "-S", "-E", "-I", "-b", "-bb", "-d", "-i", "-v", "-P", "-R",
})


def option_values(words: list[str]) -> set[int]:
    """The indices of the words of a command (unquoted words, in order) that are the value of the option before
    them: an option written without ``=`` that takes a value (not in ``FLAGS``), followed by a word that is not an
    option itself. ``["torchrun", "--nproc_per_node", "$NPROC", "train.py"]`` -> ``{2}``."""
    values: set[int] = set()
    for index, word in enumerate(words[:-1]):
        if index in values or not word.startswith("-") or word in ("-", "--") or "=" in word or word in FLAGS:
            continue
        following = words[index + 1]
        if not following.startswith("-") and not following.endswith((".py", ".sh", ".sbatch", ".slurm")):
            values.add(index + 1)
    return values
