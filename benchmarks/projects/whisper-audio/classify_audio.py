"""Keyword spotting with wav2vec2 on Neuron."""
import argparse

import torch
from transformers import AutoFeatureExtractor
from optimum.neuron import NeuronModelForAudioClassification

from config import CLS_ID, CLS_COMPILED, SAMPLE_RATE
from audio_features import pad_or_trim, normalize


def load_classifier(path=CLS_COMPILED):
    fe = AutoFeatureExtractor.from_pretrained(CLS_ID)
    model = NeuronModelForAudioClassification.from_pretrained(path)
    return fe, model


def classify(wave, fe, model, top_k=3):
    wave = normalize(pad_or_trim(torch.as_tensor(wave, dtype=torch.float32), SAMPLE_RATE))
    inputs = fe(wave.numpy(), sampling_rate=SAMPLE_RATE, return_tensors="pt")
    with torch.no_grad():
        logits = model(**inputs).logits
    probs = logits.softmax(-1)[0]
    top = probs.topk(top_k)
    return {model.config.id2label[int(i)]: float(p) for p, i in zip(top.values, top.indices)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wav")
    ap.add_argument("--model", default=CLS_COMPILED)
    a = ap.parse_args()
    import soundfile as sf
    audio, _ = sf.read(a.wav, dtype="float32")
    fe, model = load_classifier(a.model)
    print(classify(audio, fe, model))


if __name__ == "__main__":
    main()
