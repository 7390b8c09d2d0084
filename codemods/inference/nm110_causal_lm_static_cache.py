"""NM110 causal-lm-static-cache: inference ``NeuronModelForCausalLM`` -> ``AutoModelForCausalLM`` + static-cache generate.

What it does:

* ``NeuronModelForCausalLM.from_pretrained(id, export=True, batch_size=, sequence_length=, num_cores=,
  auto_cast_type=, tensor_parallel_size=, **compiler_args, **input_shapes)`` (generations 1-2, 0.0.8-0.3.0)
  and ``NeuronModelForCausalLM.export(id, neuron_config, ...)`` with ``neuron_config =
  NeuronModelForCausalLM.get_neuron_config(id, batch_size=, sequence_length=, tensor_parallel_size=)``
  (0.4.x), plus the per-architecture classes of ``optimum.neuron.models.inference.auto_models``, become
  ``AutoModelForCausalLM.from_pretrained(id, dtype=..., device_map=<device>)`` followed by a generation
  setup that keeps what the compiled static shapes meant:

  - ``cache_implementation="static"`` and ``max_cache_len=<sequence_length>`` (it bounded prompt plus
    generated tokens);
  - ``compile_config=CompileConfig(backend="neuron", dynamic=False, mode="default")`` - exactly what
    transformers 5.24 picks on a neuron device; in the portable device style it is ``None`` off-neuron
    (see docs/device-expression.md);
  - a ``todo`` with the compiled batch size and the padding side (stock batched generation wants left
    padding, optimum NxD wanted right padding);
  - ``model.requires_grad_(False)``: optimum's compiled model ran inference only and its outputs never required
    grad; a stock model's forward outputs (``model(ids).logits``) do, and ``.numpy()`` raises on them
    (``generate()`` runs under no_grad itself). Not for a model the file only saves (``_inference_only.py``).

* A tensor-parallel degree (``num_cores`` <= 0.3.0, ``tensor_parallel_size``, ``tp_degree``, a literal > 1 or
  a runtime value) becomes ``distributed_config=DistributedConfig(tp_size=N)`` instead of ``device_map`` (they
  are mutually exclusive) only when a file of the project (a shell launcher, a YAML job, a Dockerfile) runs the
  script under ``torchrun`` / ``torch.distributed.run``: transformers then builds the ("pp", "dp_replicate",
  "fsdp", "tp") DeviceMesh and initialises torch.distributed itself, and a ``todo`` says to launch
  ``torchrun --nproc_per_node N``. A non-literal degree (``args.num_cores``) there gives
  ``distributed_config=DistributedConfig(tp_size=x), device_map=<device> if x == 1 else None``.
* Without such a launcher (a plain ``python x.py``, a SageMaker job script; a notebook cell is never launched
  by torchrun) the load stays on one device (``device_map``) with a ``todo``: "to shard across N NeuronCores,
  launch with torchrun --nproc_per_node N and pass distributed_config=DistributedConfig(tp_size=N)" (a run-time
  degree, ``args.num_cores``: ``--nproc_per_node <num_cores>`` in the command, the placeholder named after the
  value and the argparse flag of the file that defines it, the expression only in the Python part). A
  DistributedConfig load in a single process raises (``failed to initialize torch.distributed``), and
  optimum's export used the N cores from one process. An absent degree gets a ``todo``: optimum used 2 cores
  (<= 0.0.17) or all visible cores.
* ``auto_cast_type`` -> ``dtype`` (``"bf16"`` -> ``torch.bfloat16`` ...; a run-time value such as ``args.dtype``
  or an environment read, ``os.environ.get("AUTO_CAST_TYPE", "bf16")``, or any side-effect-free expression of
  such reads and literals, ``"bf16" if args.bf16 else "fp32"`` / ``args.dtype or "bf16"``, becomes ``dtype={"bf16": torch.bfloat16, ...}.get(args.dtype, "auto")``: without ``dtype=`` a bf16 checkpoint
  would load bf16 whatever was asked), ``torch_dtype`` -> ``dtype``, ``use_auth_token`` -> ``token``; compiler /
  export-only kwargs are dropped (reported ``fixed``); those that changed how the compiled decoder ran - its shapes
  (``n_positions``, ``max_context_length``), its batching (``continuous_batching``, ``dynamic_batch_size``), its
  parallelism (``local_ranks_size``, ``start_rank_id`` other than 0), ``speculation_length``, ``capacity_factor``,
  ``neuron_config`` - are dropped each with its own ``todo`` (what it did, what to do), never in that ``fixed``
  list (``BEHAVIOUR_ARGS``, ``InferenceRule.sort_dropped``, shared by every NM1xx load rule).
* the keywords given to a folded ``get_neuron_config`` are export arguments like those of
  ``from_pretrained(export=True, ...)`` (same mapping); the "<argument> not given" notes appear only when no source
  gives it: an unreadable ``**kw`` or extra positional argument of the getter, or a neuron config the rule cannot
  read, gets a todo to take its settings over by hand instead.
* ``**NAME`` splats: a dict literal bound once in the file, or a dict of constants bound once in a project
  module it is imported from (``from app.config import SHAPES``), is expanded and sorted like inline keywords (the
  dict stays in that module); a key of such a dict that no table knows (``prompt_len``) is optimum's: dropped,
  with a ``todo`` (the stock ``from_pretrained`` raises TypeError on it). A ``*args`` / ``**NAME`` splat nothing
  resolves (``**vars(args)``, ``**kwargs``, a dict changed in place) leaves the load, its import and the whole file
  on optimum-neuron with a ``todo`` naming the splat: a stock call would get the Neuron export keys it may carry
  (``auto_cast_type``, ``num_cores``, ``batch_size`` ...) and raise TypeError.
* an inline keyword of a load that no table sorts (``DECODER_SORTED``: optimum's export and runtime arguments,
  the stock ``from_pretrained`` / config keywords, which are passed on) leaves the file on optimum-neuron with a
  ``todo`` naming it (``InferenceRule._unsorted_key_loads``): kept in the stock call it would reach the model's
  ``__init__`` (TypeError), dropped, what it did in the export would be lost. A round-trip load (below) drops
  optimum's keywords with a todo each (a degree with the torchrun / DistributedConfig route).
* the inputs follow the model to the device, as in NM120 (``tokenizer(..., return_tensors="pt")`` assigned in
  the scope of a ``model.generate`` call gets ``.to(model.device)``, also where the model is stored on ``self``,
  returned or passed on); an input the rule cannot move gets a todo only at a forward call: ``generate`` moves
  CPU inputs to the model's device itself (transformers 5); ``tok.apply_chat_template(...,
  return_tensors="pt")`` gets ``return_dict=False``: transformers 5 returns a BatchEncoding by default.
* batched right-padded prompts: where ``<model>.generate`` of a rewritten load gets the output of
  ``tokenizer(<list of prompts>, padding=True / "longest" / "max_length")`` (in the same function, or returned by a
  function of the file it calls) and the file never sets ``padding_side = "left"``, ``tokenizer.padding_side =
  "left"`` is added right after the one statement that creates that tokenizer (``X = AutoTokenizer.from_pretrained
  (...)``, ``self.tok = ...``); a tokenizer created more than once or elsewhere, or a file that sets another
  padding side, gets a todo at the tokenizer call instead. optimum's decoder padded right; stock decoder-only
  generation wants left padding (right-padded, the shorter prompts generate after their pad tokens). A single
  prompt string, an unpadded batch, or an encoder model is left alone.
* reads of what the compiled model carried (``model.neuron_config.batch_size`` 0.1+, ``model.config.neuron[
  "sequence_length"]`` 0.0.x, the TP degree, ``auto_cast_type``) on a variable assigned once from the rewritten
  call become the literal it was exported with - for a compiled-folder load rewritten to its source (below), the
  literals of the one export that writes the folder; any other field (or a non-literal shape) gets a todo: a stock
  model has neither attribute. A model bound more than once in its scope (a function, the module; ``self.<attr>``
  in a class), each time by such a load - the cache idiom ``if os.path.isdir(compiled): m = X.from_pretrained(
  compiled) else: m = X.from_pretrained(id, export=True, ...); m.save_pretrained(compiled)`` - has the fields all
  its loads give alike (rtD D6; before, such reads were left and raised AttributeError).
* a notebook is one program (its cells run in one kernel, with one set of requirements): an export in one cell,
  its ``save_pretrained`` in another and a reload of that folder in a third are linked as in a .py file, and what
  keeps one cell on optimum-neuron (a load whose source is not known ...) keeps every cell, each with a todo
  naming that use (``codemods/inference/_notebook.py``; before, the export cell was ported and its import removed
  while a later cell still loaded with the Neuron class: NameError, rt8Q-02).
* ``from_pretrained(path)`` without ``export=`` (or ``export=False``) loads Neuron-compiled artifacts, which
  transformers cannot read: rewritten, the load would fail, so the whole file stays on optimum-neuron (its loads
  and import as they are, as for a kept ``get_neuron_config`` below) with a ``todo`` at the load: load the source
  checkpoint (``checkpoint_id`` in ``<path>/neuron_config.json`` from optimum-neuron 0.2.0, which also records
  sequence_length/batch_size/tp_degree; ``_name_or_path`` in an older export's config.json). Where the project
  names that checkpoint - a shell script, Dockerfile, Makefile recipe or notebook ``!`` line / ``%%bash`` cell runs
  ``optimum-cli export neuron --model <id> ... <folder>``, or a Python file of the project saves
  ``NeuronModelForCausalLM.from_pretrained(<id>, export=True, <constant shapes>)`` to it (``save_pretrained``,
  chained or through a name) - and the load reads that folder, written as a string or
  as ``os.environ.get(NAME, "<folder>")`` / ``os.getenv(NAME, "<folder>")`` (its default, as the shell's
  ``${NAME:-<folder>}`` is read), or ``os.path.join`` / ``Path`` / an f-string of those, at the load, in a
  module-level name bound once to one, or in such a name of a project module the file imports it from
  (``from paths import COMPILED_DIR``, on both sides; a name bound twice or at run time stays unknown), see
  ``_compiled_exports.py`` -
  the load is rewritten completely: it loads ``<id>`` with the shapes and dtype of that command, and a tokenizer /
  processor load of the same folder in the file (``AutoTokenizer.from_pretrained(COMPILED_DIR)``) loads ``<id>``
  too (the export copied its files there; the migrated project no longer writes the folder). A path an
  environment variable overrides keeps the override: the getter stays with ``<id>`` as its default
  (``os.environ.get("MODEL_DIR", "<id>")``, inlined at the load for a name bound to it), with a ``todo`` that a
  deployment setting the variable must now name a stock checkpoint, not a compiled folder. Otherwise the
  todo says which link is missing: a path it cannot read, no readable export command writing that folder, or
  several naming different checkpoints or shapes. An ``export=`` that cannot be read (``export=args.export``, a
  ``**kwargs``) is rewritten, keeping ``path``, with a ``todo`` summary (not ``fixed``) saying the same.
* the compiled-folder round trip (all or none, one decision for the project: ``round_trip`` in
  ``_compiled_exports.py``): where every decoder compiled-folder load of the project is held only because its path
  is known at run time (``args.model_dir``, a function parameter, ``cfg["dir"]``, ``os.environ["X"]``), every decoder
  compiled folder is written by a saved Python export this rule rewrites or by a decoder ``optimum-cli export
  neuron`` command NM406 replaces by a stock step writing the same folder (fxL: a shell script, Makefile,
  Dockerfile or notebook command whose flags all have a known meaning, see NM406; a decoder command it cannot
  replace, one of unknown kind - no ``--task``/``--num_cores`` and no load naming its folder -, or a command string
  of a Python file or YAML job keeps everything as it is, while an encoder, seq2seq or diffusion export does not
  count), no export kept for a reason of its own - checked by migrating each file with the round trip -, no load of
  a readable folder that no export writes or that several exports write differently, such as a Hub compiled repo (a
  readable folder one export writes is loaded from its checkpoint instead, as below), no such path has a readable
  default (argparse ``default=``, a parameter default, what a caller of the file passes) naming a folder no export
  writes, each read of the loaded model's compiled config has one literal from every export, and each loader file
  then drops optimum-neuron: the exports are rewritten (the migrated ``save_pretrained`` writes a stock checkpoint
  whose config.json / generation_config.json carry the dtype, ``cache_implementation="static"`` and
  ``max_cache_len``; a todo at the save says so and names the loader files; the stock step of a CLI export saves
  the same, and the tokenizer) and each such load becomes
  ``AutoModelForCausalLM.from_pretrained(<path>, device_map=<device>)`` (no dtype: transformers 5.24 loads the
  saved config's dtype by default) + ``generation_config.update(compile_config=...)`` (compile_config is not saved),
  with a todo: delete the folder and re-run the export first (a folder written by the old export holds
  Neuron-compiled artifacts; a cache idiom that exports only when the folder is missing would load it), and the
  export's tensor-parallel degree when it gave one. If any condition fails, nothing changes (the todos below).
* a name bound to the Neuron class on one branch and to its stock target on the other (``if SMOKE: from
  transformers import AutoModelForCausalLM as M else: from optimum.neuron import NeuronModelForCausalLM as M``, or
  try/except) is a Neuron load too: its ``M.from_pretrained(...)`` sites get the same rewrite (device placement,
  static-cache generation config: valid for the stock class on either branch), and without ``export=True`` a
  ``todo``, not ``fixed``, that on the Neuron branch the path named a compiled folder;
* a use of the class that stays in the code and that the stock class lacks (``X.get_neuron_config(...)`` whose
  result is read anywhere but as the ``neuron_config`` of ``X.export``, an ``X.export(...)`` with no model id this
  rule can see, any other ``X.<optimum attribute>``) keeps the whole file on optimum-neuron: renamed, it would be
  ``AutoModelForCausalLM.get_neuron_config`` (AttributeError). The file's loads and import stay as they are, and a
  ``todo`` at that use says why and what to change (for get_neuron_config: read the shapes from the values passed
  to it, so that NM110 can fold it on the next run). Reads of the result's ``batch_size`` / ``sequence_length`` /
  ``tp_degree`` that were given to get_neuron_config as a number or a name / attribute bound at most once in the
  file (``args.batch_size``) do not keep it: they become that value, and the getter is folded.
* a load that compiles the model (``export=True``, or ``<class>.export(...)``) whose result the file saves or
  pushes (``save_pretrained`` / ``push_to_hub``: a compiled folder or Hub repo) keeps the whole file on
  optimum-neuron while another project file still loads Neuron-compiled folders with optimum-neuron after this
  run (a ``Neuron*.from_pretrained`` without a literal ``export=True`` in a file that still imports
  optimum.neuron once migrated; which folder it reads is not linked, so any such load of the same kind counts - a
  decoder, seq2seq, diffusion, sentence-transformers or encoder class, or a class of unknown kind): migrated, this
  file would write ordinary weights that that load rejects ("The specified directory does not contain a neuron
  model"). A ``todo`` at the load names the file to port first, one at each save / push says it is kept
  (shared by the NM1xx load rules, ``InferenceRule._kept_producer_loads``; rt5H D1);
* left alone: the training ``NeuronModelForCausalLM`` (``optimum.neuron.models.training``) belongs to the
  training family; a call that is not the right-hand side of an assignment gets the generation setup and
  ``requires_grad_(False)`` as ``todo`` notes instead of code; NxDNeuronConfig fields other than the shapes (continuous batching, on-device
  sampling, speculation) are reported, not mapped.

Why:

optimum-neuron's decoder class compiled the model ahead of time for one batch size and one sequence length
(prompt plus generated tokens), optionally sharded over several NeuronCores, and ran its own generation loop
over a static KV cache. On TorchNeuron the stock transformers model is loaded onto the neuron device and
``generate`` compiles its forward pass with ``torch.compile(backend="neuron")``; a static cache of
``max_cache_len`` tokens keeps the shapes fixed, so it compiles once, as the exported model did. Tensor
parallelism is transformers' own (``DistributedConfig(tp_size=N)`` under ``torchrun``), and a compiled folder
holds NEFFs that transformers cannot load.

Before::

    from optimum.neuron import NeuronModelForCausalLM

    model = NeuronModelForCausalLM.from_pretrained(
        "meta-llama/Llama-3.2-1B", export=True, batch_size=1, sequence_length=2048, num_cores=2, auto_cast_type="bf16"
    )

After (portable device style; ``run.sh`` in the project runs the script with ``torchrun --nproc_per_node 2``)::

    import torch
    from transformers import AutoModelForCausalLM, CompileConfig, DistributedConfig

    # neuron-migrate: tensor parallel degree 2: launch with `torchrun --nproc_per_node 2` ...
    # neuron-migrate: compiled for batch_size=1: ...
    model = AutoModelForCausalLM.from_pretrained(
        "meta-llama/Llama-3.2-1B", dtype=torch.bfloat16, distributed_config=DistributedConfig(tp_size=2)
    )
    model.requires_grad_(False)
    model.generation_config.update(cache_implementation="static", max_cache_len=2048, compile_config=...)

Safety: needs-review. The load and the generation setup are mechanical; a reviewer checks the batch, padding
and parallelism ``todo`` notes and the compiled-folder note.

References:

* https://huggingface.co/docs/transformers/kv_cache
* https://huggingface.co/docs/transformers/perf_infer_gpu_multi
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Callable, cast

import libcst as cst

from codemods._lib.cst import keyword_arg, source_of, with_commas
from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE
from codemods._tables.inference_arguments import DTYPES as DTYPES_TABLE
from codemods._tables.inference_symbols import OPTIMUM_RUNTIME_ARGS, decoder_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import (
    STOCK_LOAD_ARGS,
    Arguments,
    InferenceRule,
    dtype_for,
    neuron_argument_note,
    run_time_value,
    torch_dtype_attr,
)
from codemods.inference._compiled_exports import (
    COMPILED_EXPORTS,
    COMPILED_FOLDER_USES,
    INTEGER_KEYS,
    MODEL_ID_KEYWORDS,
    MODULE_ENV_FOLDERS,
    MODULE_FOLDERS,
    CompiledFolderLoads,
    RoundTrip,
    call_key,
    export_kind,
    round_trip,
)
from codemods.inference._inference_only import INFERENCE_ONLY_NOTE, inference_only
from codemods.inference._module_dicts import MODULE_DICTS
from codemods.inference._notebook import file_path
from codemods.inference._padding import left_padding
from migrate.facts import ProjectFact, ProjectFacts
from migrate.filekinds import FileKind
from migrate.rule import Safety, dotted_name
from migrate.snippets import parse_expression, parse_statement

DECODERS = decoder_moves()
KEEP = frozenset({
    "token", "revision", "cache_dir", "force_download", "local_files_only", "trust_remote_code", "subfolder",
    "config", "attn_implementation", "device_map", "low_cpu_mem_usage", "variant",
})
DROP = frozenset({
    "export", "task", "instance_type", "load_weights", "compiler_workdir", "disable_neuron_cache",
    "inline_weights_to_neff", "optlevel", "dynamic_batch_size", "auto_cast", "neuron_config", "n_positions",
    "allow_flash_attention", "fuse_qkv", "on_device_sampling", "continuous_batching", "max_topk", "output_logits",
    "speculation_length", "start_rank_id", "local_ranks_size", "capacity_factor", "glu_mlp", "n_active_tokens",
    "max_context_length", "disable_fast_relayout", "disable_fallback", "library_name", "file_name", "model_save_dir",
})
TP_KEYS = ("num_cores", "tensor_parallel_size", "tp_degree")
#: the keywords of a decoder load this rule sorts (kept, mapped, or dropped with its todo); a load with any other
#: keeps the file on optimum-neuron (``unsorted_keys_keep_file``): kept in the stock call it would reach the
#: model's ``__init__`` (TypeError), dropped, what it did in the export would be lost
DECODER_SORTED = (KEEP | DROP | frozenset(TP_KEYS) | STOCK_LOAD_ARGS | frozenset(OPTIMUM_RUNTIME_ARGS)
                  | {"use_auth_token", "torch_dtype", "dtype", "auto_cast_type", "batch_size", "sequence_length"})
TORCHRUN_TARGET = re.compile(r"[\w./${}-]+\.py\b")


def torchrun_targets(text: str) -> frozenset[str] | None:
    """File names of the scripts a launch file runs under ``torchrun`` / ``torch.distributed.run`` (the only
    launch that gives a DistributedConfig load the process group it needs; backslash continuations joined)."""
    names: set[str] = set()
    for line in text.replace("\\\n", " ").splitlines():
        code = line.split("#", 1)[0]
        for launcher in ("torchrun", "torch.distributed.run"):
            if launcher in code:
                names.update(posixpath.basename(match) for match in TORCHRUN_TARGET.findall(code.split(launcher, 1)[1]))
    return frozenset(names) or None


TORCHRUN_LAUNCHES = ProjectFact("inference.torchrun-launches",
                                frozenset({FileKind.SHELL, FileKind.DOCKERFILE, FileKind.YAML, FileKind.PYTHON,
                                           FileKind.NOTEBOOK}),
                                ("torchrun", "torch.distributed.run"), torchrun_targets)


def torchrun_launched(project: ProjectFacts, name: str) -> bool:
    """Whether a file of the project runs the script ``name`` under torchrun."""
    return any(name in names for names in project.of(TORCHRUN_LAUNCHES.name).values())
#: optimum's ``auto_cast_type`` strings, as a dict expression for the emitted run-time choice
AUTO_CAST_DTYPES = "{" + ", ".join(f'"{name}": {dtype}' for name, dtype in DTYPES_TABLE.items()) + "}"
#: fields of the compiled model's config (``model.neuron_config.<f>`` 0.1+, ``model.config.neuron["<f>"]`` 0.0.x) that
#: hold a shape or degree given at export: a read becomes that literal
COMPILED_FIELDS = {"batch_size": "batch_size", "sequence_length": "sequence_length", "num_cores": "tp",
                   "tp_degree": "tp", "tensor_parallel_size": "tp", "auto_cast_type": "auto_cast_type"}


class CausalLMStaticCache(CompiledFolderLoads, InferenceRule):
    """Inference NeuronModelForCausalLM -> AutoModelForCausalLM with a static cache, max_cache_len and CompileConfig."""

    id = "NM110"
    name = "causal-lm-static-cache"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = DECODERS
    legacy_modules = ("optimum.neuron",)
    places_model = True
    generate_moves_inputs = True  # decoder-only: generate moves CPU inputs to the model's device
    #: MODULE_DICTS: **NAME of a project module's dict; MODULE_FOLDERS: a compiled folder's name imported from one
    # + the optimum.neuron files: a kept compiled-folder load elsewhere keeps this file's export (rt5H D1);
    # COMPILED_FOLDER_USES: the folders the project's Python decoder exports save (read as the cli's outputs)
    # MODULE_ENV_FOLDERS: the environment variable that overrides such a name (a load of its source keeps it)
    facts = (TORCHRUN_LAUNCHES, COMPILED_EXPORTS, MODULE_DICTS, MODULE_FOLDERS, MODULE_ENV_FOLDERS,
             OPTIMUM_NEURON_CODE, COMPILED_FOLDER_USES)
    opaque_splat_keeps_file = True  # a splat nothing resolves: the file stays on optimum-neuron
    unsorted_keys_keep_file = True  # a keyword DECODER_SORTED does not hold: the file stays on optimum-neuron

    def unsorted_keys(self, arguments: Arguments) -> list[str]:
        return [key for key, _ in arguments.keywords if key not in DECODER_SORTED and key not in arguments.neuron_keys]

    def prepare(self, module: cst.Module) -> None:
        """Find ``nc = X.get_neuron_config(...)`` consumed only by ``X.export(id, nc)``: expanded, then removed."""
        self._neuron_configs: dict[str, cst.Call] = {}
        reads = self._getter_reads(self.gathered)
        self._getter_values = {read: value for name in self._folded_getters(self.gathered)
                               for read, value in reads[name].items()}
        for name, (statement, call) in self._folded_getters(self.gathered).items():
            self._neuron_configs[name] = call
            self.remove_statement(statement)
        self._compiled: dict[str, dict[str, object]] = {}  # model variable -> the literal shapes it was exported with
        for name, statements in self.gathered.assignments.items():
            values = [cast(cst.Assign, statement.body[0]).value for statement in statements]  # `name = value`
            only = values[0] if len(values) == 1 else None
            if isinstance(only, cst.Call) and self._method(only) in ("from_pretrained", "export"):
                # a compiled-folder load rewritten to the checkpoint its folder was exported from (``_recovered``:
                # one export of the project, certain) carries that export's shapes (rt8Q-13)
                self._compiled[name] = self._shapes_of(only)
        # a model bound more than once in one scope, each time by a load of this rule (the cache idiom: ``if
        # os.path.isdir(d): m = X.from_pretrained(d) else: m = X.from_pretrained(id, export=True, ...)``): the
        # fields every binding gives alike, per read of its compiled config (rtD D6)
        self._scoped = _scoped_holders(module, lambda call: self._method(call) in ("from_pretrained", "export"),
                                       self._shapes_of)
        self._note_round_trip_saves()
        self._left_padded = self._plan_left_padding(module)
        self._config_holders: set[cst.CSTNode] = set()  # `m.neuron_config` / `m.config.neuron` nodes read through
        self._fstrings: list[str] = []  # the openings (f", f') of the f-strings being visited

    def _plan_left_padding(self, module: cst.Module) -> bool:
        """``tokenizer.padding_side = "left"`` after the tokenizer is created, where a batch that tokenizer pads
        (``tokenizer(<list>, padding=True)``) reaches ``generate`` of a rewritten model (else a todo at the
        tokenizer call); True when the file sets it (already, or now)."""
        models = {dotted_name(assign.targets[0].target) for assign in self.gathered.assigns
                  if len(assign.targets) == 1 and isinstance(assign.value, cst.Call)
                  and self.is_target_call(assign.value)}
        models.discard("")
        added: set[int] = set()
        already, paddings = left_padding(module, models)
        if self.ctx.namespace is not None and not already:  # a notebook: another cell may set it (one kernel)
            text = re.sub(r"(?m)^\s*# neuron-migrate:.*$", "", self.ctx.namespace.trigger_text)
            if re.search(r"""padding_side\s*=\s*["']left["']""", text):
                return True
        for padding in paddings:
            call = source_of(padding.tokenizer_call.func)
            if padding.set_after is not None:
                if id(padding.set_after) not in added:
                    added.add(id(padding.set_after))
                    self._after.setdefault(id(padding.set_after), []).append(
                        parse_statement(f'{padding.tokenizer}.padding_side = "left"\n'))
                    self.fixed(padding.set_after, f'{padding.tokenizer}.padding_side = "left": {padding.model}.generate '
                               f"gets prompts batched by {call}(..., padding=...), and stock decoder-only generation "
                               "wants left padding (optimum's decoder padded right; right-padded, the shorter prompts "
                               "generate after their pad tokens)")
            else:
                self.todo_at_call(padding.tokenizer_call, f"{padding.model}.generate gets the prompts this call pads, on "
                                  "the tokenizer's padding side (optimum's decoder padded right); stock decoder-only "
                                  f'generation wants left padding: set {padding.tokenizer}.padding_side = "left" '
                                  f"where the tokenizer is created ({padding.todo})")
        return already or bool(added)

    def _shell_degree(self, node: cst.BaseExpression) -> tuple[str, str]:
        """The tensor-parallel degree as a shell word for ``torchrun --nproc_per_node``, and what a placeholder
        stands for (rt5H D10): a literal as it is; ``args.num_cores`` -> ``<num_cores>`` (" (<num_cores>: the value
        of args.num_cores, the script's --num_cores flag)"), the flag named when an ``add_argument`` of the file
        defines it; a variable -> ``<name>``. The expression itself stays in the Python part of a note."""
        text = source_of(node)
        if isinstance(self.literal(node), int):
            return text, ""
        name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) \
            else "tp_degree"
        flag = None
        if isinstance(node, cst.Attribute):
            for call in self.gathered.calls:
                if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_argument"):
                    continue
                flags = [arg.value.evaluated_value for arg in call.args if arg.keyword is None
                         and isinstance(arg.value, cst.SimpleString)
                         and str(arg.value.evaluated_value).startswith("--")]
                dest = next((arg.value.evaluated_value for arg in call.args if arg.keyword is not None
                             and arg.keyword.value == "dest" and isinstance(arg.value, cst.SimpleString)), None)
                if flags and (dest or str(flags[0])[2:].replace("-", "_")) == name:
                    flag = str(flags[0])
                    break
        return f"<{name}>", f" (<{name}>: the value of {text}" + (f", the script's {flag} flag)" if flag else ")")

    def _padding_advice(self) -> bool:
        """Whether the batch note should add the left-padding advice: the file (a notebook: all its cells) has a
        tokenizer and sets no ``padding_side="left"`` anywhere (a keyword of the tokenizer's load, an attribute)."""
        if self._left_padded:
            return False
        text = self.ctx.namespace.trigger_text if self.ctx.namespace is not None else self.ctx.source
        text = re.sub(r"(?m)^\s*# neuron-migrate:.*$", "", text)  # the tool's own notes are no evidence
        if re.search(r"""padding_side\s*=\s*["']left["']""", text):
            return False
        return bool(re.search(r"[Tt]okenizer|apply_chat_template", text))

    def _folded_getters(self, gathered) -> dict[str, tuple[cst.SimpleStatementLine, cst.Call]]:
        """``nc = X.get_neuron_config(...)`` lines whose ``nc`` is read only as the neuron config of ``X.export``."""
        exports = set()
        for call in gathered.calls:
            if self._method(call) == "export":
                config = _neuron_config_arg(call)
                if isinstance(config, cst.Name):
                    exports.add(config.value)
        getters: dict[str, tuple[cst.SimpleStatementLine, cst.Call]] = {}
        for name, statements in gathered.assignments.items():  # `name = ...` lines, in file order
            for statement in statements:
                value = cast(cst.Assign, statement.body[0]).value  # the statement is `name = value`
                if isinstance(value, cst.Call) and self._method(value) == "get_neuron_config":
                    getters[name] = (statement, value)
        reads = self._getter_reads(gathered)
        return {name: getter for name, getter in getters.items()
                if name in exports and name in reads and gathered.name_counts.get(name, 0) == 2 + len(reads[name])}

    def _getter_reads(self, gathered) -> dict[str, dict[int, cst.BaseExpression]]:
        """Per ``nc`` bound to a ``get_neuron_config`` call: its reads ``nc.batch_size`` / ``.sequence_length`` /
        ``.tp_degree`` (id -> the value given to get_neuron_config for that field), for the names all of whose
        attribute reads are such fields given as a number or a plain name / attribute (``args.batch_size``, its
        root bound at most once in the file): the read becomes that value, as the shapes are read from it."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return {}
        attributes = self.ctx.memo("inference.nm110.name-attributes", lambda: _name_attributes(module))
        out: dict[str, dict[int, cst.BaseExpression]] = {}
        for name, statements in gathered.assignments.items():
            value = cast(cst.Assign, statements[0].body[0]).value  # the statement is `name = value`
            if len(statements) != 1 or not (isinstance(value, cst.Call)
                                            and self._method(value) == "get_neuron_config"):
                continue
            given = {arg.keyword.value: arg.value for arg in value.args if arg.keyword is not None}
            values: dict[int, cst.BaseExpression] = {}
            for read in attributes.found.get(name, []):
                field = next((key for key in GETTER_FIELDS.get(read.attr.value, ()) if key in given), None)
                if field is None or not _stable(given[field], attributes):
                    break
                values[id(read)] = given[field]
            else:
                out[name] = values
        return out

    def rewrites_class_use(self, node: cst.Attribute, call: cst.Call | None, gathered) -> bool:
        """``X.export(id, ...)`` becomes ``from_pretrained``; ``X.get_neuron_config(...)`` is folded into it only
        when its result is read nowhere else (any other use stays, and the stock class has neither)."""
        if call is None or self._method(call) is None:
            return False
        if node.attr.value == "export":
            return any(a.keyword is None and not a.star for a in call.args) or any(
                a.keyword is not None and a.keyword.value in MODEL_ID_KEYWORDS for a in call.args)
        if node.attr.value == "get_neuron_config":
            return any(folded is call for _, folded in self._folded_getters(gathered).values())
        return False

    def kept_stock_call(self, call: cst.Call, gatherer) -> str | None:
        """A compiled load (``_loads_compiled``) whose source checkpoint the project does not name: rewritten, it
        could not run. The reason says which link is missing: a path this rule cannot read, no readable export
        command writing that folder, or several naming different checkpoints or shapes."""
        if not self._loads_compiled(call) or self._recovered(call) is not None:
            return None
        head = "loads Neuron-compiled artifacts (no export=True) that stock libraries cannot load, and "
        trip = self._round_trip_load(call)
        if trip is not None:
            unread = self._unmapped_reads(call, gatherer, trip)
            if unread is None:
                return None
            return (head + f"it reads the compiled config of the model ({unread}), which a stock model does not have "
                    f"and which the exports of {trip.exporter_names()} do not give as one constant: read it from the "
                    "values the export was given instead, then run neuron-migrate again")
        folder = self._folder(call)
        if folder is None and (export := self._same_expression_export(call, gatherer)) is not None:
            path_text = source_of(self._load_path(call))
            if self._bound_once_beside_save(call, gatherer):
                # the cache idiom (``if os.path.isdir(d): load(d) else: export, save(d)``): provably one folder, so
                # what keeps the pair is something else (rtD D6): the round trip rewrites both once nothing does
                return (head + f"its path `{path_text}` is the folder this file's export `{export}` saves to (the "
                        "same name, bound once in this scope): the pair is rewritten together (the save then writes "
                        "a stock checkpoint with the dtype and static cache, which this load reads) once nothing "
                        "else keeps it: resolve the other neuron-migrate notes of this file (the export's arguments, "
                        "reads of the compiled config) and of the project's other compiled-folder loads, then run "
                        "neuron-migrate again")
            return (head + f"its path `{path_text}` is the folder this file's export `{export}` saves to "
                    f"(`save_pretrained({path_text})`), which this rule cannot prove is the same folder at run time: "
                    "if it is, load that export's checkpoint here with export=True and the export's static shapes "
                    "(the checkpoint the folder was compiled from)")
        if folder is None and (elsewhere := self.same_expression_elsewhere(call)) is not None:
            return head + elsewhere
        if folder is None:
            path = next(arg.value for arg in call.args if arg.keyword is None or arg.keyword.value in MODEL_ID_KEYWORDS)
            return (head + f"its path `{source_of(path)}` is no folder this rule can read (a string, "
                    "os.environ.get(NAME, \"<folder>\") / os.getenv(NAME, \"<folder>\"), or os.path.join / Path / an "
                    "f-string of those, at the load or bound once at module level here or in a project module), so the "
                    "checkpoint it was compiled from cannot be matched to an export of this project (an optimum-cli "
                    "export neuron command, or a saved Python export)")
        if writers := self._writers(folder):
            return (head + f"the exports of this project (optimum-cli export neuron commands, saved Python exports) "
                    f"that write `{folder}` {self.writers_disagree(writers)}")
        return (head + "the checkpoint they were compiled from was not found: no optimum-cli export neuron command "
                f"this rule can read (in a shell script, Dockerfile or Makefile of the project) and no saved Python "
                f"export with constant arguments writes `{folder}`")

    def _bound_once_beside_save(self, call: cst.Call, gatherer) -> bool:
        """The path of ``call`` is a name bound once in its scope, and a ``save_pretrained(<that name>)`` of the
        same scope writes it: one folder at run time."""
        path = self._load_path(call)
        scopes = gatherer.call_scopes.get(id(call), [])
        if not isinstance(path, cst.Name) or not scopes:
            return False
        if gatherer.values.get(id(scopes[-1]), {}).get(path.value) is None:
            return False
        return any(isinstance(other.func, cst.Attribute) and other.func.attr.value == "save_pretrained"
                   and other.args and isinstance(other.args[0].value, cst.Name)
                   and other.args[0].value.value == path.value
                   and (gatherer.call_scopes.get(id(other)) or [None])[-1] is scopes[-1] for other in gatherer.calls)

    def kept_use_advice(self, attribute: str) -> str:
        if attribute == "from_pretrained":
            return ("load the source checkpoint instead: its id is in the compiled folder (`checkpoint_id` in its "
                    "neuron_config.json, written by optimum-neuron 0.2.0 and later; an older export's config.json has "
                    "it as `_name_or_path` and the shapes in its `neuron` section), with its sequence_length, "
                    "batch_size and tp_degree, e.g. "
                    "NeuronModelForCausalLM.from_pretrained(<checkpoint id>, export=True, sequence_length=<N>, "
                    "batch_size=<B>) (NM110 then rewrites it to AutoModelForCausalLM with a static cache of N tokens)")
        if attribute == "get_neuron_config":
            return ("read the shapes from the values passed to get_neuron_config (batch_size, sequence_length, "
                    "tensor_parallel_size, auto_cast_type) instead of from its result, so that the result is only the "
                    "neuron_config of the export call and reads of the batch_size / sequence_length / tp_degree it was "
                    "given (NM110 then folds both into from_pretrained + a static-cache generation config)")
        if attribute == "export":
            return "pass the model id to export() as its first argument (NM110 then rewrites it to from_pretrained)"
        return ("replace it with AutoModelForCausalLM.from_pretrained + a static-cache generation config by hand (see "
                "--explain NM110)")

    # ------------------------------------------------------------------ the compiled-folder round trip (fxJ)
    def _round_trip_load(self, call: cst.Call) -> RoundTrip | None:
        """The project's round trip (``round_trip``) when ``call`` is one of its loads: a compiled-folder load whose
        path is known only at run time, fed by the Python exports NM110 rewrites to save stock checkpoints."""
        if not self._loads_compiled(call):
            return None
        trip = round_trip(self.ctx.options)
        here = str(file_path(self.ctx)).replace("\\", "/")
        return trip if trip is not None and (here, call_key(call)) in trip.keys else None

    def _unmapped_reads(self, call: cst.Call, gatherer, trip: RoundTrip) -> str | None:
        """The reads of the compiled config (``model.neuron_config.batch_size``, ``model.config.neuron[...]``) of
        the model a round-trip load binds that the exports do not give as one constant (``trip.shapes``), shown;
        None when every read has its literal (or there is none)."""
        names: set[str] = set()
        for assign in gatherer.assigns:
            value = assign.value
            while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "to" \
                    and value is not call:
                value = value.func.value
            if value is call:
                names.update(dotted_name(target.target) for target in assign.targets)
        known = _recovered_shapes(trip.shapes)
        module = self.ctx.shared.get("module")
        if not names or not isinstance(module, cst.Module):
            return None
        holders: list[cst.CSTNode] = []
        mapped: set[int] = set()
        unread: list[str] = []

        def holder(node: cst.BaseExpression) -> bool:
            if not isinstance(node, cst.Attribute):
                return False
            if node.attr.value == "neuron_config":
                return dotted_name(node.value) in names
            return node.attr.value == "neuron" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "config" and dotted_name(node.value.value) in names

        class Reads(cst.CSTVisitor):
            def visit_Attribute(self, node: cst.Attribute) -> None:
                if holder(node):
                    holders.append(node)
                elif holder(node.value):
                    if isinstance(known.get(COMPILED_FIELDS.get(node.attr.value, "")), (int, str)):
                        mapped.add(id(node.value))

            def visit_Subscript(self, node: cst.Subscript) -> None:
                if holder(node.value) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                    key = node.slice[0].slice.value
                    field = key.evaluated_value if isinstance(key, cst.SimpleString) else None
                    if isinstance(known.get(COMPILED_FIELDS.get(str(field), "")), (int, str)):
                        mapped.add(id(node.value))

        module.visit(Reads())
        for node in holders:
            if id(node) not in mapped:
                unread.append(f"`{source_of(node)}`")
        return ", ".join(dict.fromkeys(unread)) or None

    def _note_round_trip_saves(self) -> None:
        """A todo at each save of an export whose folder the project's round-trip loads read: it now writes a stock
        checkpoint (nothing is pre-compiled), which those loads read."""
        trip = round_trip(self.ctx.options)
        here = str(file_path(self.ctx)).replace("\\", "/")
        if trip is None or here not in trip.exporters:
            return
        readers = trip.loader_names()
        for _, saves in self.saved_exports():
            for save in saves:
                self.todo_at_call(save, f"this now saves a stock checkpoint (weights, config.json with the dtype, "
                                  "generation_config.json with the static cache and max_cache_len) for the loads of "
                                  f"{readers}, which load it with AutoModelForCausalLM.from_pretrained: nothing is "
                                  "pre-compiled on TorchNeuron (generate compiles on the first call); a folder written "
                                  "by the old export holds Neuron-compiled artifacts: delete it, then re-run this script (a script "
                                  "that writes the folder only when it is missing would load the old one)")

    def _round_trip_rewrite(self, original: cst.Call, updated: cst.Call, args, trip: RoundTrip) -> cst.BaseExpression:
        """A round-trip load: ``AutoModelForCausalLM.from_pretrained(<path>, device_map=<device>)`` (the dtype and the
        static cache come from the config files the migrated export saves) + ``compile_config`` (not saved)."""
        notes: list[str] = []
        new_args: list[cst.Arg] = list(args.positional[:1])
        values = dict(args.keywords)
        for key, arg in args.keywords:
            if key == "export":
                continue
            if key == "use_auth_token":
                new_args.append(keyword_arg("token", arg.value))
            elif key in KEEP or key in STOCK_LOAD_ARGS or key in ("torch_dtype", "dtype", "device_map"):
                new_args.append(arg if key != "torch_dtype" else keyword_arg("dtype", arg.value))
            elif (note := neuron_argument_note(key, arg, args)) is not None:
                notes.append(note)
            elif key in TP_KEYS:
                notes.append(f"`{key}={source_of(arg.value)}` dropped: this loads on one device; to shard across that "
                             "many NeuronCores, launch this script with `torchrun --nproc_per_node <degree>` and pass "
                             "distributed_config=DistributedConfig(tp_size=<degree>) instead of device_map")
            else:  # DROP, the shapes, auto_cast_type (DECODER_SORTED: any other key keeps the file)
                notes.append(f"`{key}={source_of(arg.value)}` dropped: a Neuron compile setting; the stock checkpoint "
                             "carries its dtype and static cache in its config files")
        if "device_map" not in values:
            new_args.append(keyword_arg("device_map", self.device_map()))
        exporters = trip.exporter_names()
        several = len({*trip.exporters, *trip.cli_exporters}) > 1  # Python exporters and optimum-cli ones (fxL)
        degrees = [degree for degree in trip.degrees if not degree.endswith(": 1")]
        if degrees:
            shown = "; ".join(degrees)
            notes.append(f"the export{'s' if several else ''} of this folder compiled for a tensor parallel degree "
                         f"({shown}): this loads on one device; to shard across that many NeuronCores, launch this "
                         "script with `torchrun --nproc_per_node <degree>` and pass "
                         "distributed_config=DistributedConfig(tp_size=<degree>) instead of device_map")
        target = self.assignment_target(original)
        if target is not None:  # inference-only, as the compiled model was: forward outputs carry no grad
            self.add_after([*inference_only(self, original, target),
                            f"{target}.generation_config.update(compile_config={self.compile_config(target)})\n"])
        else:
            notes.append("set up generation on the loaded model: model.generation_config.update(compile_config="
                         "CompileConfig(backend=\"neuron\", dynamic=False, mode=\"default\"))")
            notes.append(INFERENCE_ONLY_NOTE)
        notes.append(f"loads the stock checkpoint that {exporters} now save{'' if several else 's'} (dtype and "
                     "static cache travel in its config files: config.json, generation_config.json); a folder written "
                     "by the old export holds Neuron-compiled artifacts and does not load here: delete it, then re-run "
                     f"{'the one that writes it' if several else exporters} first")
        for note in notes:
            self.todo(original, note)
        self.fixed(original, "from_pretrained of a compiled Neuron decoder folder -> AutoModelForCausalLM."
                   f"from_pretrained of the stock checkpoint the migrated export of {exporters} saves there")
        func = (updated.func.with_changes(attr=cst.Name("from_pretrained")) if isinstance(updated.func, cst.Attribute)
                else updated.func)
        return updated.with_changes(func=func, args=with_commas(new_args, updated.args))

    def _shapes_of(self, call: cst.Call) -> dict[str, object]:
        """The literal shapes a load of this rule carries: a compiled-folder load rewritten to the checkpoint its
        folder was exported from (``_recovered``: one export of the project, certain) or a round-trip load, that
        export's (rt8Q-13); an export, its own."""
        recovered = self._recovered(call)
        trip = self._round_trip_load(call) if recovered is None else None
        return (_recovered_shapes(recovered[2]) if recovered is not None else
                _recovered_shapes(trip.shapes) if trip is not None else self._export_shapes(call))

    def _export_shapes(self, call: cst.Call) -> dict[str, object]:
        keywords = dict(self.arguments(call).keywords)
        config = _neuron_config_arg(call)
        if isinstance(config, cst.Name) and config.value in self._neuron_configs:
            keywords.update(self.arguments(self._neuron_configs[config.value]).keywords)
        shapes = {}
        for key, field in COMPILED_FIELDS.items():
            if key in keywords and self.known(self.literal(keywords[key].value)):
                shapes[field] = self.literal(keywords[key].value)
        return shapes

    # ------------------------------------------------------------------ what the compiled model carried
    def _compiled_config(self, node: cst.BaseExpression) -> str | None:
        """The model variable when ``node`` is ``<model>.neuron_config`` or ``<model>.config.neuron`` of a model this
        rule rewrote (a stock model has neither)."""
        if not isinstance(node, cst.Attribute):
            return None
        if id(node) in self._scoped:
            return self._scoped[id(node)][0]
        if node.attr.value == "neuron_config" and isinstance(node.value, cst.Name) \
                and node.value.value in self._compiled:
            return node.value.value
        if node.attr.value == "neuron" and isinstance(node.value, cst.Attribute) and node.value.attr.value == "config" \
                and isinstance(node.value.value, cst.Name) and node.value.value.value in self._compiled:
            return node.value.value.value
        return None

    def _compiled_read(self, original: cst.BaseExpression, model: str, field: str,
                       holder: cst.BaseExpression) -> cst.BaseExpression | None:
        """A literal for ``<model>'s compiled <field>`` (``holder``: its ``<model>.neuron_config`` /
        ``<model>.config.neuron``), or None (with a todo)."""
        shapes = self._scoped[id(holder)][1] if id(holder) in self._scoped else self._compiled[model]
        value = shapes.get(COMPILED_FIELDS.get(field, ""))
        if isinstance(value, (int, str)) and not isinstance(value, bool):
            self.fixed(original, f"{model}'s compiled {field} -> {value!r}, the value it was exported with (a stock "
                                 "model has no compiled config)")
            if isinstance(value, str):  # inside an f-string, the quote the f-string does not use (before 3.12)
                quote = "'" if any('"' in start for start in self._fstrings) else '"'
                return cst.SimpleString(quote + value + quote)
            return cst.Integer(str(value))
        self.todo(original, f"{model} is a stock model now and has no compiled config ({source_of(original)}): use the "
                            "value it was exported with (batch size: the prompts you pad to, sequence length: "
                            "generation_config.max_cache_len, tensor parallel degree: the DistributedConfig tp_size)")
        return None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._compiled_config(node.value) is not None:
            self._config_holders.add(node.value)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        self._fstrings.append(node.start)

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.FormattedString:
        self._fstrings.pop()
        return updated

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if self._compiled_config(node.value) is not None:
            self._config_holders.add(node.value)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        given = self._getter_values.get(id(original))
        if given is not None:
            self.fixed(original, f"{source_of(original)} -> {source_of(given)}, the value given to the folded "
                                 "get_neuron_config (a stock model has no compiled config)")
            return given.deep_clone()
        model = self._compiled_config(original.value)
        if model is not None:
            return self._compiled_read(original, model, original.attr.value, original.value) or updated
        model = self._compiled_config(original)
        if model is not None and original not in self._config_holders:
            self._compiled_read(original, model, "", original)
        return updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.BaseExpression) -> cst.BaseExpression:
        model = self._compiled_config(original.value)
        if model is None:
            return updated
        key = (self.literal(original.slice[0].slice.value)
               if len(original.slice) == 1 and isinstance(original.slice[0].slice, cst.Index) else None)
        return self._compiled_read(original, model, key if isinstance(key, str) else "", original.value) or updated

    def is_target_call(self, call: cst.Call) -> bool:
        return self._method(call) in ("from_pretrained", "export") \
            and any(a.keyword is None and not a.star for a in call.args)

    def _method(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if self.match_class(node.func.value, DECODERS, node):
                return node.func.attr.value
            if node.func.attr.value == "from_pretrained" and self._both_bound(node.func.value) is not None:
                return "from_pretrained"
        return None

    def _both_bound(self, owner: cst.BaseExpression) -> str | None:
        """The Neuron class ``owner`` names when the name is bound to it and to its stock target (``if SMOKE: from
        transformers import AutoModelForCausalLM as M else: from optimum.neuron import NeuronModelForCausalLM as
        M``), else None. Its ``from_pretrained`` loads are this rule's: what the rewrite adds (device_map, the
        static-cache generation config) is valid for the stock class too, so they get it on either branch."""
        qualified = self.ctx.matches(owner, DECODERS)
        if qualified is None or DECODERS[qualified] not in self.ctx.qualnames(owner):
            return None
        return qualified

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if _chat_template_tensors(original):
            self.fixed(original, "apply_chat_template(..., return_tensors=...) returns a BatchEncoding under "
                       "transformers 5 (return_dict defaults to True): return_dict=False keeps the tensor of token ids "
                       "the code uses (ids.shape, generate(ids)), as transformers 4 returned")
            return updated.with_changes(
                args=with_commas([*updated.args, keyword_arg("return_dict", "False")], updated.args))
        method = self._method(original)
        follows = self.follow_source(original, updated) if method is None else None
        if follows is not None:
            return follows
        if method == "get_neuron_config":
            statement = self.current_statement()
            if statement is not None and id(statement) in self._remove:
                self.fixed(original, "get_neuron_config(...) folded into from_pretrained + generation_config (no "
                                     "compiled config on TorchNeuron)")
            else:
                self.todo(original, "get_neuron_config() has no stock equivalent: pass its "
                          "batch_size/sequence_length/tensor_parallel_size to the generation setup (max_cache_len) and "
                          "DistributedConfig(tp_size=...)")
            return updated
        if method not in ("from_pretrained", "export"):
            return updated
        return self._rewrite(original, updated, method)

    # ------------------------------------------------------------------------------------------------
    def _rewrite(self, original: cst.Call, updated: cst.Call, method: str) -> cst.BaseExpression:
        args = self.arguments(updated)
        notes: list[str] = []
        if not args.positional and args.get("model_id") is None and args.get("pretrained_model_name_or_path") is None \
                and args.get("model_name_or_path") is None:
            self.todo(original, "could not find the model id of this call; rewrite it by hand (see --explain NM110)")
            return updated
        export_arg = args.get("export")
        export_value = self.literal(export_arg.value) if export_arg is not None else False
        compiled = method == "from_pretrained" and export_value is not True
        recovered = self._recovered(original) if compiled else None
        trip = self._round_trip_load(original) if compiled and recovered is None else None
        if trip is not None:
            return self._round_trip_rewrite(original, updated, args, trip)
        if recovered is not None:  # the compiled folder an export script of the project writes: load its source
            model_id, script, shapes = recovered
            folder = source_of(args.positional[0].value)
            source_path, override = self.source_path(self._load_path(original), args.positional[0].value, model_id)
            args.positional = [cst.Arg(source_path)]
            if override is not None:
                notes.append(override)
            args.keywords = [(k, a) for k, a in args.keywords if k != "export"] + [
                (key, keyword_arg(key, value if key in INTEGER_KEYS else json.dumps(value))) for key, value in shapes
                if key != "auto_cast"]  # a decoder's dtype is its --auto_cast_type (the fact records both)
            compiled = False
            self.fixed(original, f"{folder} is the folder {script} compiles from \"{model_id}\" ({export_kind(script)}): "
                       "the stock load reads that checkpoint, with the shapes that export compiled")
            if (casting := self.casting_note(original, "takes no dtype from them (the checkpoint's dtype)")):
                notes.append(casting)

        # compile settings this rule could not read (an opaque **splat, an unfolded neuron config): no "not given" notes
        unread_config = bool(args.opaque)
        if method == "export":
            config = _neuron_config_arg(updated)
            if isinstance(config, cst.Name) and config.value in self._neuron_configs:
                getter = self.arguments(self._neuron_configs[config.value])
                args.keywords = [(k, a) for k, a in getter.keywords if k not in ("config",)] + [
                    (k, a) for k, a in args.keywords if k != "neuron_config"]
                # get_neuron_config(id, config, ...): the order of its later parameters differs between versions
                unread = [*getter.positional[2:], *getter.opaque]
                if unread:
                    unread_config = True
                    notes.append(f"{', '.join(source_of(a) for a in unread)} (passed to get_neuron_config) could not "
                                 "be read: take its sequence_length into max_cache_len, its auto_cast_type into "
                                 "dtype= and its tensor_parallel_size into DistributedConfig(tp_size=...) by hand")
            elif config is not None:
                unread_config = True
                notes.append(f"`{source_of(config)}` (a compiled neuron config) has no stock equivalent: take its "
                             "batch_size, sequence_length, tensor_parallel_size/tp_degree and dtype "
                             "(auto_cast_type/torch_dtype) into max_cache_len / DistributedConfig(tp_size=...) / "
                             "dtype=")
            args.positional = args.positional[:1]

        positional = args.positional[:1]
        if len(args.positional) > 1:
            notes.append("extra positional arguments of the optimum call were dropped; check them against "
                         "from_pretrained")
        new_args: list[cst.Arg] = list(positional)
        values = dict(args.keywords)
        dtype: str | cst.BaseExpression | None = None
        dropped: list[str] = []
        for key, arg in args.keywords:
            if key in KEEP:
                new_args.append(arg)
            elif key == "use_auth_token":
                new_args.append(keyword_arg("token", arg.value))
            elif key in ("torch_dtype", "dtype"):
                dtype = arg.value
            elif key == "auto_cast_type":
                value = self.literal(arg.value)
                mapped = dtype_for(value)
                if mapped is not None:
                    dtype = dtype if dtype is not None else mapped
                elif torch_dtype_attr(arg.value) or self.dtype_variable(arg.value):
                    dtype = arg.value
                elif run_time_value(arg.value) and dtype is None:
                    # a value known only at run time (``args.dtype``): the same choice, made then
                    self.ctx.add_import("torch")
                    dtype = parse_expression(f"{AUTO_CAST_DTYPES}.get({source_of(arg.value)}, \"auto\")")
                    self.fixed(original, f"auto_cast_type={source_of(arg.value)} -> dtype= picked from it at run "
                               "time (bf16 -> torch.bfloat16, fp16 -> torch.float16, fp32 -> torch.float32, anything "
                               "else: the checkpoint dtype, as optimum did without auto_cast_type)")
                else:
                    notes.append(f"auto_cast_type={source_of(arg.value)}: pass dtype=torch.bfloat16 / torch.float16 / "
                                 "torch.float32 to from_pretrained accordingly")
            elif key in DROP:
                dropped.append(key)
            elif key in TP_KEYS or key in ("batch_size", "sequence_length"):
                continue
            elif (note := neuron_argument_note(key, arg, args)) is not None:
                notes.append(note)
            elif key in STOCK_LOAD_ARGS:
                new_args.append(arg)
            else:  # a keyword of a folded get_neuron_config (a load's own unsorted keyword keeps the file)
                new_args.append(arg)
                notes.append(f"`{key}=` is not an optimum-neuron argument this rule knows: check it is valid for "
                             "AutoModelForCausalLM.from_pretrained")
        for arg in args.opaque:
            new_args.append(arg)
            notes.append(f"`{source_of(arg.value)}` cannot be resolved statically: remove the Neuron compile/shape "
                         "keys (batch_size, sequence_length, num_cores, auto_cast_type, export) it carries")

        if dtype is not None:
            new_args.append(keyword_arg("dtype", dtype))
            if isinstance(dtype, str) and dtype.startswith("torch."):
                self.ctx.add_import("torch")
        elif not compiled and method == "from_pretrained" and "auto_cast_type" not in values and not args.opaque:
            notes.append("auto_cast_type not given: optimum compiled in fp32 (<= 0.1.0) or bf16 (0.2.0-0.3.0); now "
                         "the checkpoint dtype is used - pass dtype= to pin it")

        tp_arg = next((values[k] for k in TP_KEYS if k in values), None)
        tp_value = self.literal(tp_arg.value) if tp_arg is not None else None
        target = self.assignment_target(original)
        # DistributedConfig makes from_pretrained call init_process_group: it raises in a single-process run (a
        # notebook, `python x.py`, a SageMaker job script), which is how optimum's export used N cores
        torchrun = (self.ctx.path.suffix != ".ipynb"
                    and torchrun_launched(self.ctx.options.project, self.ctx.path.name))
        if tp_arg is not None and not torchrun and (
                (isinstance(tp_value, int) and tp_value > 1)
                or (not self.known(tp_value) and isinstance(tp_arg.value, (cst.Name, cst.Attribute)))):
            degree = source_of(tp_arg.value)
            shell, which = self._shell_degree(tp_arg.value)
            notes.append(f"tensor parallel degree {degree}: this loads on one device (no launcher in this project "
                         f"runs the script under torchrun); to shard across {degree} NeuronCores, launch with "
                         f"`torchrun --nproc_per_node {shell}`{which} and pass "
                         f"distributed_config=DistributedConfig(tp_size={degree}) instead of device_map")
            if "device_map" not in values:
                new_args.append(keyword_arg("device_map", self.device_map()))
        elif tp_arg is not None and isinstance(tp_value, int) and tp_value > 1:
            self.ctx.add_import("transformers", "DistributedConfig")
            new_args.append(keyword_arg("distributed_config", f"DistributedConfig(tp_size={tp_value})"))
            notes.append(_tp_note(str(tp_value)))
        elif tp_arg is not None and not self.known(tp_value) and isinstance(tp_arg.value, (cst.Name, cst.Attribute)):
            degree = source_of(tp_arg.value)
            self.ctx.add_import("transformers", "DistributedConfig")
            new_args.append(keyword_arg("distributed_config", f"DistributedConfig(tp_size={degree})"))
            device = self.device_map().with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            new_args.append(keyword_arg("device_map", cst.IfExp(
                test=parse_expression(f"{degree} == 1"), body=device, orelse=cst.Name("None"))))
            notes.append(_tp_note(degree, *self._shell_degree(tp_arg.value)))
        else:
            if tp_arg is not None and not isinstance(tp_value, int):
                notes.append(f"tensor parallel degree {source_of(tp_arg.value)} could not be read: this loads on one "
                             "device; for TP pass distributed_config=DistributedConfig(tp_size=N) instead of "
                             "device_map")
            elif tp_arg is None and not compiled and not unread_config:
                notes.append("num_cores not given: optimum compiled for 2 NeuronCores (<= 0.0.17) or all visible "
                             "cores (0.0.18+); this runs on one device - for tensor parallelism pass "
                             "distributed_config=DistributedConfig(tp_size=N) (no device_map) and launch with torchrun")
            if "device_map" not in values:
                new_args.append(keyword_arg("device_map", self.device_map()))

        seq_arg = values.get("sequence_length")
        batch_arg = values.get("batch_size")
        if batch_arg is not None:
            notes.append(f"compiled for batch_size={source_of(batch_arg.value)}: call generate() with exactly that "
                         "many prompts (pad the batch; a new batch size recompiles)"
                         + ("" if not self._padding_advice() else " and tokenizer.padding_side = \"left\" for "
                            "batched prompts (optimum used right padding)")
                         + ("; optimum served batch_size > 1 with continuous batching, stock generate() batches "
                            "statically"
                            if isinstance(self.literal(batch_arg.value), int) and self.literal(batch_arg.value) > 1
                            and "continuous_batching" not in values  # its own todo says so (BEHAVIOUR_ARGS)
                            else ""))
        for name, path in args.imported.items():
            dropped.append(f"**{name} (a dict of {path}, folded in: its keys are sorted as keywords here; the dict "
                           "stays there, delete it and its import here once nothing else reads it)")
        dropped, notes = self.sort_dropped(original, dropped, notes)  # parallelism / shapes / batching: todos
        if dropped:
            self.fixed(original, f"dropped export/compiler-only arguments: {', '.join(dropped)}")

        setup = ['cache_implementation="static"']
        if seq_arg is not None:
            setup.append(f"max_cache_len={source_of(seq_arg.value)}")
        elif not compiled and not unread_config:
            notes.append("sequence_length not given: set max_cache_len in generation_config.update to the longest "
                         "prompt + generated tokens you need (static cache)")
        if target is not None:  # inference-only, as the compiled model was: forward outputs carry no grad
            setup.append(f"compile_config={self.compile_config(target)}")
            self.add_after([*inference_only(self, original, target),
                            f"{target}.generation_config.update({', '.join(setup)})\n"])
        else:
            notes.append("set up generation on the loaded model: model.generation_config.update("
                         f"{', '.join(setup)}, compile_config=CompileConfig(backend=\"neuron\", dynamic=False, "
                         "mode=\"default\"))")
            notes.append(INFERENCE_ONLY_NOTE)
        for note in notes:
            self.todo(original, note)
        summary = (f"{'export' if method == 'export' else 'from_pretrained'} of a compiled Neuron decoder -> "
                   "AutoModelForCausalLM.from_pretrained + static-cache generation config")
        owner = original.func.value if isinstance(original.func, cst.Attribute) else None
        both = None if owner is None or self.match_class(owner, DECODERS, original) else self._both_bound(owner)
        if compiled and both is not None and owner is not None:  # bound to both classes: the Neuron branch read a
            where = source_of(positional[0].value) if positional else "the model path"  # compiled folder
            self.todo(original, f"{summary}, not complete: {both} is one of the classes "
                      f"`{source_of(owner)}` is bound to here (the stock one on the other branch), and "
                      f"optimum's from_pretrained without export=True loads only Neuron-compiled artifacts: on that "
                      f"branch `{where}` named a Neuron-compiled folder/repo that stock libraries cannot load. Load the "
                      "source checkpoint there instead (checkpoint_id and checkpoint_revision in its "
                      "neuron_config.json), with its sequence_length as max_cache_len")
        elif compiled:  # optimum loaded compiled artifacts: the stock call cannot run until it names the checkpoint
            where = source_of(positional[0].value) if positional else "the model path"
            self.todo(original, f"{summary}, not complete: unless export= is True when it runs (it cannot be read "
                      f"here), {where} names a Neuron-compiled folder/repo that stock libraries cannot load: load the "
                      "source checkpoint instead (checkpoint_id and checkpoint_revision in its neuron_config.json), "
                      "with its sequence_length as max_cache_len")
        else:
            self.fixed(original, summary)
        func = (updated.func.with_changes(attr=cst.Name("from_pretrained")) if isinstance(updated.func, cst.Attribute)
                else updated.func)
        return updated.with_changes(func=func, args=with_commas(new_args, updated.args))


def _scoped_holders(module: cst.Module, loads: Callable[[cst.Call], bool],
                    shapes_of: Callable[[cst.Call], dict[str, object]]) -> dict[int, tuple[str, dict[str, object]]]:
    """id(``<m>.neuron_config`` / ``<m>.config.neuron``) -> (``<m>``, the shapes) for a model ``<m>`` - a name, or
    ``self.<attr>`` in a class - that its scope (the function binding the name, else the module; the class) binds
    only by ``<m> = <load>`` statements (``loads``), at least twice: the fields every binding gives alike
    (``shapes_of``). A name bound any other way there (a for / with target, a tuple, ``+=``, a parameter) is none."""
    bindings: dict[tuple[int, str], list[cst.Call] | None] = {}
    holders: list[tuple[cst.Attribute, str, tuple[int, ...]]] = []

    def root(node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
            return "self." + node.attr.value
        return None

    class Scopes(cst.CSTVisitor):
        def __init__(self) -> None:
            self.functions: list[int] = [id(module)]
            self.classes: list[int] = []

        def scope(self, name: str) -> int | None:
            return (self.classes[-1] if self.classes else None) if name.startswith("self.") else self.functions[-1]

        def bind(self, name: str | None, value: cst.BaseExpression | None) -> None:
            scope = self.scope(name) if name is not None else None
            if name is None or scope is None:
                return
            calls = bindings.setdefault((scope, name), [])
            if calls is not None and isinstance(value, cst.Call) and loads(value):
                calls.append(value)
            else:
                bindings[(scope, name)] = None

        def visit_ClassDef(self, node: cst.ClassDef) -> None:
            self.classes.append(id(node))

        def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
            self.classes.pop()

        def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
            self.functions.append(id(node))
            for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
                self.bind(param.name.value, None)

        def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
            self.functions.pop()

        def visit_Assign(self, node: cst.Assign) -> None:
            for target in node.targets:
                self.bind(root(target.target), node.value if len(node.targets) == 1 else None)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self.bind(root(node.target), node.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.bind(root(node.target), None)

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            if isinstance(node.target, (cst.Tuple, cst.List)):
                for element in node.target.elements:
                    self.bind(root(element.value), None)

        def visit_For(self, node: cst.For) -> None:
            for found in [node.target, *getattr(node.target, "elements", [])]:
                self.bind(root(getattr(found, "value", found)), None)

        def visit_AsName(self, node: cst.AsName) -> None:
            self.bind(root(node.name), None)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            self.bind(root(node.target), None)

        def visit_Attribute(self, node: cst.Attribute) -> None:
            held = node.value.value if node.attr.value == "neuron" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "config" else node.value if node.attr.value == "neuron_config" else None
            name = root(held) if held is not None else None
            if name is not None:
                holders.append((node, name, (self.functions[-1], id(module)) if not name.startswith("self.")
                                else (self.classes[-1],) if self.classes else ()))

    module.visit(Scopes())
    out: dict[int, tuple[str, dict[str, object]]] = {}
    for node, name, scopes in holders:
        # Python's rule: a name the function binds is its own, else the module's
        scope = next((scope for scope in scopes if (scope, name) in bindings), None)
        calls = bindings.get((scope, name)) if scope is not None else None
        if not calls or len(calls) < 2:
            continue
        shapes = [shapes_of(call) for call in calls]
        out[id(node)] = (name, {field: value for field, value in shapes[0].items()
                                if all(field in other and other[field] == value for other in shapes[1:])})
    return out


def _recovered_shapes(shapes: tuple[tuple[str, str], ...]) -> dict[str, object]:
    """The fields (``COMPILED_FIELDS`` values) of an export's recorded shapes (``CompiledFolderLoads._recovered``:
    ``(("batch_size", "2"), ("num_cores", "2"), ("auto_cast_type", "bf16"))``) as the literals it compiled."""
    out: dict[str, object] = {}
    for key, value in shapes:
        field = COMPILED_FIELDS.get(key)
        if field is not None:
            out[field] = int(value) if key in INTEGER_KEYS and value.isdigit() else value
    return out


#: fields of get_neuron_config's result -> the get_neuron_config keywords that give them
GETTER_FIELDS = {"batch_size": ("batch_size",), "sequence_length": ("sequence_length",),
                 "tp_degree": ("tensor_parallel_size", "tp_degree"),
                 "tensor_parallel_size": ("tensor_parallel_size", "tp_degree")}


class _NameAttributes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: dict[str, list[cst.Attribute]] = {}
        self.bindings: dict[str, int] = {}  # name -> how often the file binds it (parameters included)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name):
            self.found.setdefault(node.value.value, []).append(node)

    def _bind(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            self.bindings[target.value] = self.bindings.get(target.value, 0) + 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)


def _name_attributes(module: cst.Module) -> _NameAttributes:
    """``name.attr`` reads of the module, per name, and how often each name is bound."""
    walk = _NameAttributes()
    module.visit(walk)
    return walk


def _stable(value: cst.BaseExpression, walk: _NameAttributes) -> bool:
    """A number, or a name / attribute chain whose root the file binds once (one assignment or one parameter):
    read again later, it gives what get_neuron_config was given."""
    if isinstance(value, cst.Integer):
        return True
    while isinstance(value, cst.Attribute):
        value = value.value
    return isinstance(value, cst.Name) and walk.bindings.get(value.value, 0) == 1 \
        and value.value not in ("self", "cls")


def _chat_template_tensors(call: cst.Call) -> bool:
    """``tok.apply_chat_template(..., return_tensors=...)`` written for transformers 4 (no return_dict=, not
    tokenize=False): transformers 5 made return_dict=True the default, so it returns a BatchEncoding
    (``return_dict: bool = True`` in the signature of transformers 5.24's
    ``PreTrainedTokenizerBase.apply_chat_template``; 4.x defaulted to False)."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply_chat_template"):
        return False
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    if any(arg.star for arg in call.args) or "return_dict" in keywords or "return_tensors" not in keywords:
        return False
    tokenize = keywords.get("tokenize")
    return not (isinstance(tokenize, cst.Name) and tokenize.value == "False") \
        and not (isinstance(keywords["return_tensors"], cst.Name) and keywords["return_tensors"].value == "None")


def _neuron_config_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "neuron_config":
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[1].value if len(positional) > 1 else None


def _tp_note(degree: str, shell: str | None = None, which: str = "") -> str:
    """``shell``: the degree as a shell word (a placeholder for a run-time value, ``which`` saying what it stands for)."""
    return (f"tensor parallel degree {degree}: launch with `torchrun --nproc_per_node {shell or degree}`{which}; "
            "transformers builds "
            "the tp DeviceMesh from distributed_config and calls init_process_group itself (backend \"neuron\" on "
            "Trainium) - call torch.distributed.init_process_group(backend=\"neuron\") first if you need it earlier")
