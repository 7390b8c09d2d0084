"""NM140 diffusion-pipeline: ``Neuron<...>Pipeline`` -> the diffusers pipeline on the device, regionally compiled.

What it does:

* imports of the 15 ``Neuron*Pipeline`` classes (``optimum.neuron``, ``optimum.neuron.modeling_diffusion``)
  -> ``diffusers.<Pipeline>`` (StableDiffusion, Img2Img, Inpaint, InstructPix2Pix, LatentConsistency,
  ControlNet, SDXL (+Img2Img/Inpaint/ControlNet), PixArt Alpha/Sigma, Flux, FluxKontext, FluxInpaint);
* ``X.from_pretrained(id, export=True, batch_size=, height=, width=, num_images_per_prompt=, auto_cast=,
  auto_cast_type=, torch_dtype=, **compiler_args, **input_shapes)`` ->
  ``<Pipeline>.from_pretrained(id, dtype=...).to(<device>)``; ``auto_cast_type`` / ``torch_dtype`` give
  ``dtype`` (diffusers 0.42 accepts it); export/compiler-only kwargs are dropped (reported); every load gets an
  explicit ``dtype=`` so its components never mix bf16 and float32: an export with no casting given gets
  optimum's compiled default ``torch.bfloat16`` (``torch.float32`` with ``auto_cast=None`` / tf32);
  ``auto_cast="matmul"`` loads in its ``auto_cast_type`` too (a whole-model cast, with a ``todo``): the outputs
  are images, post-processed to float by diffusers, unlike NM120's encoders (float32);
* a pipeline the file only saves (``save_pretrained`` / ``push_to_hub`` are its only uses: an export job) gets
  no device move and no compilation: the code that loads the saved folder and calls it does;
* after ``pipe = ...``: ``pipe.unet.compile_repeated_blocks(backend="neuron", fullgraph=True, dynamic=False)``
  (``pipe.transformer`` for Flux; ``pipe.transformer.compile(...)`` for PixArt, which has no
  ``_repeated_blocks``), guarded by ``if pipe.device.type == "neuron":`` in the portable style;
* a load without ``export=True`` names Neuron-compiled artifacts, which diffusers cannot load. It is rewritten
  only while a diffusion export job of the project may write its folder (``Neuron<...>Pipeline.from_pretrained(
  <id>, export=True)`` saved with ``save_pretrained``, in a Python file or notebook: migrated, it saves a stock
  diffusers folder the migrated load reads; a folder that cannot be read on either side may be that one), its
  summary a ``todo`` to re-run that job (the folder on disk still holds NEFFs). Otherwise - no such export, their
  folders all known and different, a folder an ``optimum-cli export neuron`` command writes (its ``--model`` is
  named), or an export held on optimum-neuron because another diffusion load of the project stays there (it
  would keep writing NEFFs, ``_kept_producer_loads``) - the load, its import and the file stay on optimum-neuron
  with a ``todo`` at the load: load the source checkpoint (``_name_or_path`` of a component config of the
  compiled folder) with ``export=True`` and its shapes, or port the job that compiled it (shared with NM130:
  ``ProducedFolderLoads`` in ``_compiled_exports.py``);
* such a load with no dtype gets ``dtype=<NAME>`` when the file binds one name to a torch dtype and passes it
  to its other loads (``DTYPE = torch.bfloat16`` ... ``torch_dtype=DTYPE`` on the GPU branch), or the one
  literal precision the file's own saved exports use (``auto_cast_type="bf16"`` + ``save_pretrained``: a folder
  the migrated export writes holds its text encoder in bf16, which transformers keeps on load, and a float32 unet
  beside it raises at the first call), or the one precision the project's other export scripts save in (a
  project fact), else the compiled default ``torch.bfloat16``, with a ``todo`` naming where it came from (diffusers
  loads float32 without ``dtype=``); ``auto_cast_type=NAME`` with ``NAME = torch.bfloat16`` passes the variable on, and a value known
  only at run time (``args.auto_cast_type``) becomes ``dtype={"bf16": torch.bfloat16, ...}.get(value,
  torch.float32)`` (the same choice, made when the script runs), and an ``auto_cast`` known only at run time
  (``--auto_cast none`` compiled without casting) wraps it: ``torch.float32 if args.auto_cast in (None, "none")
  else ...``;
* a load of a compiled folder (its dtype given, or the default added) while another project file's saved export
  chooses its ``auto_cast_type`` when it runs (``auto_cast_type=args.dtype``): a ``todo`` naming that export and
  argument (the load's fixed dtype may not be the precision that run compiled);
* static shapes -> a ``todo`` (pass the same height/width/num_images_per_prompt at every call, CPU generator;
  in a file that only saves the pipeline: apply it where the saved pipeline is called);
* every call of the loaded pipeline in the file (a module global, a ``self`` attribute, a function's return)
  that passes no ``height=``/``width=`` gets a ``todo``: optimum ran it at the compiled size, diffusers uses its
  default size (named only for a checkpoint id of a known family: 512x512 for the SD 1.x and 2.x ``-base``
  checkpoints, 768x768 for stable-diffusion-2-1, 1024 for SDXL); so does one without ``num_images_per_prompt=``
  when the export compiled more than one image per prompt (diffusers makes 1). The compiled shapes are the load's
  own (an export), or those of the project's saved export that writes the folder a compiled load reads (named);
  the dtype a compiled load gets from the project's exports is taken from the exports of its folder too, when
  known;
* ``**NAME`` splats: a dict literal bound once in the file, or a dict of constants bound once in a project
  module it is imported from (``from app.config import SD_SHAPES``), is sorted like inline keywords; a splat
  nothing resolves leaves the load, its import and the whole file on optimum-neuron with a ``todo`` naming it
  (diffusers would ignore the shape / casting / adapter keys it may carry with a warning: no LoRA, float32,
  the default image size);
* ``auto_cast_type`` known only at run time - a name, an attribute, or a subscript by a constant
  (``cfg["auto_cast_type"]``) - becomes ``dtype={"bf16": torch.bfloat16, ...}.get(value, torch.float32)``;
* ``device_ids=[0, 1]`` (optimum's two-core data parallelism) is dropped with a ``todo`` (one process per core);
* ``lora_model_ids`` / ``lora_weight_names`` / ``lora_adapter_names`` / ``lora_scales`` (optimum fused the
  adapters into the weights it compiled: model content, rt7N N3) -> after ``pipe = ...`` and before the
  compilation, exactly what optimum-neuron 0.4.5 did (``_load_lora_weights_to_pipeline``): one model id:
  ``pipe.load_lora_weights(id, weight_name=w)`` + ``pipe.fuse_lora(lora_scale=<scale or 1.0>)``; several:
  ``pipe.load_lora_weights(id, weight_name=w, adapter_name=a)`` each, ``pipe.set_adapters(names,
  adapter_weights=scales)`` when scales are given, ``pipe.fuse_lora()``; then ``pipe.unload_lora_weights()``
  (the fused weights stay, so a pipeline the file saves holds them, as optimum's compiled folder did). Only
  for literal values of the shapes optimum takes, on a load that is the value of an assignment; otherwise
  (a value known at run time, ids without weight names - optimum then loaded nothing -, several ids without an
  adapter name each) the load, its import and the file stay on optimum-neuron with a ``todo``, and so do the
  loads of the folder it saves in other files (the fact marks such an export as held);
* ``unet_id``, ``controlnet_ids``, ``ip_adapter_*`` (another UNet, ControlNets, IP-adapters: model content with
  no diffusers equivalent written here) keep the load and the file on optimum-neuron with a ``todo`` naming
  the diffusers replacement;
* ``tensor_parallel_size``, ``data_parallel_mode`` (parallelism: optimum sharded the denoiser over N cores, or
  ran two replicas) are removed from the call, each with its own ``todo`` (never in the ``fixed`` list of dropped
  arguments): the migrated pipeline is one replica on one device; for the same parallelism, one process per core
  (torchrun) with the prompts split by rank, or the denoiser loaded with
  ``parallel_config=TensorParallelConfig(tp_degree=N)`` under torchrun, or ``device_map``. Only the one-core
  values (``tensor_parallel_size=1``, ``data_parallel_mode="none"``) are dropped as done;
* left alone: IP-adapter / ControlNet / second-UNet / Flux TP loading is described in a ``todo``, not written;
  ``data_parallel_mode`` (two replicas) becomes one process per core by hand.

Why:

optimum-neuron compiled each component of a diffusion pipeline (text encoders, UNet or transformer, VAE)
ahead of time for one batch size, image size and number of images per prompt, and could replicate the
pipeline over two NeuronCores. On TorchNeuron the stock diffusers pipeline is moved to the neuron device and
its denoiser, where the time goes, is compiled just in time; regional compilation
(``compile_repeated_blocks``) compiles one repeated block and reuses it, which keeps compile times short.
Calling the pipeline at the old size keeps the shapes, and so the compiled graph, the same.

Before::

    from optimum.neuron import NeuronStableDiffusionPipeline

    pipe = NeuronStableDiffusionPipeline.from_pretrained(MODEL, export=True, batch_size=1, height=512, width=512,
                                                         auto_cast="matmul", auto_cast_type="bf16")

After (portable device style)::

    import torch
    from diffusers import StableDiffusionPipeline

    # neuron-migrate: compiled for batch_size=1, height=512, width=512: ...
    pipe = StableDiffusionPipeline.from_pretrained(MODEL, dtype=torch.bfloat16).to(torch.accelerator.current_accelerator() or torch.device("cpu"))
    if pipe.device.type == "neuron":
        pipe.unet.compile_repeated_blocks(backend="neuron", fullgraph=True, dynamic=False)

With literal LoRA arguments (``lora_model_ids="nerijs/pixel-art-xl", lora_weight_names="pixel-art-xl.safetensors",
lora_scales=0.9``), after the load::

    pipe.load_lora_weights("nerijs/pixel-art-xl", weight_name="pixel-art-xl.safetensors")
    pipe.fuse_lora(lora_scale=0.9)
    pipe.unload_lora_weights()

Safety: needs-review. A reviewer passes the compiled size at every call and writes the IP-adapter /
ControlNet / parallelism replacements each ``todo`` names.

References:

* https://huggingface.co/docs/diffusers/optimization/fp16#regional-compilation
* https://awsdocs-neuron.readthedocs-hosted.com/en/latest/torch/compile/about-torch-compile.html
* docs/device-expression.md
"""

from __future__ import annotations

import ast

import libcst as cst

from codemods._lib.cst import keyword_arg, source_of, with_commas
from codemods._lib.launch_targets import OPTIMUM_NEURON_CODE
from codemods._tables.inference_symbols import DIFFUSION_MODULES, DIFFUSION_PIPELINES, diffusion_moves
from codemods._tables.project_markers import OPTIMUM_NEURON_IMPORTS
from codemods.inference._base import (
    InferenceRule,
    dtype_for,
    model_call_sites,
    shape_text,
    split_traced,
    torch_dtype_attr,
)
from codemods.inference._compiled_exports import (
    COMPILED_EXPORTS,
    COMPILED_FOLDER_USES,
    HELD_ADAPTER_KEYS,
    LORA_KEYS,
    MODULE_FOLDERS,
    NOT_LITERAL,
    CompiledFolderLoads,
    ProducedFolderLoads,
    ast_literal,
    diffusion_adapter_plan,
    normalized,
    resolved_folder,
)
from codemods.inference._module_dicts import MODULE_DICTS
from migrate.facts import ProjectFact
from migrate.filekinds import FileKind
from migrate.rule import Safety

MOVES = diffusion_moves()
HOW = {f"{m}.{name}": (component, how)
       for name, (_, component, how) in DIFFUSION_PIPELINES.items() for m in DIFFUSION_MODULES}
DIFFUSERS_KEEP = frozenset({"token", "revision", "cache_dir", "force_download", "local_files_only", "trust_remote_code",
                            "subfolder", "variant", "use_safetensors"})
ADAPTERS = {
    "unet_id": "load it with UNet2DConditionModel.from_pretrained(<unet_id>, subfolder=\"unet\") and pass unet= to "
               "from_pretrained",
    "controlnet_ids": "load ControlNetModel.from_pretrained(<id>) (several: a list) and pass controlnet= to "
                      "from_pretrained",
    "lora_model_ids": "after loading: pipe.load_lora_weights(<id>, weight_name=..., adapter_name=...), "
                      "pipe.set_adapters(names, adapter_weights=scales), pipe.fuse_lora()",
    "lora_weight_names": None, "lora_adapter_names": None, "lora_scales": None,
    "ip_adapter_id": "after loading: pipe.load_ip_adapter(<id>, subfolder=..., weight_name=...) and "
                     "pipe.set_ip_adapter_scale(scale)",
    "ip_adapter_subfolder": None, "ip_adapter_weight_name": None, "ip_adapter_scale": None,
}
#: optimum's parallelism keywords of a diffusion load (the neutral literal value: one core, what diffusers does)
PARALLEL = {"tensor_parallel_size": 1, "data_parallel_mode": "none"}
DATA_PARALLEL = {
    "all": "optimum loaded the whole compiled pipeline twice, on two NeuronCores, and split each batch of prompts "
           "between the two replicas",
    "unet": "optimum loaded the compiled {component} twice, on two NeuronCores, and ran the two halves of each "
            "denoising batch (the classifier-free-guidance pair) on them in parallel",
}
DATA_PARALLEL["transformer"] = DATA_PARALLEL["unet"]


def parallel_note(key: str, value: object, shown: str, component: str) -> str:
    """The todo for a parallelism keyword of a diffusion load that is not the one-core value: what optimum ran,
    that the migrated pipeline is one replica on one device, and what to write for the same parallelism."""
    if key == "data_parallel_mode":
        what = DATA_PARALLEL.get(value if isinstance(value, str) else "", "optimum replicated the compiled pipeline "
                                 "(or its {component}) on two NeuronCores and split each batch between them")
        return (f"data_parallel_mode={shown}: {what.format(component=component)}; the migrated pipeline is one "
                "replica on one device (about half the throughput): for the same throughput run one process per "
                "core (torchrun --nproc_per_node 2, each process on its own NeuronCore) and split the prompts by rank")
    degree = shown if isinstance(value, int) else "<N>"
    model = component.split(".")[-1]
    return (f"tensor_parallel_size={shown}: optimum sharded the compiled {model} over {degree} NeuronCores (tensor "
            f"parallelism); the migrated pipeline is one replica on one device (the whole {model} must fit in one "
            f"core's memory). To shard it again: launch with torchrun --nproc_per_node {degree}, load the {model} "
            f"with its diffusers class's from_pretrained(<id>, subfolder=\"{model}\", "
            f"parallel_config=TensorParallelConfig(tp_degree={degree})) (models with a TP plan, such as the Flux "
            f"transformer) and pass {model}= to the pipeline's from_pretrained; or place the components on several "
            "devices with device_map")


def collect_export_dtypes(text: str) -> list[str] | None:
    """The dtypes a file's Neuron diffusion exports are saved in, as the migrated export writes them: for each
    ``Neuron*Pipeline.from_pretrained(..., export=True, ...)`` (aliases followed) in a file that calls
    ``save_pretrained``, ``auto_cast_type`` mapped (``"bf16"`` -> ``torch.bfloat16``), float32 with casting off,
    bf16 (optimum's default) without either; "?" for a value that is not a literal. None: no such export."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("optimum.neuron")
               for alias in node.names}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    if not any(call.func.attr == "save_pretrained" for call in calls if isinstance(call.func, ast.Attribute)):
        return None
    found: set[str] = set()
    for call in calls:
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr != "from_pretrained":
            continue
        owner = func.value.id if isinstance(func.value, ast.Name) else func.value.attr \
            if isinstance(func.value, ast.Attribute) else ""
        name = aliases.get(owner, owner)
        if not (name.startswith("Neuron") and name.endswith("Pipeline")) or name not in DIFFUSION_PIPELINES:
            continue
        keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg is not None}
        export = keywords.get("export")
        if not (isinstance(export, ast.Constant) and export.value is True):
            continue
        cast_type, auto_cast = keywords.get("auto_cast_type"), keywords.get("auto_cast")
        if auto_cast is not None and isinstance(auto_cast, ast.Constant) and auto_cast.value in (None, "none", False):
            found.add("torch.float32")
        elif cast_type is None:
            found.add("?" if auto_cast is not None and not isinstance(auto_cast, ast.Constant) else "torch.bfloat16")
        elif isinstance(cast_type, ast.Constant) and isinstance(cast_type.value, str):
            found.add(dtype_for(cast_type.value) or ("torch.float32" if cast_type.value == "tf32" else "?"))
        else:  # chosen when the script runs (``--dtype``): "?auto_cast_type=<source>"
            found.add(f"?auto_cast_type={ast.unparse(cast_type)}")
    return sorted(found) or None


#: the dtypes the project's diffusion export scripts save in (a folder another file's load may read back)
EXPORT_DTYPES = ProjectFact("inference.diffusion-export-dtypes", frozenset({FileKind.PYTHON}), ("save_pretrained",),
                            collect_export_dtypes)


class DiffusionPipeline(ProducedFolderLoads, CompiledFolderLoads, InferenceRule):
    """Neuron*Pipeline -> diffusers pipeline moved to the device, with compile_repeated_blocks(backend="neuron")."""

    id = "NM140"
    name = "diffusion-pipeline"
    safety = Safety.NEEDS_REVIEW
    triggers = OPTIMUM_NEURON_IMPORTS
    moves = MOVES
    legacy_modules = ("optimum.neuron",)

    loads = MOVES
    # **NAME of a dict a project module binds once; exports' dtypes; which exports save which folders and which
    # compiled folders are loaded (a load no export writes is kept); export commands; folder names; the
    # optimum.neuron files (a kept compiled-folder load elsewhere keeps this file's export, rt5H D1)
    facts = (MODULE_DICTS, EXPORT_DTYPES, COMPILED_FOLDER_USES, COMPILED_EXPORTS, MODULE_FOLDERS, OPTIMUM_NEURON_CODE)
    opaque_splat_keeps_file = True
    produced_classes = frozenset(DIFFUSION_PIPELINES)
    export_words = "Neuron diffusion export"

    opaque_splat_consequence = (
        "the Neuron export/shape/casting/adapter keys it may carry - export, batch_size, height, width, "
        "num_images_per_prompt, auto_cast, auto_cast_type, lora_*, controlnet_ids, ip_adapter_* - which diffusers "
        "ignores with a warning ('... are not expected by <Pipeline> and will be ignored'): the pipeline would run "
        "without its LoRA/ControlNet, in float32, at diffusers' default image size")

    def _adapter_values(self, call: cst.Call) -> dict[str, object]:
        """The export's keywords (resolved ``**dict`` splats included): literal values, else NOT_LITERAL."""
        values: dict[str, object] = {}
        for arg in call.args:
            items: list[tuple[str, cst.BaseExpression]] | None
            if arg.keyword is not None:
                items = [(arg.keyword.value, arg.value)]
            elif arg.star == "**":
                items = self.dict_items(arg.value) or []
            else:
                continue
            for key, value in items:
                try:
                    values[key] = ast_literal(ast.parse(source_of(value).strip(), mode="eval").body)
                except SyntaxError:
                    values[key] = NOT_LITERAL
        return values

    def _adapter_steps(self, call: cst.Call, assigned: bool) -> tuple[list[str], str | None]:
        """``diffusion_adapter_plan`` of an export=True load (no steps for another load)."""
        values = self._adapter_values(call)
        if values.get("export") is not True:
            return [], None
        return diffusion_adapter_plan(values, assigned)

    def _held_loads(self) -> dict[int, str]:
        """The diffusion exports whose LoRA / UNet / ControlNet / IP-adapter arguments this rule cannot turn into
        the exact diffusers steps (``diffusion_adapter_plan``): rewritten, the pipeline would run without them."""
        module = self.ctx.shared.get("module")
        if not isinstance(module, cst.Module):
            return {}
        from codemods.inference._base import _gather_scopes
        gatherer = self.ctx.memo("inference.scopes", lambda: _gather_scopes(module))
        self._scopes = gatherer.values
        kept: dict[int, str] = {}
        for call in gatherer.calls:
            if not (self.is_target_call(call) and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "from_pretrained"):
                continue
            if not any(arg.keyword is not None and arg.keyword.value in (*LORA_KEYS, *HELD_ADAPTER_KEYS)
                       or arg.star == "**" for arg in call.args):
                continue
            setattr(self, "_scope_stack", gatherer.call_scopes.get(id(call), [module]))
            assigned = any(len(assign.targets) == 1 and assign.value is call
                           and isinstance(assign.targets[0].target, (cst.Name, cst.Attribute))
                           for assign in gatherer.assigns)
            why = self._adapter_steps(call, assigned)[1]
            if why is not None:
                owner = source_of(call.func.value)
                kept[id(call.func)] = (
                    f"{why}, so {self.id} leaves this file on optimum-neuron: the {owner} import and loads are not "
                    "rewritten. To migrate it: after `pipe = <Pipeline>.from_pretrained(<id>, dtype=...)` and before "
                    "compiling, load the adapters as optimum did (LoRA: pipe.load_lora_weights(<id>, "
                    "weight_name=..., adapter_name=...) per adapter, pipe.set_adapters(names, "
                    "adapter_weights=scales), pipe.fuse_lora(); unet_id: unet=UNet2DConditionModel.from_pretrained("
                    "<unet_id>, subfolder=\"unet\"); controlnet_ids: controlnet=ControlNetModel.from_pretrained(<id>); "
                    "ip_adapter_*: pipe.load_ip_adapter(...), pipe.set_ip_adapter_scale(...)), or give the lora_* "
                    "arguments as literals, then run neuron-migrate again")
        return kept

    def kept_stock_call(self, call: cst.Call, gatherer) -> str | None:
        """A load without export=True of a folder no migrated diffusion export of the project may write
        (``kept_unproduced_load``): rewritten, diffusers would read a folder of NEFFs."""
        return self.kept_unproduced_load(call, gatherer)

    def kept_use_advice(self, attribute: str) -> str:
        if attribute == "from_pretrained":
            return ("load the source checkpoint instead: its id is in the compiled folder (`_name_or_path` in a "
                    "component's config.json, e.g. unet/config.json or text_encoder/config.json; model_index.json "
                    "names the pipeline class), with export=True and the static shapes of that export (batch_size, "
                    "height, width, num_images_per_prompt: the `neuron` section of unet/config.json), e.g. "
                    "<Pipeline>.from_pretrained(<checkpoint id>, export=True, height=<H>, width=<W>) (NM140 then "
                    "rewrites it to the diffusers pipeline); or port the job that compiled the folder into this "
                    "project (a Neuron<...>Pipeline.from_pretrained(<checkpoint id>, export=True, ...) saved with "
                    "save_pretrained(<folder>): NM140 migrates both, and the migrated save writes a diffusers folder "
                    "this load reads)")
        return super().kept_use_advice(attribute)

    def prepare(self, module: cst.Module) -> None:
        """The compiled static shapes at every call of a loaded pipeline: a call without height=/width= ran at
        the exported size under optimum, and now runs at diffusers' default size (unet.config.sample_size *
        vae_scale_factor, named when the checkpoint id is known), which compiles a new graph."""
        for site in model_call_sites(module, self.is_target_call):
            given = {key for key, _ in self.arguments(site.call).keywords}
            if self.arguments(site.call).opaque:
                continue
            load = dict(self.arguments(site.load).keywords)
            for nested in ("input_shapes",):
                if nested in load:
                    load.update((key, keyword_arg(key, value))
                                for key, value in self.dict_items(load[nested].value) or [])
            shape_keys = ("height", "width", "batch_size", "num_images_per_prompt")
            shapes = {key: source_of(load[key].value) for key in shape_keys if key in load}
            where = ""
            if not shapes and self.literal(load["export"].value if "export" in load else None) is not True:
                shapes, where = self._exported_shapes(site.load)
            images = shapes.get("num_images_per_prompt")
            more_images = images is not None and images != "1" and "num_images_per_prompt" not in given
            if {"height", "width"} <= given and not more_images:
                continue
            compiled = ", ".join(f"{key}={value}" for key, value in shapes.items())
            size = (f"the compiled {compiled}{where}" if shapes else "the size the pipeline was exported with "
                    "(the `neuron` section of the compiled folder's unet/config.json)")
            model_id = self.literal(site.load.args[0].value) if site.load.args else None
            default = _default_size(model_id if isinstance(model_id, str) else "")
            count = (f"; it also made {images} images per prompt at each call (num_images_per_prompt={images} "
                     f"compiled in) and diffusers makes 1 by default - pass num_images_per_prompt={images}"
                     if more_images else "")
            if {"height", "width"} <= given:
                self.todo_at_call(site.call, f"{site.model}(...) without num_images_per_prompt=: optimum ran it at "
                                  f"{size}{count}")
                continue
            self.todo_at_call(site.call, f"{site.model}(...) without height=/width=: optimum ran it at {size}; "
                              "diffusers now uses its default size (unet.config.sample_size x vae_scale_factor"
                              f"{default}) and compiles each new shape - pass height= and width= (and the same "
                              f"batch) at every call{count}")

    def _exported_shapes(self, load: cst.Call) -> tuple[dict[str, str], str]:
        """The static shapes the project's saved diffusion exports compile for the folder this compiled load reads
        (``compiled_folder_uses``' ``"diffusion"``: its folder known, the same as this one), with " (<file>)"; empty
        when no export writes it or those that do disagree."""
        if not self._loads_compiled(load):
            return {}, ""
        folder = self._folder(load)
        if folder is None:
            return {}, ""
        here = str(self.ctx.path).replace("\\", "/")
        folders = self.ctx.options.project.of(MODULE_FOLDERS.name)
        found = {(path, shapes) for path, uses in self.ctx.options.project.of(COMPILED_FOLDER_USES.name).items()
                 if path != here for output, shapes in uses.get("diffusion", ())
                 if (resolved := resolved_folder(output, path, folders)) is not None
                 and normalized(resolved) == normalized(folder)}
        if len({shapes for _, shapes in found}) != 1:
            return {}, ""
        return dict(next(iter(found))[1]), f" ({', '.join(sorted(path for path, _ in found))})"

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = original.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "from_pretrained"):
            return updated
        qualified = self.match_class(func.value, MOVES, original)
        if qualified is None:
            return updated
        arguments = self.arguments(updated)
        split = split_traced(self, arguments, keep=DIFFUSERS_KEEP)
        notes = list(split.notes)
        groups: dict[str, list[str]] = {}
        target = self.assignment_target(original)
        lora_steps, _ = self._adapter_steps(original, target is not None)
        lora_given = [key for key in LORA_KEYS if key in split.other]
        for key in lora_given:
            split.other.pop(key)
        component, how = HOW[qualified]
        for key, arg in split.other.items():
            if key in PARALLEL:  # never dropped-and-fixed: the migrated pipeline runs one replica on one device
                value = self.literal(arg.value)
                if value == PARALLEL[key] and type(value) is type(PARALLEL[key]):
                    split.dropped.append(key)
                else:
                    notes.append(parallel_note(key, value, _short(arg), component))
            elif key in ADAPTERS:
                lead = key if ADAPTERS[key] else next(
                    k for k in ADAPTERS if ADAPTERS[k] and k.split("_")[0] == key.split("_")[0])
                groups.setdefault(lead, []).append(f"{key}={_short(arg)}")
                split.dropped.append(key)
            else:
                split.args.append(arg)
                notes.append(f"`{key}=` is not an argument this rule knows: check it is valid for the diffusers "
                             "from_pretrained")
        for lead, given in groups.items():
            notes.append(f"{', '.join(given)}: {ADAPTERS[lead]}")
        values = dict(arguments.keywords)
        dtype_names = self.file_dtype_variables()
        cast_off = "auto_cast" in values and self.literal(values["auto_cast"].value) in (None, "none", False)
        if split.dtype is not None:
            split.args.append(keyword_arg("dtype", split.dtype))
        elif split.export is True and (cast_off or "auto_cast_type" in values
                                       and self.literal(values["auto_cast_type"].value) == "tf32"):
            # an explicit dtype on every load: components never mix bf16 and float32 (unet vs text encoder)
            self.ctx.add_import("torch")
            split.args.append(keyword_arg("dtype", "torch.float32"))
        elif split.export is True and "auto_cast_type" not in values and not arguments.opaque:
            self.ctx.add_import("torch")
            split.args.append(keyword_arg("dtype", "torch.bfloat16"))
            notes.append("dtype=torch.bfloat16 added: optimum (0.4.x) exported diffusion models with matmuls cast to "
                         "bf16 by default; pass dtype=torch.float32 instead for exact numerics")
        elif split.export is not True and "auto_cast_type" not in values and len(dtype_names) == 1:
            # a compiled pipeline ran in the precision it was compiled with; diffusers loads float32 without
            # dtype=, so the file's own dtype variable (its other loads use it) carries the precision over
            split.args.append(keyword_arg("dtype", cst.Name(dtype_names[0])))
            notes.append(f"dtype={dtype_names[0]} added (the dtype this file's other loads use): the compiled "
                         "pipeline ran in the precision it was compiled with (auto_cast_type) and diffusers loads "
                         "float32 without dtype= - check it matches that precision")
        elif split.export is not True and "auto_cast_type" not in values and (exported := self._exported_dtype()):
            # the file exports a pipeline in one precision and saves it (the folder this load may read back): a
            # folder the migrated export wrote holds its text encoder in that dtype, which transformers keeps on
            # load while diffusers loads the unet/vae in float32 without dtype= (the first call then raises)
            self.ctx.add_import("torch")
            split.args.append(keyword_arg("dtype", exported))
            notes.append(f"dtype={exported} added: the precision this file exports its pipeline in (auto_cast_type); "
                         "a folder the migrated export saves holds the text encoder in it, and a load without dtype= "
                         "would mix it with a float32 unet (mat1 and mat2 must have the same dtype)")
        elif split.export is not True and "auto_cast_type" not in values and not arguments.opaque:
            # one explicit dtype whatever the folder holds: a folder saved in bf16 by a migrated export, loaded
            # without dtype=, mixes a bf16 text encoder (transformers keeps it) with a float32 unet
            exported, where = self._project_exported_dtype(original)
            self.ctx.add_import("torch")
            split.args.append(keyword_arg("dtype", exported or "torch.bfloat16"))
            notes.append(f"dtype={exported} added: the precision this project's export ({where}) saves its pipeline "
                         "in; without dtype= a folder it writes would mix its text encoder in that dtype with a "
                         "float32 unet (mat1 and mat2 must have the same dtype)" if exported else
                         "dtype=torch.bfloat16 added: the precision a compiled pipeline ran in by default (bf16 "
                         "matmuls) and one dtype for every component (without dtype= a folder saved in bf16 mixes a "
                         "bf16 text encoder with a float32 unet and the first call raises): pass the precision the "
                         "pipeline was compiled with (auto_cast_type) if it was another")
        run_time = self._run_time_export_dtypes(original) if split.export is not True and not arguments.opaque else None
        if run_time is not None and (split.dtype is not None or "auto_cast_type" not in values):
            if notes and notes[-1].startswith("dtype=torch.bfloat16 added: the precision a compiled pipeline ran in"):
                notes.pop()  # the generic default: the note below names the export's run-time choice
            fixed_dtype = next((source_of(arg.value) for arg in split.args if arg.keyword is not None
                          and arg.keyword.value == "dtype"), "torch.bfloat16")
            notes.append(f"dtype={fixed_dtype} is fixed here, while the project's export {run_time} chooses the precision "
                         "of the folder it saves when it runs: load with the dtype that run used (the same value, "
                         "mapped: bf16 -> torch.bfloat16, fp16 -> torch.float16, fp32/tf32/none -> torch.float32), "
                         "or this pipeline runs in another precision than the export compiled")
        if split.shapes:
            notes.append(self.shapes_at_calls(original, f"compiled for {shape_text(split.shapes)}: pass the same "
                                              "height/width/num_images_per_prompt and batch at every call (each "
                                              "new shape compiles again) and draw latents with "
                                              "generator=torch.Generator(\"cpu\")"))
        method = "compile_repeated_blocks" if how == "repeated" else "compile"
        if lora_given and target is not None and lora_steps:
            # exactly what optimum did before compiling (_load_lora_weights_to_pipeline): fused into the weights
            self.add_after([step.replace("{pipe}", target) for step in lora_steps])
            self.fixed(original, f"{', '.join(lora_given)} -> the LoRA adapters loaded and fused into {target} right "
                       "after the load, as optimum-neuron fused them before compiling (load_lora_weights, "
                       "set_adapters/fuse_lora, unload_lora_weights: the fused weights stay)")
        elif lora_given:  # a statement shape _held_loads read as an assignment: say it, never drop silently
            notes.append(f"{', '.join(lora_given)}: load and fuse these LoRA adapters right after this load, before "
                         f"compiling: {ADAPTERS['lora_model_ids']} (optimum fused them into the compiled weights)")
        step = f'{component}.{method}(backend="neuron", fullgraph=True, dynamic=False)'
        model_arg = arguments.positional[0] if arguments.positional else None
        compiled = self.compiled_load_note(model_arg, split.has_export, split.export)
        loaded = updated.with_changes(args=with_commas(split.args, updated.args))
        if self.only_saved(original):
            # an export job: the pipeline is only saved, so it needs no device and no compilation here; the
            # code that loads the saved folder and calls it compiles it
            self.report_load(original, split.dropped, notes, "Neuron diffusion pipeline -> diffusers pipeline "
                             "(this file only saves it: no device move, no compilation)", compiled)
            return loaded
        if target is not None:
            self.add_after(self.on_neuron(target, [f"{target}.{step}"]))
        else:
            notes.append(f"compile on Trainium: pipe.{step}")
        self.report_load(original, split.dropped, notes, "Neuron diffusion pipeline -> diffusers pipeline on the "
                                                         f"device, {method} of the {component}", compiled)
        return cst.Call(func=cst.Attribute(value=loaded, attr=cst.Name("to")), args=[cst.Arg(self.device())])

    def _export_files(self, load: cst.Call) -> set[str] | None:
        """The other project files whose saved diffusion exports write the folder this load reads (its folder and
        theirs known, the same: ``compiled_folder_uses``' ``"diffusion"``), or None when none is known to (then
        every export of the project may be the one)."""
        folder = self._folder(load) if self._loads_compiled(load) else None
        if folder is None:
            return None
        here = str(self.ctx.path).replace("\\", "/")
        folders = self.ctx.options.project.of(MODULE_FOLDERS.name)
        found = {path for path, uses in self.ctx.options.project.of(COMPILED_FOLDER_USES.name).items()
                 if path != here for output, _ in uses.get("diffusion", ())
                 if (resolved := resolved_folder(output, path, folders)) is not None
                 and normalized(resolved) == normalized(folder)}
        return found or None

    def _project_exported_dtype(self, load: cst.Call) -> tuple[str | None, str]:
        """The one torch dtype the other files of the project save their Neuron diffusion exports in
        (:func:`collect_export_dtypes`) - those that write this load's folder, when known (``_export_files``) -,
        with those files; (None, "") when none or they disagree."""
        here = str(self.ctx.path).replace("\\", "/")
        writers = self._export_files(load)
        found = {path: dtypes for path, dtypes in self.ctx.options.project.of(EXPORT_DTYPES.name).items()
                 if path != here and (writers is None or path in writers)}
        dtypes = {dtype for values in found.values() for dtype in values}
        if len(dtypes) != 1 or any(dtype.startswith("?") for dtype in dtypes):
            return None, ""
        return dtypes.pop(), ", ".join(sorted(found))

    def _run_time_export_dtypes(self, load: cst.Call) -> str | None:
        """``export.py (auto_cast_type=args.dtype)``: the other files of the project whose saved diffusion exports
        choose their precision when the script runs (:func:`collect_export_dtypes`) - of those that write this
        load's folder, when known (``_export_files``) -, or None."""
        here = str(self.ctx.path).replace("\\", "/")
        writers = self._export_files(load)
        found = [f"{path} ({dtype[1:]})" for path, dtypes in sorted(self.ctx.options.project.of(EXPORT_DTYPES.name).items())
                 if path != here and (writers is None or path in writers)
                 for dtype in dtypes if dtype.startswith("?auto_cast_type=")]
        return ", ".join(found) or None

    def _exported_dtype(self) -> str | None:
        """The one torch dtype (``torch.bfloat16``) that this file's diffusion exports name by a literal
        ``auto_cast_type`` (or ``dtype``/``torch_dtype``), when they all agree and at least one export saves."""
        found: set[str] = set()
        for call in self.gathered.calls:
            if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "from_pretrained"
                    and self.ctx.matches(call.func.value, MOVES)):
                continue
            keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
            if self.literal(keywords.get("export")) is not True:
                continue
            for key in ("auto_cast_type", "dtype", "torch_dtype"):
                if key in keywords:
                    mapped = (dtype_for(self.literal(keywords[key])) if key == "auto_cast_type"
                              else source_of(keywords[key]) if torch_dtype_attr(keywords[key]) else None)
                    found.add(mapped or "?")
                    break
        saves = any(isinstance(call.func, cst.Attribute) and call.func.attr.value == "save_pretrained"
                    for call in self.gathered.calls)
        return found.pop() if len(found) == 1 and "?" not in found and saves else None


#: diffusers' default image size by checkpoint family (unet.config.sample_size x vae_scale_factor), most
#: specific first: the -base SD 2.x checkpoints are 512 px, the others 768 px
DEFAULT_SIZES = (("stable-diffusion-2-base", 512), ("stable-diffusion-2-1-base", 512), ("stable-diffusion-2", 768),
                 ("stable-diffusion-xl", 1024), ("sdxl", 1024), ("stable-diffusion-v1", 512),
                 ("stable-diffusion-1", 512))


def _default_size(model_id: str) -> str:
    """``": 512x512 for <id>"`` when the checkpoint the pipeline loads is a literal of a known family, else "":
    a size quoted for another checkpoint would be wrong advice."""
    for family, size in DEFAULT_SIZES:
        if family in model_id.lower():
            return f": {size}x{size} for {model_id}"
    return ""

def _short(arg: cst.Arg) -> str:
    text = source_of(arg.value)
    return text if len(text) <= 40 else text[:37] + "..."
