import importlib
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def test_features_pad():
    from audio_features import pad_or_trim
    assert pad_or_trim(torch.zeros(10), 16).shape[-1] == 16


@pytest.mark.parametrize("mod", ["transcribe", "classify_audio"])
def test_import(mod):
    pytest.importorskip("optimum.neuron")
    m = importlib.import_module(mod)
    assert hasattr(m, "__file__")
