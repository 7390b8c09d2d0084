import os
import sys

import gradio as gr

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from generate import generate  # noqa: E402
from settings import COMPILED_DIR  # noqa: E402

from optimum.neuron import NeuronModelForCausalLM  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

MODEL = NeuronModelForCausalLM.from_pretrained(COMPILED_DIR)
TOK = AutoTokenizer.from_pretrained(COMPILED_DIR)


def respond(message, history):
    return generate(MODEL, TOK, [message], max_new_tokens=200)[0]


if __name__ == "__main__":
    gr.ChatInterface(respond, title=f"Neuron chat (batch {MODEL.neuron_config.batch_size})").launch(server_name="0.0.0.0")
