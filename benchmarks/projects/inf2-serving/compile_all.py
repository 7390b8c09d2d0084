"""Compile a list of models with optimum-cli, one subprocess per model."""
import subprocess

MODELS = [
    ("distilbert-base-uncased-finetuned-sst-2-english", "text-classification", 128),
    ("sentence-transformers/all-MiniLM-L6-v2", "feature-extraction", 256),
]

for model_id, task, seq_len in MODELS:
    out_dir = model_id.split("/")[-1] + "_neuron"
    cmd = f"optimum-cli export neuron -m {model_id} --task {task} --batch_size 1 --sequence_length {seq_len} {out_dir}"
    print(">>", cmd)
    subprocess.run(cmd, shell=True, check=True)
