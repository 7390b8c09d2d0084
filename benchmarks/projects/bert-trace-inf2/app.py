import os

import torch
import torch_neuronx  # noqa: F401  registers the neuron ops needed by torch.jit.load
from flask import Flask, jsonify, request
from transformers import AutoTokenizer

ARTIFACT = os.environ.get("BERT_ARTIFACT", "artifacts/bert_neuron_b1_s128.pt")
SEQ_LEN = int(os.environ.get("SEQ_LEN", "128"))

app = Flask(__name__)
tokenizer = AutoTokenizer.from_pretrained(os.path.dirname(ARTIFACT) or ".")
model = torch.jit.load(ARTIFACT)


@app.route("/predict", methods=["POST"])
def predict():
    body = request.get_json(force=True)
    enc = tokenizer(body["text"], body.get("text_pair"), padding="max_length", truncation=True,
                    max_length=SEQ_LEN, return_tensors="pt")
    with torch.no_grad():
        logits = model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"])[0]
    probs = torch.softmax(logits, dim=-1)[0].tolist()
    return jsonify({"label": int(torch.tensor(probs).argmax()), "probs": probs})


@app.route("/health")
def health():
    return "ok"


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=int(os.environ.get("PORT", 8080)))
