"""Gradio demo: transcription + keyword spotting."""
import argparse

import gradio as gr

from transcribe import load_whisper, transcribe
from classify_audio import load_classifier, classify
from config import CLS_COMPILED


def build(cls_model=CLS_COMPILED):
    processor, whisper = load_whisper()
    fe, clf = load_classifier(cls_model)

    def run(audio):
        sr, wave = audio
        wave = wave.astype("float32") / 32768.0
        text = transcribe(wave.T if wave.ndim == 2 else wave, sr, processor, whisper)
        return text, classify(wave if wave.ndim == 1 else wave.mean(axis=1), fe, clf)

    return gr.Interface(fn=run, inputs=gr.Audio(), outputs=["text", gr.Label(num_top_classes=3)],
                        title="Neuron speech demo")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--cls-model", default=CLS_COMPILED)
    build(ap.parse_args().cls_model).launch(server_name="0.0.0.0")
