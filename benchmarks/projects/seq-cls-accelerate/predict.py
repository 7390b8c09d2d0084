#!/usr/bin/env python
"""Score a few sentences with the fine-tuned classifier (on the Neuron device when there is one)."""
import argparse

import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from transformers.utils import is_torch_tpu_available

from device_utils import inference_device

if is_torch_tpu_available():
    import torch_xla.core.xla_model as xm

ap = argparse.ArgumentParser()
ap.add_argument("--model_dir", required=True)
ap.add_argument("texts", nargs="*", default=["good great nice", "awful poor bad"])
args = ap.parse_args()

device = inference_device()
tok = AutoTokenizer.from_pretrained(args.model_dir)
model = AutoModelForSequenceClassification.from_pretrained(args.model_dir).to(device).eval()
enc = tok(args.texts, padding="max_length", max_length=32, truncation=True, return_tensors="pt").to(device)
with torch.no_grad():
    logits = model(**enc).logits
if is_torch_tpu_available():
    xm.mark_step()
print("device:", device)
for t, p in zip(args.texts, logits.softmax(-1)[:, 1].tolist()):
    print(f"{p:.3f}  {t}")
