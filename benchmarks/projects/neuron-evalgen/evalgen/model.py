import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def load_tokenizer(model_id):
    tok = AutoTokenizer.from_pretrained(model_id)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(model_id, backend, batch_size, sequence_length, num_cores, auto_cast_type, save_dir=None):
    if backend == "neuron":
        from optimum.neuron import NeuronModelForCausalLM

        model = NeuronModelForCausalLM.from_pretrained(
            model_id,
            export=True,
            batch_size=batch_size,
            sequence_length=sequence_length,
            num_cores=num_cores,
            auto_cast_type=auto_cast_type,
        )
        if save_dir:
            model.save_pretrained(save_dir)  # reuse the compiled artifacts next time
        return model
    return AutoModelForCausalLM.from_pretrained(model_id, torch_dtype=torch.float32).eval()
