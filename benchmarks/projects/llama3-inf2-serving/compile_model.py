"""Compile Llama-3 for inf2 with optimum-neuron; shapes come from env vars, falling back to config.yaml."""
import os

import yaml
from optimum.neuron import NeuronModelForCausalLM
from transformers import AutoTokenizer

with open(os.environ.get("SERVE_CONFIG", "config.yaml")) as f:
    CFG = yaml.safe_load(f)

MODEL_ID = os.environ.get("MODEL_ID", CFG["model_id"])
OUT_DIR = os.environ.get("COMPILED_DIR", CFG["compiled_dir"])
BATCH_SIZE = int(os.environ.get("BATCH_SIZE", CFG["neuron"]["batch_size"]))
SEQ_LEN = int(os.environ.get("SEQUENCE_LENGTH", CFG["neuron"]["sequence_length"]))
NUM_CORES = int(os.environ.get("NUM_CORES", CFG["neuron"]["num_cores"]))
AUTO_CAST = os.environ.get("AUTO_CAST_TYPE", CFG["neuron"]["auto_cast_type"])

compiler_args = {"num_cores": NUM_CORES, "auto_cast_type": AUTO_CAST}
input_shapes = {"batch_size": BATCH_SIZE, "sequence_length": SEQ_LEN}


def main():
    model = NeuronModelForCausalLM.from_pretrained(
        MODEL_ID, export=True, continuous_batching=True, **compiler_args, **input_shapes)
    model.save_pretrained(OUT_DIR)
    AutoTokenizer.from_pretrained(MODEL_ID).save_pretrained(OUT_DIR)
    print(f"compiled {MODEL_ID} bs={BATCH_SIZE} seq={SEQ_LEN} tp={NUM_CORES} {AUTO_CAST} -> {OUT_DIR}")


if __name__ == "__main__":
    main()
