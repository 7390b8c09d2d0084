"""Whisper transcription on Neuron."""
import os
import sys

import numpy as np
import torch
from transformers import AutoProcessor
from optimum.neuron import NeuronWhisperForConditionalGeneration

from config import WHISPER_ID, WHISPER_COMPILED, WHISPER_INPUT_SHAPES, WHISPER_COMPILER_ARGS, SAMPLE_RATE
from audio_features import to_mono, resample


def load_whisper(model_id=WHISPER_ID, compiled_dir=WHISPER_COMPILED):
    processor = AutoProcessor.from_pretrained(model_id)
    if os.path.isdir(compiled_dir):
        model = NeuronWhisperForConditionalGeneration.from_pretrained(compiled_dir)
    else:
        model = NeuronWhisperForConditionalGeneration.from_pretrained(
            model_id,
            export=True,
            **WHISPER_INPUT_SHAPES,
            **WHISPER_COMPILER_ARGS,
        )
        model.save_pretrained(compiled_dir)
        processor.save_pretrained(compiled_dir)
    return processor, model


def transcribe(wave, sr, processor, model):
    wave = resample(to_mono(torch.as_tensor(wave, dtype=torch.float32)), sr, SAMPLE_RATE)
    feats = processor(wave.numpy(), sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
    ids = model.generate(feats)
    return processor.batch_decode(ids, skip_special_tokens=True)[0]


if __name__ == "__main__":
    import soundfile as sf
    audio, sr = sf.read(sys.argv[1], dtype="float32")
    proc, mdl = load_whisper()
    print(transcribe(audio.T if audio.ndim == 2 else audio, sr, proc, mdl))
