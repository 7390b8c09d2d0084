"""Sentiment classification with a Neuron-compiled DistilBERT."""
import sys

from transformers import AutoTokenizer
from optimum.neuron import NeuronModelForSequenceClassification

MODEL_ID = "distilbert-base-uncased-finetuned-sst-2-english"
SEQ_LEN = 128

input_shapes = {"batch_size": 1, "sequence_length": SEQ_LEN}
compiler_args = {"auto_cast": "matmul", "auto_cast_type": "bf16"}

tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
model = NeuronModelForSequenceClassification.from_pretrained(MODEL_ID, export=True, **input_shapes, **compiler_args)
model.save_pretrained("distilbert_neuron")


def predict(text):
    inputs = tokenizer(text, return_tensors="pt")
    logits = model(**inputs).logits
    return model.config.id2label[logits.argmax(-1).item()]


if __name__ == "__main__":
    for t in sys.argv[1:] or ["I love Trainium", "this compiler is slow"]:
        print(t, "->", predict(t))
