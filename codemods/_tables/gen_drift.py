"""Generate ``drift_data.py``: what transformers 4.x -> 5.x and TRL 0.x -> 1.x removed, from the real packages.

Old APIs are read from downloaded wheels AS DATA (zip + ast): the public names of ``transformers``,
``transformers.utils``, ``transformers.generation`` (4.43.2 and 4.57.1) and ``trl`` (0.11.4 and 0.24.0), the
module-level names of common architectures' modeling modules (``ARCHITECTURES``: attention/rotary variants and
docstring constants that custom modeling code imports),
and the dataclass fields of ``TrainingArguments`` / ``SFTConfig`` / ``ORPOConfig``. New APIs are the
INSTALLED packages (transformers 5.x, trl 1.x). A name that is gone gets:

* the replacement from ``CURATED`` (hand-checked against the installed packages; the generator asserts
  that every replacement resolves), or
* an automatic relocation when the installed package still has it elsewhere (trl 1.x moved several
  trainers to ``trl.experimental.<name>``), or
* ``None``: removed with no replacement -> the rules emit a todo saying so.

Run::

    pip download --no-deps transformers==4.57.1 transformers==4.43.2 trl==0.24.0 trl==0.11.4 -d /tmp/wheels/tf
    .venv/bin/python -m codemods._tables.gen_drift /tmp/wheels/tf
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import re
import sys
import warnings
import zipfile
from pathlib import Path

from codemods._tables import wheelscan

EXPORTS = [  # (project, version, __init__ inside the wheel, installed module name)
    ("transformers", "4.43.2", "transformers/__init__.py", "transformers"),
    ("transformers", "4.57.1", "transformers/__init__.py", "transformers"),
    ("transformers", "4.43.2", "transformers/utils/__init__.py", "transformers.utils"),
    ("transformers", "4.57.1", "transformers/utils/__init__.py", "transformers.utils"),
    ("transformers", "4.43.2", "transformers/generation/__init__.py", "transformers.generation"),
    ("transformers", "4.57.1", "transformers/generation/__init__.py", "transformers.generation"),
    ("trl", "0.11.4", "trl/__init__.py", "trl"),
    ("trl", "0.24.0", "trl/__init__.py", "trl"),
]
#: modules whose own module-level definitions users import directly (docstring constants, trainer and
#: generation helpers): (project, version, file in the wheel, installed module name)
MODULES = [
    ("transformers", "4.57.1", "transformers/utils/doc.py", "transformers.utils.doc"),
    ("transformers", "4.57.1", "transformers/generation/utils.py", "transformers.generation.utils"),
    ("transformers", "4.57.1", "transformers/trainer_utils.py", "transformers.trainer_utils"),
    ("transformers", "4.57.1", "transformers/trainer_pt_utils.py", "transformers.trainer_pt_utils"),
    ("transformers", "4.57.1", "transformers/training_args.py", "transformers.training_args"),
    ("transformers", "4.57.1", "transformers/modeling_utils.py", "transformers.modeling_utils"),
    ("transformers", "4.43.2", "transformers/utils/doc.py", "transformers.utils.doc"),
    ("transformers", "4.43.2", "transformers/generation/utils.py", "transformers.generation.utils"),
    ("transformers", "4.43.2", "transformers/trainer_utils.py", "transformers.trainer_utils"),
]
#: architectures whose modeling modules custom training/inference code imports internals from (attention and rotary
#: classes, docstring constants): the Neuron projects' models and the common decoder/encoder families
ARCHITECTURES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "granite", "gpt2",
                 "gpt_neox", "falcon", "opt", "bloom", "bert", "roberta", "t5", "bart", "whisper")
MODULES += [("transformers", version, f"transformers/models/{arch}/modeling_{arch}.py", f"transformers.models.{arch}.modeling_{arch}")
            for arch in ARCHITECTURES for version in ("4.57.1", "4.43.2")]
FIELDS = [  # (project, version, file, class, installed "module:Class")
    ("transformers", "4.43.2", "transformers/training_args.py", "TrainingArguments", "transformers:TrainingArguments"),
    ("transformers", "4.57.1", "transformers/training_args.py", "TrainingArguments", "transformers:TrainingArguments"),
    ("trl", "0.11.4", "trl/trainer/sft_config.py", "SFTConfig", "trl:SFTConfig"),
    ("trl", "0.24.0", "trl/trainer/sft_config.py", "SFTConfig", "trl:SFTConfig"),
    ("trl", "0.11.4", "trl/trainer/orpo_config.py", "ORPOConfig", "trl.experimental.orpo:ORPOConfig"),
    ("trl", "0.24.0", "trl/trainer/orpo_config.py", "ORPOConfig", "trl.experimental.orpo:ORPOConfig"),
]

#: ``SFTConfig(dataset_kwargs={...})`` keys: trl 0.11 passed the dict as keywords to ``SFTTrainer._prepare_dataset``
#: (read from the wheel: its defaulted parameters that the call does not pass itself); the installed trl reads
#: only the keys it ``.get``s from ``dataset_kwargs`` (``skip_prepare_dataset``). The others are ignored now.
DATASET_KWARGS_SOURCES = [("trl", "0.11.4", "trl/trainer/sft_trainer.py"), ("trl", "0.24.0", "trl/trainer/sft_trainer.py")]

_GEN = "transformers.generation"
#: old qualified name -> (new qualified name or None, message). Messages say what to do.
CURATED: dict[str, tuple[str | None, str]] = {
    "transformers.AdamW": ("torch.optim.AdamW", "transformers.AdamW was removed: torch.optim.AdamW defaults differ (eps 1e-8 vs 1e-6, weight_decay 0.01 vs 0.0) and it has no correct_bias/no_deprecation_warning; NM603 passes eps=1e-6, weight_decay=0.0 where a call does not give them"),
    "transformers.is_torch_tpu_available": ("transformers.is_torch_xla_available", "is_torch_tpu_available -> is_torch_xla_available"),
    "transformers.utils.is_torch_tpu_available": ("transformers.utils.is_torch_xla_available", "is_torch_tpu_available -> is_torch_xla_available"),
    "transformers.AutoModelForVision2Seq": ("transformers.AutoModelForImageTextToText", "AutoModelForVision2Seq -> AutoModelForImageTextToText"),
    "transformers.TRANSFORMERS_CACHE": ("huggingface_hub.constants.HF_HUB_CACHE", "TRANSFORMERS_CACHE -> huggingface_hub.constants.HF_HUB_CACHE"),
    "transformers.PYTORCH_TRANSFORMERS_CACHE": ("huggingface_hub.constants.HF_HUB_CACHE", "PYTORCH_TRANSFORMERS_CACHE -> huggingface_hub.constants.HF_HUB_CACHE"),
    "transformers.PYTORCH_PRETRAINED_BERT_CACHE": ("huggingface_hub.constants.HF_HUB_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE -> huggingface_hub.constants.HF_HUB_CACHE"),
    "transformers.utils.TRANSFORMERS_CACHE": ("huggingface_hub.constants.HF_HUB_CACHE", "TRANSFORMERS_CACHE -> huggingface_hub.constants.HF_HUB_CACHE"),
    "transformers.utils.PYTORCH_TRANSFORMERS_CACHE": ("huggingface_hub.constants.HF_HUB_CACHE", "PYTORCH_TRANSFORMERS_CACHE -> huggingface_hub.constants.HF_HUB_CACHE"),
    "transformers.utils.PYTORCH_PRETRAINED_BERT_CACHE": ("huggingface_hub.constants.HF_HUB_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE -> huggingface_hub.constants.HF_HUB_CACHE"),
    "transformers.utils.send_example_telemetry": (None, "send_example_telemetry was removed in transformers 5 with no replacement (telemetry only): delete the call"),
    "transformers.AutoModelWithLMHead": (None, "AutoModelWithLMHead was removed in transformers 5: use AutoModelForCausalLM, AutoModelForMaskedLM or AutoModelForSeq2SeqLM"),
    "trl.setup_chat_format": (None, "setup_chat_format was removed in trl 1.x: use trl.clone_chat_template(model, tokenizer, source_tokenizer_path) or set tokenizer.chat_template yourself"),
}
for _kind in ("GreedySearch", "Sample", "ContrastiveSearch"):
    CURATED[f"{_GEN}.{_kind}DecoderOnlyOutput"] = (f"{_GEN}.GenerateDecoderOnlyOutput", f"{_kind}DecoderOnlyOutput -> GenerateDecoderOnlyOutput")
    CURATED[f"{_GEN}.{_kind}EncoderDecoderOutput"] = (f"{_GEN}.GenerateEncoderDecoderOutput", f"{_kind}EncoderDecoderOutput -> GenerateEncoderDecoderOutput")
for _kind in ("BeamSearch", "BeamSample"):
    CURATED[f"{_GEN}.{_kind}DecoderOnlyOutput"] = (f"{_GEN}.GenerateBeamDecoderOnlyOutput", f"{_kind}DecoderOnlyOutput -> GenerateBeamDecoderOnlyOutput")
    CURATED[f"{_GEN}.{_kind}EncoderDecoderOutput"] = (f"{_GEN}.GenerateBeamEncoderDecoderOutput", f"{_kind}EncoderDecoderOutput -> GenerateBeamEncoderDecoderOutput")
for _kind in ("GreedySearch", "Sample", "ContrastiveSearch"):
    for _suffix, _new in (("DecoderOnlyOutput", "GenerateDecoderOnlyOutput"), ("EncoderDecoderOutput", "GenerateEncoderDecoderOutput")):
        CURATED[f"{_GEN}.utils.{_kind}{_suffix}"] = (f"{_GEN}.utils.{_new}", f"{_kind}{_suffix} -> {_new}")
    CURATED[f"{_GEN}.utils.{_kind}Output"] = (f"{_GEN}.utils.GenerateNonBeamOutput", f"{_kind}Output -> GenerateNonBeamOutput")
for _kind in ("BeamSearch", "BeamSample"):
    for _suffix, _new in (("DecoderOnlyOutput", "GenerateBeamDecoderOnlyOutput"), ("EncoderDecoderOutput", "GenerateBeamEncoderDecoderOutput")):
        CURATED[f"{_GEN}.utils.{_kind}{_suffix}"] = (f"{_GEN}.utils.{_new}", f"{_kind}{_suffix} -> {_new}")
    CURATED[f"{_GEN}.utils.{_kind}Output"] = (f"{_GEN}.utils.GenerateBeamOutput", f"{_kind}Output -> GenerateBeamOutput")
CURATED["transformers.utils.is_offline_mode"] = ("huggingface_hub.is_offline_mode", "is_offline_mode -> huggingface_hub.is_offline_mode (transformers 5 imports it from there)")
#: names the old versions re-exported from another package (``from huggingface_hub import get_full_repo_name`` in
#: transformers/utils/__init__.py): not definitions of their own files, so the scan above does not see them
REEXPORTED: dict[str, tuple[str, str]] = {
    "transformers.utils.get_full_repo_name": ("huggingface_hub.get_full_repo_name", "transformers 4.43.2, transformers 4.57.1"),
}
CURATED["transformers.trainer_utils.EvaluationStrategy"] = ("transformers.trainer_utils.IntervalStrategy", "EvaluationStrategy -> IntervalStrategy")
CURATED["transformers.modeling_utils.get_parameter_device"] = (None, "get_parameter_device was removed in transformers 5 with no replacement: use model.device (or next(model.parameters()).device)")
CURATED["transformers.modeling_utils.get_parameter_dtype"] = (None, "get_parameter_dtype was removed in transformers 5 with no replacement: use model.dtype (or next(model.parameters()).dtype)")
for _name in ("is_torch_sdpa_available", "is_torch_compile_available", "is_torchdynamo_available", "is_safetensors_available",
              "is_torch_fx_available"):
    CURATED[f"transformers.utils.{_name}"] = (None, f"{_name} was removed in transformers 5 with no replacement: it is always true with torch >= 2.2, replace the check by True")
    CURATED[f"transformers.{_name}"] = CURATED[f"transformers.utils.{_name}"]


_DOCSTRING = re.compile(r"^[A-Z0-9_]+_(?:START|INPUTS|GENERATION)_DOCSTRING$")
_ATTENTION_VARIANT = re.compile(r"^(\w+?)(?:FlashAttention2|FlashAttention|SdpaAttention)$")
_ROTARY_VARIANT = re.compile(r"^(\w+?)(Linear|DynamicNTK)Scaling(RotaryEmbedding)$")


def _modeling_internal(qualified: str) -> tuple[str | None, str] | None:
    """Decisions for the modeling-module names transformers 5 removed, by their shape (None: no such shape)."""
    module, _, name = qualified.rpartition(".")
    if ".models." not in module:
        return None
    if _DOCSTRING.match(name):
        return None, (f"{name} was removed in transformers 5 (model docstrings come from @auto_docstring): delete the "
                      f"@add_start_docstrings / @add_start_docstrings_to_model_forward decorators that use it")
    if name.endswith("_ATTENTION_CLASSES"):
        return None, (f"{name} was removed in transformers 5: one attention class per model, and the attention function "
                      f"is chosen by config._attn_implementation (transformers.modeling_utils.ALL_ATTENTION_FUNCTIONS); "
                      f"set attn_implementation= at from_pretrained instead of picking a class")
    attention = _ATTENTION_VARIANT.match(name)
    if attention and _resolves(f"{module}.{attention.group(1)}Attention"):
        return (f"{module}.{attention.group(1)}Attention",
                f"{name} -> {attention.group(1)}Attention: one attention class, the kernel is chosen by "
                f"attn_implementation (\"sdpa\", \"eager\") at from_pretrained")
    rotary = _ROTARY_VARIANT.match(name)
    if rotary and _resolves(f"{module}.{rotary.group(1)}{rotary.group(3)}"):
        kind = "linear" if rotary.group(2) == "Linear" else "dynamic"
        return None, (f"{name} was removed in transformers 5: build {rotary.group(1)}{rotary.group(3)}(config) with "
                      f"config.rope_parameters = {{\"rope_type\": \"{kind}\", \"factor\": ..., \"rope_theta\": ...}} "
                      f"(the scaling lives in the config now)")
    return None


def _resolves(qualified: str) -> bool:
    module, _, name = qualified.rpartition(".")
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def _trl_experimental() -> dict[str, str]:
    """Public names of every ``trl.experimental.<sub>`` package -> qualified name."""
    import trl.experimental as experimental

    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(experimental.__path__):
        try:
            module = importlib.import_module(f"trl.experimental.{info.name}")
        except Exception:  # noqa: BLE001 - optional deps of experimental modules
            continue
        for name in getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]:
            found.setdefault(name, f"trl.experimental.{info.name}.{name}")
    return found


def _dropped_backend(name: str) -> str:
    if re.match(r"^(TF|Flax|FLAX_|TF_)", name) or "_tf_" in name or name.endswith("_tf") or "tf2" in name or "Keras" in name:
        return "TensorFlow/Flax support was dropped in transformers 5"
    return ""


def build(stock_dir: Path) -> tuple[dict, dict]:
    warnings.simplefilter("ignore")
    experimental = _trl_experimental()
    symbols: dict[str, dict] = {}
    for project, version, init, installed in EXPORTS:
        wheel = wheelscan.find_wheel(stock_dir, project, version)
        module = importlib.import_module(installed)
        for name in sorted(wheelscan.exported_names(wheel, init)):
            if hasattr(module, name):
                continue
            qualified = f"{installed}.{name}"
            entry = symbols.setdefault(qualified, {"versions": [], "new": None, "message": ""})
            entry["versions"].append(f"{project} {version}")
    for project, version, member, installed in MODULES:
        wheel = wheelscan.find_wheel(stock_dir, project, version)
        with zipfile.ZipFile(wheel) as archive:
            present = member in archive.namelist()
        if not present:
            continue  # an architecture that version did not have yet
        module = importlib.import_module(installed)
        for name in wheelscan.module_names(wheel, member):
            if hasattr(module, name) or name in ("logger",):
                continue
            qualified = f"{installed}.{name}"
            entry = symbols.setdefault(qualified, {"versions": [], "new": None, "message": ""})
            if f"{project} {version}" not in entry["versions"]:
                entry["versions"].append(f"{project} {version}")
    for qualified, (new, versions) in REEXPORTED.items():
        if not _resolves(qualified):
            symbols[qualified] = {"versions": versions.split(", "), "new": None, "message": ""}
            CURATED[qualified] = (new, f"{qualified.rsplit('.', 1)[1]} -> {new} (transformers re-exported it from there)")
    for qualified, entry in symbols.items():
        name = qualified.rsplit(".", 1)[1]
        lib = qualified.split(".")[0]
        major = "transformers 5" if lib == "transformers" else "trl 1.x"
        if qualified in CURATED:
            entry["new"], entry["message"] = CURATED[qualified]
        elif (internal := _modeling_internal(qualified)) is not None:
            entry["new"], entry["message"] = internal
        elif lib == "trl" and name in experimental:
            entry["new"] = experimental[name]
            entry["message"] = f"{name} moved to {experimental[name].rsplit('.', 1)[0]} in trl 1.x (experimental API)"
        else:
            why = _dropped_backend(name)
            entry["message"] = f"{name} was removed in {major} with no replacement" + (f" ({why})" if why else "") + ": remove its use"
        if entry["new"] is not None:
            assert _resolves(entry["new"]), f"curated replacement {entry['new']} does not exist in the installed packages"
    fields: dict[str, dict] = {}
    for project, version, member, cls, installed in FIELDS:
        module_name, class_name = installed.split(":")
        stock = {f.name for f in dataclasses.fields(getattr(importlib.import_module(module_name), class_name))}
        old = wheelscan.class_fields(wheelscan.find_wheel(stock_dir, project, version), member, cls)
        for name in old:
            if name not in stock and not name.startswith("_"):
                fields.setdefault(class_name, {}).setdefault(name, []).append(f"{project} {version}")
    return symbols, fields


def _old_dataset_kwargs(source: str) -> dict[str, object]:
    """Defaulted parameters of ``SFTTrainer._prepare_dataset`` that its calls fill from ``**args.dataset_kwargs``
    (not passed by name next to it) -> their default."""
    tree = ast.parse(source)
    found: dict[str, object] = {}
    passed: set[str] = set()
    splats = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_prepare_dataset":
            if any(k.arg is None and "dataset_kwargs" in ast.unparse(k.value) for k in node.keywords):
                splats = True
                passed |= {k.arg for k in node.keywords if k.arg}
    if not splats:
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "_prepare_dataset":
            defaults = node.args.defaults
            names = [a.arg for a in node.args.args][-len(defaults):] if defaults else []
            for name, default in zip(names, defaults):
                if name not in passed and isinstance(default, ast.Constant):
                    found[name] = default.value
    return found


def dataset_kwargs(stock_dir: Path) -> dict[str, tuple[list[str], object]]:
    """Removed ``dataset_kwargs`` key -> (versions that read it, its old default)."""
    installed = Path(importlib.import_module("trl.trainer.sft_trainer").__file__ or "").read_text()
    read_now = set(re.findall(r"dataset_kwargs\.get\(\s*[\"'](\w+)[\"']", installed))
    removed: dict[str, tuple[list[str], object]] = {}
    for project, version, member in DATASET_KWARGS_SOURCES:
        with zipfile.ZipFile(wheelscan.find_wheel(stock_dir, project, version)) as archive:
            source = archive.read(member).decode()
        for name, default in _old_dataset_kwargs(source).items():
            if name not in read_now:
                removed.setdefault(name, ([], default))[0].append(f"{project} {version}")
    return removed


def render(symbols: dict, fields: dict, kwargs: dict | None = None) -> str:
    lines = [
        '"""GENERATED by codemods/_tables/gen_drift.py (old APIs from wheels read as data, new APIs from the installed',
        'transformers / trl). Do not edit: change CURATED in the generator and re-run it."""',
        "",
        "# removed public name -> (replacement qualified name or None, versions that had it, message)",
        "REMOVED_SYMBOLS = {",
    ]
    for qualified in sorted(symbols):
        entry = symbols[qualified]
        lines.append(f"    {qualified!r}: ({entry['new']!r}, {', '.join(entry['versions'])!r}, {entry['message']!r}),")
    lines += ["}", "", "# stock config class -> {removed dataclass field: versions that had it}; decisions live in TRAINING_ARGS",
              "REMOVED_FIELDS = {"]
    for cls in sorted(fields):
        lines.append(f"    {cls!r}: {{")
        for name in sorted(fields[cls]):
            lines.append(f"        {name!r}: {', '.join(fields[cls][name])!r},")
        lines.append("    },")
    lines.append("}")
    lines += ["", "# SFTConfig(dataset_kwargs={key: ...}) keys the old trl read and the installed trl ignores -> (versions that",
              "# read it, its default there); decisions live in codemods/drift/nm601_training_args_drift.py",
              "REMOVED_DATASET_KWARGS = {"]
    for name in sorted(kwargs or {}):
        versions, default = (kwargs or {})[name]
        lines.append(f"    {name!r}: ({', '.join(versions)!r}, {default!r}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> None:
    stock_dir = Path(argv[0] if argv else "/tmp/wheels/tf")
    symbols, fields = build(stock_dir)
    out = Path(__file__).with_name("drift_data.py")
    out.write_text(render(symbols, fields, dataset_kwargs(stock_dir)))
    print(f"wrote {out}: {len(symbols)} removed names, {sum(len(v) for v in fields.values())} removed fields")


if __name__ == "__main__":
    main(sys.argv[1:])
