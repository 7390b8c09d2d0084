"""Plain PyTorch audio helpers (CPU); no accelerator code here."""
import torch
import torch.nn.functional as F

SAMPLE_RATE = 16000


def to_mono(wave: torch.Tensor) -> torch.Tensor:
    if wave.dim() == 2:
        wave = wave.mean(dim=0)
    return wave


def pad_or_trim(wave: torch.Tensor, length: int = SAMPLE_RATE) -> torch.Tensor:
    if wave.shape[-1] >= length:
        return wave[..., :length]
    return F.pad(wave, (0, length - wave.shape[-1]))


def resample(wave: torch.Tensor, orig_sr: int, new_sr: int = SAMPLE_RATE) -> torch.Tensor:
    if orig_sr == new_sr:
        return wave
    n = int(round(wave.shape[-1] * new_sr / orig_sr))
    return F.interpolate(wave.view(1, 1, -1), size=n, mode="linear", align_corners=False).view(-1)


def normalize(wave: torch.Tensor, eps: float = 1e-7) -> torch.Tensor:
    return (wave - wave.mean()) / (wave.std() + eps)
