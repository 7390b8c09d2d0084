"""Execution proof for the inference rules (NM1xx): legacy optimum-neuron scripts are migrated with the
rules, then the MIGRATED script runs for real on CPU (subprocess, offline) against the installed
transformers / sentence-transformers / diffusers, with tiny models built from configs in tmp folders.

Each test asserts on real output: generated tokens, logits, embeddings, images.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.torchrun_exit import assert_ok_or_teardown_abort

from migrate.testing import apply_rules
from tests.inference import tiny

pytestmark = pytest.mark.execution


def migrate(source: str, device_style: str = "portable", project: dict[str, str] | None = None) -> str:
    result = apply_rules(source, select=["NM1"], device_style=device_style, project=project)
    code_lines = [line for line in result.text.splitlines() if not line.lstrip().startswith("#")]
    assert not any("optimum" in line for line in code_lines), result.text
    ast.parse(result.text)
    return result.text


def run(script: str, tmp_path: Path, timeout: int = 240) -> str:
    path = tmp_path / "migrated.py"
    path.write_text(script)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path)
    assert proc.returncode == 0, f"migrated script failed:\n{script}\n--- stderr ---\n{proc.stderr[-4000:]}"
    return proc.stdout


def values(stdout: str) -> dict[str, str]:
    out = {}
    for line in stdout.splitlines():
        if line.startswith("RESULT "):
            key, _, value = line[len("RESULT "):].partition("=")
            out[key] = value
    return out


CAUSAL_LM = '''
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL = {model!r}
compiler_args = {{"num_cores": 1, "auto_cast_type": "fp32"}}
# prompt_len: an optimum export argument no rule table names; the stock from_pretrained would raise TypeError on it
input_shapes = {{"batch_size": 1, "sequence_length": 48, "prompt_len": 16}}
model = NeuronModelForCausalLM.from_pretrained(MODEL, export=True, **compiler_args, **input_shapes)
tokenizer = AutoTokenizer.from_pretrained(MODEL)

inputs = tokenizer(["hello world the cat"], return_tensors="pt")
outputs = model.generate(**inputs, max_new_tokens=8, min_new_tokens=8, do_sample=False, return_dict_in_generate=True)
print("RESULT new_tokens=%d" % (outputs.sequences.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT cache=%s" % type(outputs.past_key_values).__name__)
print("RESULT max_cache_len=%s" % model.generation_config.max_cache_len)
print("RESULT implementation=%s" % model.generation_config.cache_implementation)
print("RESULT dtype=%s" % model.dtype)
'''


def test_causal_lm_generation_with_static_cache(tmp_path: Path) -> None:
    model = tiny.llama(tmp_path / "llama")
    script = migrate(CAUSAL_LM.format(model=str(model)))
    assert "cache_implementation=\"static\"" in script and "max_cache_len=48" in script
    result = values(run(script, tmp_path))
    assert result["new_tokens"] == "8"
    assert result["cache"] == "StaticCache"
    assert result["max_cache_len"] == "48"
    assert result["implementation"] == "static"
    assert result["dtype"] == "torch.float32"


ENCODER = '''
import torch
from optimum.neuron import NeuronModelForSequenceClassification as Classifier
from transformers import AutoTokenizer

MODEL = {model!r}

def load():
    input_shapes = dict(batch_size=2, sequence_length=16)
    model = Classifier.from_pretrained(MODEL, export=True, dynamic_batch_size=False, **input_shapes)
    return model

model = load()
tokenizer = AutoTokenizer.from_pretrained(MODEL)
batch = tokenizer(["good day", "the dog is bad"], padding="max_length", max_length=16, truncation=True, return_tensors="pt")
with torch.no_grad():
    logits = model(**batch).logits
print("RESULT shape=%s" % list(logits.shape))
print("RESULT finite=%s" % bool(torch.isfinite(logits).all()))
print("RESULT labels=%s" % logits.argmax(-1).tolist())
'''


def test_encoder_classification(tmp_path: Path) -> None:
    model = tiny.bert(tmp_path / "bert")
    script = migrate(ENCODER.format(model=str(model)))
    assert "AutoModelForSequenceClassification as Classifier" in script
    result = values(run(script, tmp_path))
    assert result["shape"] == "[2, 2]"
    assert result["finite"] == "True"


SEQ2SEQ = '''
import optimum.neuron as on
from transformers import AutoTokenizer

MODEL = {model!r}
model = on.NeuronModelForSeq2SeqLM.from_pretrained(
    MODEL,
    export=True,
    batch_size=1,
    sequence_length=16,
    num_beams=2,
    auto_cast="all",
    auto_cast_type="fp32",
)
tokenizer = AutoTokenizer.from_pretrained(MODEL)
inputs = tokenizer("translate english to german the house is blue", return_tensors="pt")
output = model.generate(**inputs, max_new_tokens=6, min_new_tokens=6)
print("RESULT length=%d" % output.shape[1])
print("RESULT beams=%s" % model.generation_config.num_beams)
print("RESULT implementation=%s" % model.generation_config.cache_implementation)
print("RESULT text=%r" % tokenizer.decode(output[0], skip_special_tokens=True))
'''


def test_seq2seq_generation(tmp_path: Path) -> None:
    model = tiny.t5(tmp_path / "t5")
    script = migrate(SEQ2SEQ.format(model=str(model)))
    result = values(run(script, tmp_path))
    assert int(result["length"]) >= 7  # decoder start token + 6 new tokens
    assert result["beams"] == "2"
    assert result["implementation"] == "static"


EMBEDDING = '''
try:
    from optimum.neuron import NeuronSentenceTransformers
except ImportError:
    NeuronSentenceTransformers = None

MODEL = {model!r}
model = NeuronSentenceTransformers.from_pretrained(MODEL, export=True, batch_size=2, sequence_length=12)
embeddings = model.encode(["the cat sat on the mat", "a dog"], batch_size=2, convert_to_tensor=True)
similarity = model.similarity(embeddings, embeddings)
print("RESULT shape=%s" % list(embeddings.shape))
print("RESULT max_seq_length=%s" % model.max_seq_length)
print("RESULT self_similarity=%.3f" % float(similarity[0, 0]))
'''


def test_sentence_transformers_embedding(tmp_path: Path) -> None:
    model = tiny.bert(tmp_path / "bert")
    script = migrate(EMBEDDING.format(model=str(model)))
    assert "SentenceTransformer(" in script
    result = values(run(script, tmp_path))
    assert result["shape"] == "[2, 32]"
    assert result["max_seq_length"] == "12"
    assert abs(float(result["self_similarity"]) - 1.0) < 1e-3


CALLED_LIKE_A_MODEL = '''
import torch
from optimum.neuron import NeuronModelForSentenceTransformers
from transformers import AutoTokenizer

MODEL = {model!r}
model = NeuronModelForSentenceTransformers.from_pretrained(MODEL, export=True, batch_size=1, sequence_length=12)
tokenizer = AutoTokenizer.from_pretrained(MODEL)
for q in ["the cat sat on the mat", "a dog"]:
    inputs = tokenizer(q, return_tensors="pt")
    with torch.no_grad():
        out = model(**inputs)
    print("RESULT shape=%s" % list(out.sentence_embedding.shape))
batch = tokenizer(["the cat", "a good dog is"], padding=True, return_tensors="pt")
outputs = model(**batch)
print("RESULT batch=%s" % list(outputs["sentence_embedding"].shape))
'''


def test_sentence_transformer_called_like_a_model_runs_through_encode(tmp_path: Path) -> None:
    # rt3A #8: `model(**inputs)` raised TypeError on SentenceTransformer (forward takes one features dict)
    model = tiny.bert(tmp_path / "bert")
    script = migrate(CALLED_LIKE_A_MODEL.format(model=str(model)))
    assert "model(**" not in script and "model.encode([q], convert_to_tensor=True)" in script
    result = values(run(script, tmp_path))
    assert result["shape"] == "[1, 32]"  # one string tokenized: a batch of one, as the Neuron model returned
    assert result["batch"] == "[2, 32]"


EXPORT_SAVE = '''
import json
from optimum.neuron import NeuronModelForFeatureExtraction

compiler_args = {{"auto_cast": "matmul", "auto_cast_type": "bf16"}}
model = NeuronModelForFeatureExtraction.from_pretrained({model!r}, export=True, batch_size=1, sequence_length=12,
                                                        **compiler_args)
model.save_pretrained("saved")
print("RESULT dtype=%s" % json.load(open("saved/config.json")).get("dtype"))
'''


def test_an_export_job_saves_the_checkpoint_weights_uncast(tmp_path: Path) -> None:
    # rt3A #7: auto_cast="matmul" became dtype=torch.bfloat16 before save_pretrained: bf16 weights on disk
    model = tiny.bert(tmp_path / "bert")
    script = migrate(EXPORT_SAVE.format(model=str(model)))
    assert values(run(script, tmp_path))["dtype"] == "float32"


TRACED_READS = '''
import torch
from optimum.neuron import NeuronModelForFeatureExtraction
from transformers import AutoTokenizer

model = NeuronModelForFeatureExtraction.from_pretrained({model!r}, export=True, batch_size=2, sequence_length=12)
tokenizer = AutoTokenizer.from_pretrained({model!r})
bs, seq = model.config.neuron["static_input_shapes"]["batch_size"], model.input_shapes["sequence_length"]
enc = tokenizer(["a cat"] * bs, padding="max_length", max_length=seq, return_tensors="pt")
with torch.no_grad():
    print("RESULT shape=%s" % list(model(**enc).last_hidden_state.shape))
'''


def test_reads_of_the_traced_models_compiled_shapes_take_the_exported_values(tmp_path: Path) -> None:
    # rt3A #5: model.config.neuron[...] / model.input_shapes raised AttributeError on the stock model
    model = tiny.bert(tmp_path / "bert")
    script = migrate(TRACED_READS.format(model=str(model)))
    assert "bs, seq = 2, 12" in script
    assert values(run(script, tmp_path))["shape"] == "[2, 12, 32]"


TRACED_NUMPY = '''
import numpy as np
import torch
from optimum.neuron import NeuronModelForFeatureExtraction
from transformers import AutoTokenizer

model = NeuronModelForFeatureExtraction.from_pretrained({model!r}, export=True, batch_size=2, sequence_length=12)
tokenizer = AutoTokenizer.from_pretrained({model!r})
enc = tokenizer(["a cat", "the dog"], padding="max_length", max_length=12, return_tensors="pt")
with torch.no_grad():
    outputs = model(**enc)
cls = outputs.last_hidden_state[:, 0]
print("RESULT norms=%s" % list(np.linalg.norm(cls.float().numpy(), axis=-1).shape))
print("RESULT mean=%s" % np.asarray(outputs.last_hidden_state).shape[1])
'''


def test_numpy_reads_of_the_traced_models_outputs_run_after_the_device_moves(tmp_path: Path) -> None:
    # rt3A #6: the inputs follow the model to the device, the outputs get .cpu() before numpy
    model = tiny.bert(tmp_path / "bert")
    script = migrate(TRACED_NUMPY.format(model=str(model)))
    assert "cls.float().cpu().numpy()" in script and "np.asarray(outputs.last_hidden_state.cpu())" in script
    result = values(run(script, tmp_path))
    assert result["norms"] == "[2]" and result["mean"] == "12"



FORWARD_OUTPUTS_NUMPY = """
import numpy as np
import torch
from optimum.neuron import NeuronModelForCausalLM, NeuronModelForSequenceClassification, pipeline
from transformers import AutoTokenizer


class Sampler:
    def __init__(self, path):
        self.tok = AutoTokenizer.from_pretrained(path)
        self.model = NeuronModelForCausalLM.from_pretrained(path, export=True, batch_size=1, sequence_length=32)

    def next_token(self, text):
        ids = self.tok(text, return_tensors="pt").input_ids
        logits = self.model(ids).logits[:, -1, :]
        return int(np.argmax(logits.numpy(), axis=-1)[0])


sampler = Sampler({llama!r})
print("RESULT token=%s" % type(sampler.next_token("hello world")).__name__)
clf = NeuronModelForSequenceClassification.from_pretrained({bert!r}, export=True, batch_size=1, sequence_length=16)
tok = AutoTokenizer.from_pretrained({bert!r})
enc = tok("good day", padding="max_length", max_length=16, truncation=True, return_tensors="pt")
logits = clf(**enc).logits
probs = torch.softmax(logits, -1).numpy()
print("RESULT probs=%s" % list(probs.shape))
pipe = pipeline("text-classification", model={bert!r}, export=True, input_shapes={{"batch_size": 1, "sequence_length": 16}})
direct = pipe.model(**tok("a dog", return_tensors="pt").to(pipe.model.device)).logits
print("RESULT direct=%s" % list(direct.cpu().numpy().shape))
"""


def test_forward_outputs_of_the_stock_models_read_with_numpy(tmp_path: Path) -> None:
    # rtF: optimum's compiled models were inference-only, their outputs never required grad; a stock model's
    # forward outputs do, and .numpy() on them raised RuntimeError (outside torch.no_grad)
    llama, bert = tiny.llama(tmp_path / "llama"), tiny.bert(tmp_path / "bert")
    script = migrate(FORWARD_OUTPUTS_NUMPY.format(llama=str(llama), bert=str(bert)))
    assert "self.model.requires_grad_(False)" in script and "clf.requires_grad_(False)" in script
    assert "pipe.model.requires_grad_(False)" in script
    result = values(run(script, tmp_path))
    assert result == {"token": "int", "probs": "[1, 2]", "direct": "[1, 2]"}

DIFFUSION = '''
import torch
from optimum.neuron import NeuronStableDiffusionPipeline

MODEL = {model!r}
compiler_args = {{"auto_cast": "matmul", "auto_cast_type": "fp32"}}
input_shapes = {{"batch_size": 1, "height": 16, "width": 16, "num_images_per_prompt": 1}}
pipe = NeuronStableDiffusionPipeline.from_pretrained(MODEL, export=True, inline_weights_to_neff=True, **compiler_args, **input_shapes)
image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
             generator=torch.Generator("cpu").manual_seed(0)).images
print("RESULT shape=%s" % list(image.shape))
print("RESULT finite=%s" % bool(torch.isfinite(torch.from_numpy(image)).all()))
'''


def test_diffusion_pipeline(tmp_path: Path) -> None:
    model = tiny.stable_diffusion(tmp_path / "sd")
    script = migrate(DIFFUSION.format(model=str(model)))
    assert "compile_repeated_blocks" in script
    result = values(run(script, tmp_path))
    assert result["shape"] == "[1, 16, 16, 3]"
    assert result["finite"] == "True"


DIFFUSION_RELOAD = '''
import os
import sys
import torch
from optimum.neuron import NeuronStableDiffusionPipeline

MODEL = {model!r}
SAVED = "sd_neuron"
if os.path.isdir(SAVED):
    pipe = NeuronStableDiffusionPipeline.from_pretrained(SAVED)
else:
    pipe = NeuronStableDiffusionPipeline.from_pretrained(MODEL, export=True, batch_size=1, height=16, width=16,
                                                         auto_cast="all", auto_cast_type="bf16")
    pipe.save_pretrained(SAVED)
image = pipe("a cat", num_inference_steps=2, height=16, width=16, output_type="np",
             generator=torch.Generator("cpu").manual_seed(0)).images
print("RESULT shape=%s" % list(image.shape))
print("RESULT unet=%s" % pipe.unet.dtype)
'''


def test_diffusion_pipeline_saved_in_bf16_reloads(tmp_path: Path) -> None:
    # the first run exports and saves in bf16; the second reads that folder back: without the export's dtype on the
    # reload, diffusers loads the unet in float32 beside a bf16 text encoder and the first call raises
    model = tiny.stable_diffusion(tmp_path / "sd")
    script = migrate(DIFFUSION_RELOAD.format(model=str(model)))
    assert "from_pretrained(SAVED, dtype=torch.bfloat16)" in script
    first = values(run(script, tmp_path))
    assert (tmp_path / "sd_neuron").is_dir()
    second = values(run(script, tmp_path))
    assert first["shape"] == second["shape"] == "[1, 16, 16, 3]"
    assert second["unet"] == "torch.bfloat16"


PIPELINE = '''
from optimum.neuron.pipelines import pipeline

MODEL = {model!r}
# task= and batch_size= are the pipeline's own arguments (without task= a model object raises RuntimeError)
clf = pipeline(task="text-classification", model=MODEL, export=True, batch_size=1,
               input_shapes={{"batch_size": 1, "sequence_length": 16}}, compiler_args={{"auto_cast_type": "fp32"}})
print("RESULT out=%s" % clf("good day")[0]["label"])
'''


def test_transformers_pipeline(tmp_path: Path) -> None:
    model = tiny.bert(tmp_path / "bert")
    script = migrate(PIPELINE.format(model=str(model)))
    assert "from transformers import pipeline" in script
    result = values(run(script, tmp_path))
    assert result["out"] in ("LABEL_0", "LABEL_1")


def test_neuron_style_output_parses_and_spells_neuron(tmp_path: Path) -> None:
    """The --device-style neuron variant: literal "neuron", unguarded compile (not run: no Trainium here)."""
    script = apply_rules(CAUSAL_LM.format(model="m"), select=["NM1"], device_style="neuron").text
    ast.parse(script)
    assert 'device_map="neuron"' in script
    assert 'compile_config=CompileConfig(backend="neuron", dynamic=False, mode="default"))' in script


TP_DECODER = '''
import torch
import torch.distributed as dist
from optimum.neuron import NeuronModelForCausalLM

model = NeuronModelForCausalLM.from_pretrained({model!r}, export=True, batch_size=1, sequence_length=48,
                                               num_cores={cores}, auto_cast_type="fp32")
ids = torch.tensor([[2, 7, 8, 9]])
out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6, min_new_tokens=6, do_sample=False)
rank = dist.get_rank() if dist.is_initialized() else 0
world = dist.get_world_size() if dist.is_initialized() else 1
tp = getattr(model.config, "distributed_config", None)
# the ranks share one pipe: each line goes out whole, in one write (print writes text and newline apart)
print("RESULT rank%d=%s\\n" % (rank, out[0].tolist()), end="", flush=True)
print("RESULT world=%d tp=%s\\n" % (world, tp.tp_size if tp is not None else 1), end="", flush=True)
if dist.is_initialized():  # leave together: a rank that exits early tears down gloo under its peer
    dist.barrier()
    dist.destroy_process_group()
'''


def test_tensor_parallel_decoder_under_torchrun(tmp_path: Path) -> None:
    """num_cores=2 -> DistributedConfig(tp_size=2): the migrated script runs as a 2-process torchrun job on CPU
    (gloo), both ranks generate, and the tokens match the single-process (num_cores=1) migration."""
    model = tiny.llama(tmp_path / "llama")
    reference = values(run(migrate(TP_DECODER.format(model=str(model), cores=1)), tmp_path))
    # a launcher runs it under torchrun: without one the load stays on one device (DistributedConfig would raise)
    script = migrate(TP_DECODER.format(model=str(model), cores=2),
                     project={"run.sh": "torchrun --nproc_per_node 2 example.py\n"})
    assert "distributed_config=DistributedConfig(tp_size=2)" in script and "device_map" not in script
    path = tmp_path / "tp.py"
    path.write_text(script)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", str(path)],
                          capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path)
    assert_ok_or_teardown_abort(proc)  # every rank's tokens are checked below
    result = values(proc.stdout)
    assert result["world"] == "2 tp=2"
    assert result["rank0"] == result["rank1"] == reference["rank0"]


COMPILED_CONFIG_READS = '''
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL = {model!r}
model = NeuronModelForCausalLM.from_pretrained(MODEL, export=True, batch_size=2, sequence_length=40, num_cores=1,
                                               auto_cast_type="fp32")
tokenizer = AutoTokenizer.from_pretrained(MODEL)
prompts = ["hello world the cat"] * model.neuron_config.batch_size
inputs = tokenizer(prompts, return_tensors="pt")
budget = model.neuron_config.sequence_length - inputs["input_ids"].shape[1]
outputs = model.generate(**inputs, max_new_tokens=budget, min_new_tokens=budget, do_sample=False)
print("RESULT shape=%s" % list(outputs.shape))
print(f"RESULT dtype={{model.config.neuron['auto_cast_type']}}")
'''


def test_reads_of_the_compiled_config_take_the_exported_values(tmp_path: Path) -> None:
    """Class 6: a stock model has no neuron_config; its reads become the shapes the model was exported with."""
    model = tiny.llama(tmp_path / "llama")
    script = migrate(COMPILED_CONFIG_READS.format(model=str(model)))
    assert "neuron_config" not in script and "config.neuron" not in script
    result = values(run(script, tmp_path))
    assert result["shape"] == "[2, 40]"  # the batch, and the prompt plus the budget filling the static cache
    assert result["dtype"] == "fp32"


CHAT_HANDLER = '''
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

def model_fn(model_dir, context=None):
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.chat_template = "{{% for m in messages %}}{{{{ m['role'] }}}} {{{{ m['content'] }}}} {{% endfor %}}"
    model = NeuronModelForCausalLM.from_pretrained(model_dir, export=True, batch_size=1, sequence_length=32)
    return model, tokenizer

def predict_fn(prompt, model_tokenizer, context=None):
    model, tokenizer = model_tokenizer
    messages = [{{"content": prompt, "role": "user"}}]
    input_ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
    outputs = model.generate(input_ids, max_new_tokens=4, min_new_tokens=4, do_sample=False)
    return outputs[0][input_ids.shape[-1]:]

print("RESULT new_tokens=%d" % len(predict_fn("hello world", model_fn({model!r}))))
'''


def test_sagemaker_chat_handler_inputs_follow_the_model(tmp_path: Path) -> None:
    """transformers 5's apply_chat_template returns a BatchEncoding unless return_dict=False (input_ids.shape
    raised); the ids are moved to the model's device in predict_fn, which model_fn feeds."""
    model = tiny.llama(tmp_path / "llama")
    script = migrate(CHAT_HANDLER.format(model=str(model)))
    assert 'return_tensors="pt", return_dict=False).to(model.device)' in script
    assert values(run(script, tmp_path))["new_tokens"] == "4"


GETTER_EXPORT = '''
import os
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL = {model!r}
DTYPE = os.environ.get("MIGRATED_DTYPE", "fp16")

neuron_config = NeuronModelForCausalLM.get_neuron_config(MODEL, batch_size=1, sequence_length=40,
                                                         tensor_parallel_size=1, auto_cast_type=DTYPE)
model = NeuronModelForCausalLM.export(MODEL, neuron_config=neuron_config, load_weights=False)
tokenizer = AutoTokenizer.from_pretrained(MODEL)
inputs = tokenizer(["hello world the cat"], return_tensors="pt")
outputs = model.generate(**inputs, max_new_tokens=4, min_new_tokens=4, do_sample=False)
print("RESULT dtype=%s" % model.dtype)
print("RESULT max_cache_len=%s" % model.generation_config.max_cache_len)
print("RESULT new_tokens=%d" % (outputs.shape[1] - inputs["input_ids"].shape[1]))
print("RESULT compiled=%s/%s" % (neuron_config.batch_size, neuron_config.sequence_length))
'''


def test_get_neuron_config_settings_reach_the_stock_load(tmp_path: Path) -> None:
    """redteam-final 5: the dtype and the sequence length given to get_neuron_config (a run-time dtype string) are
    what the migrated load uses; the fp32 checkpoint loads in fp16 as optimum compiled it."""
    model = tiny.llama(tmp_path / "llama")
    script = migrate(GETTER_EXPORT.format(model=str(model)))
    result = values(run(script, tmp_path))
    assert result["dtype"] == "torch.float16"
    assert result["max_cache_len"] == "40"
    assert result["new_tokens"] == "4"
    assert result["compiled"] == "1/40"  # reads of the getter's result: the values it was given


BATCHED_GENERATION = '''
import torch
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

MODEL = {model!r}


def encode(tokenizer, prompts):
    texts = [prompt.strip() for prompt in prompts]
    return tokenizer(texts, return_tensors="pt", padding=True)


tokenizer = AutoTokenizer.from_pretrained(MODEL)
model = NeuronModelForCausalLM.from_pretrained(MODEL, export=True, batch_size=2, sequence_length=48)
batch = encode(tokenizer, ["hello", "the cat sat on the mat"])
steps = dict(max_new_tokens=6, min_new_tokens=6, do_sample=False, output_scores=True, return_dict_in_generate=True)
together = model.generate(**batch, **steps)
solo = encode(tokenizer, ["hello"])
alone = model.generate(**solo, **steps)
print("RESULT side=%s" % tokenizer.padding_side)
print("RESULT same_tokens=%s" % (together.sequences[0, -6:].tolist() == alone.sequences[0, -6:].tolist()))
print("RESULT same_scores=%s" % all(bool(torch.allclose(a[0], b[0], atol=1e-4))
                                    for a, b in zip(together.scores, alone.scores)))
'''


def test_batched_prompts_of_unequal_length_generate_as_they_do_alone(tmp_path: Path) -> None:
    """redteam-final 6: right-padded, the short prompt of a batch would continue after its pad tokens; the migrated
    file sets padding_side = "left", so its tokens are those it generates alone."""
    model = tiny.llama(tmp_path / "llama")
    script = migrate(BATCHED_GENERATION.format(model=str(model)))
    assert 'tokenizer.padding_side = "left"' in script
    result = values(run(script, tmp_path))
    assert result["side"] == "left"
    assert result["same_tokens"] == "True" and result["same_scores"] == "True"


COMPILED_FOLDER = '''
from optimum.neuron import NeuronModelForCausalLM

model = NeuronModelForCausalLM.from_pretrained("compiled/tiny")
out = model.generate(input_ids=__import__("torch").tensor([[2, 7, 8]]), max_new_tokens=4, min_new_tokens=4)
print("RESULT new_tokens=%d" % (out.shape[1] - 3))
print("RESULT max_cache_len=%s" % model.generation_config.max_cache_len)
'''


def test_a_compiled_folder_an_export_script_writes_loads_its_source(tmp_path: Path) -> None:
    """redteam-round2 D7: the folder the project's optimum-cli export writes is replaced by the checkpoint it was
    compiled from, so the migrated load runs (the folder itself holds NEFFs a stock load cannot read)."""
    model = tiny.llama(tmp_path / "llama")
    export = f"optimum-cli export neuron --model {model} --batch_size 1 --sequence_length 24 ./compiled/tiny\n"
    script = migrate(COMPILED_FOLDER, project={"export.sh": export})
    result = values(run(script, tmp_path))
    assert result == {"new_tokens": "4", "max_cache_len": "24"}


COMPILED_FOLDER_FROM_SETTINGS = '''
from optimum.neuron import NeuronModelForCausalLM

from settings import COMPILED_DIR

model = NeuronModelForCausalLM.from_pretrained(COMPILED_DIR)
out = model.generate(input_ids=__import__("torch").tensor([[2, 7, 8]]), max_new_tokens=4, min_new_tokens=4)
print("RESULT new_tokens=%d" % (out.shape[1] - 3))
print("RESULT max_cache_len=%s" % model.generation_config.max_cache_len)
'''
SETTINGS = 'import os\n\nCOMPILED_DIR = os.environ.get("COMPILED_DIR", "compiled/tiny")\n'


def test_a_compiled_folder_named_by_an_environment_default_in_a_settings_module_loads_its_source(
        tmp_path: Path) -> None:
    """final-BF N3: ``COMPILED_DIR = os.environ.get("COMPILED_DIR", "compiled/tiny")`` in the settings module the
    script imports is read as that folder (the Python twin of the shell ``${X:-d}``), so the load of the folder the
    project's export script writes becomes a load of its source (the variable still overrides it) and runs."""
    model = tiny.llama(tmp_path / "llama")
    export = (f"MODEL=${{MODEL_ID:-{model}}}\n"
              "optimum-cli export neuron -m $MODEL --batch_size 1 --sequence_length 24 compiled/tiny/\n")
    script = migrate(COMPILED_FOLDER_FROM_SETTINGS, project={"run_compile.sh": export, "settings.py": SETTINGS})
    assert f'from_pretrained(os.environ.get("COMPILED_DIR", "{model}")' in script  # the override stays (rtG p4)
    (tmp_path / "settings.py").write_text(SETTINGS)
    result = values(run(script, tmp_path))
    assert result == {"new_tokens": "4", "max_cache_len": "24"}


BRANCH_BOUND = '''
import os

import torch

if os.environ.get("SMOKE_CPU", "1") == "1":
    from transformers import AutoModelForCausalLM as ModelCls
else:
    from optimum.neuron import NeuronModelForCausalLM as ModelCls

model = ModelCls.from_pretrained({model!r})
out = model.generate(input_ids=torch.tensor([[2, 7, 8]]), max_new_tokens=4, min_new_tokens=4,
                     return_dict_in_generate=True)
print("RESULT new_tokens=%d" % (out.sequences.shape[1] - 3))
print("RESULT cache=%s" % type(out.past_key_values).__name__)
print("RESULT device=%s" % model.device.type)
'''


def test_a_load_of_a_name_bound_to_the_neuron_class_in_one_branch_runs_on_the_stock_branch(tmp_path: Path) -> None:
    """rt3B #6 for NM110: what the rewrite adds at the load site (device_map, the static-cache generation config)
    runs on the stock class the other branch binds."""
    model = tiny.llama(tmp_path / "llama")
    script = migrate(BRANCH_BOUND.format(model=str(model)))
    assert "device_map=" in script and 'cache_implementation="static"' in script
    result = values(run(script, tmp_path))
    assert result == {"new_tokens": "4", "cache": "StaticCache", "device": "cpu"}


WHISPER_ESCAPES = '''
import torch
from transformers import AutoFeatureExtractor
from optimum.neuron import NeuronWhisperForConditionalGeneration

MODEL = {model!r}


def load(model_id):
    fe = AutoFeatureExtractor.from_pretrained(model_id)
    model = NeuronWhisperForConditionalGeneration.from_pretrained(
        model_id, export=True, batch_size=1, sequence_length=16, auto_cast="matmul", auto_cast_type="bf16")
    return fe, model


def transcribe(wave, fe, model):
    feats = fe(wave, sampling_rate=16000, return_tensors="pt").input_features
    return model.generate(feats, max_new_tokens=4)


fe, model = load(MODEL)
ids = transcribe(torch.zeros(16000).numpy(), fe, model)
print("RESULT dtype=%s" % model.dtype)
print("RESULT length=%d" % ids.shape[1])
'''


def test_a_bf16_whisper_returned_and_passed_on_gets_its_features_in_its_dtype(tmp_path: Path) -> None:
    """rt4D 1/2: the load becomes dtype=torch.bfloat16 and the model leaves load() (returned, then passed to
    transcribe()); the feature extractor's float32 input_features, fed as they were, raised 'Input type (float) and
    bias type (c10::BFloat16) should be the same' in generate. They now follow the model's device and dtype."""
    model = tiny.whisper(tmp_path / "whisper")
    script = migrate(WHISPER_ESCAPES.format(model=str(model)))
    assert ".input_features.to(model.device, model.dtype)" in script
    result = values(run(script, tmp_path))
    assert result["dtype"] == "torch.bfloat16"
    assert int(result["length"]) >= 2


COMPILED_FOLDER_TOKENIZER = '''
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

model = NeuronModelForCausalLM.from_pretrained("compiled/tiny")
tokenizer = AutoTokenizer.from_pretrained("compiled/tiny")
ids = tokenizer("the cat", return_tensors="pt").input_ids
out = model.generate(input_ids=ids, max_new_tokens=4, min_new_tokens=4)
print("RESULT new_tokens=%d" % (out.shape[1] - ids.shape[1]))
'''


def test_the_tokenizer_of_a_compiled_folder_follows_the_model_to_its_source(tmp_path: Path) -> None:
    """018099d follow-up (llm-chat-neuron app/web.py): the model of the folder an export script writes loads its
    source checkpoint; the tokenizer load of that folder raised once the export was gone (NM406 deletes it, or it
    stops with optimum-neuron): it loads the same source."""
    model = tiny.llama(tmp_path / "llama")
    export = f"optimum-cli export neuron --model {model} --batch_size 1 --sequence_length 24 ./compiled/tiny\n"
    script = migrate(COMPILED_FOLDER_TOKENIZER, project={"export.sh": export})
    assert f"AutoTokenizer.from_pretrained({str(model)!r})".replace("'", '"') in script
    assert not (tmp_path / "compiled").exists()  # no folder: the script only runs if both loads read the source
    assert values(run(script, tmp_path)) == {"new_tokens": "4"}


MATMUL_CAST_EMBEDDER = '''
import torch
from optimum.neuron import NeuronModelForFeatureExtraction
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained({model!r})
model = NeuronModelForFeatureExtraction.from_pretrained({model!r}, export=True, batch_size=2, sequence_length=12,
                                                        auto_cast="matmul", auto_cast_type="bf16")


def encode(texts):
    enc = tokenizer(texts, padding="max_length", max_length=12, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    return ((hidden * mask).sum(1) / mask.sum(1)).cpu()


vectors = encode(["a cat", "the dog"])
print("RESULT dtype=%s" % vectors.dtype)
print("RESULT numpy=%s" % list(vectors.numpy().shape))
'''


def test_a_matmul_only_cast_encoder_returns_float32_embeddings_as_optimum_did(tmp_path: Path) -> None:
    """rt5H D4: auto_cast="matmul" cast only the compiled graph's matmuls, its outputs stayed float32; loaded with
    dtype=torch.bfloat16 the embeddings were bf16 and `.numpy()` raised TypeError (unsupported ScalarType BFloat16)."""
    model = tiny.bert(tmp_path / "bert")
    script = migrate(MATMUL_CAST_EMBEDDER.format(model=str(model)))
    assert "dtype=torch.float32" in script and "torch.autocast(<device>.type, dtype=torch.bfloat16)" in script
    assert values(run(script, tmp_path)) == {"dtype": "torch.float32", "numpy": "[2, 32]"}


COMPILED_ENCODER_TOKENIZER = '''
from optimum.neuron import NeuronModelForSequenceClassification
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("out/rerank")
model = NeuronModelForSequenceClassification.from_pretrained("out/rerank/")
enc = tokenizer(["the cat sat", "a dog"], padding="max_length", max_length=16, truncation=True, return_tensors="pt")
print("RESULT shape=%s" % list(model(**enc).logits.shape))
'''


def test_the_tokenizer_of_a_compiled_encoder_folder_follows_the_model_to_its_source(tmp_path: Path) -> None:
    """rt5H D5: NM120 loaded the model of out/rerank (written by the project's export) from its source checkpoint
    and left AutoTokenizer.from_pretrained("out/rerank"), which raised once the export was gone."""
    model = tiny.bert(tmp_path / "bert")
    export = f"optimum-cli export neuron --model {model} --batch_size 2 --sequence_length 16 out/rerank/\n"
    script = migrate(COMPILED_ENCODER_TOKENIZER, project={"export.sh": export})
    assert f"AutoTokenizer.from_pretrained({str(model)!r})".replace("'", '"') in script
    assert not (tmp_path / "out").exists()  # no folder: the script only runs if both loads read the source
    assert values(run(script, tmp_path)) == {"shape": "[2, 2]"}


ST_EXPORT = '''
from optimum.neuron import NeuronSentenceTransformers

model = NeuronSentenceTransformers.from_pretrained({model!r}, export=True, batch_size=2, sequence_length=12)
model.save_pretrained("encoder_neuron")
'''

ST_LOADER = '''
from optimum.neuron import NeuronSentenceTransformers

ENCODER_DIR = "encoder_neuron"
model = NeuronSentenceTransformers.from_pretrained(ENCODER_DIR)
embeddings = model.encode(["the cat sat on the mat", "a dog"], convert_to_tensor=True)
print("RESULT shape=%s" % list(embeddings.shape))
'''


def test_sentence_transformers_export_job_and_the_load_of_the_folder_it_saves(tmp_path: Path) -> None:
    """NM130 migrates a load of a compiled folder only beside the export job that saves it (its migrated save
    writes a stock folder the migrated load reads); both run."""
    model = tiny.bert(tmp_path / "bert")
    export = ST_EXPORT.format(model=str(model))
    project = {"build_index.py": export, "search.py": ST_LOADER}
    migrated_export, migrated_loader = migrate(export, project=project), migrate(ST_LOADER, project=project)
    assert 'SentenceTransformer(ENCODER_DIR, device=' in migrated_loader
    run(migrated_export, tmp_path)
    assert values(run(migrated_loader, tmp_path))["shape"] == "[2, 32]"
