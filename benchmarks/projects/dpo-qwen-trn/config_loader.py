"""Tiny YAML -> dataclass bridge so the launch scripts stay short."""
import dataclasses
import sys

import yaml
from optimum.neuron import NeuronSFTConfig, NeuronTrainingArguments


def load_yaml(path):
    with open(path) as fh:
        return yaml.safe_load(fh)


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}


def build_args(cls, section, overrides=None):
    """Instantiate ``cls`` from one YAML section, dropping unknown keys with a warning."""
    values = dict(section)
    values.update(overrides or {})
    known = _fields(cls)
    unknown = sorted(set(values) - known)
    if unknown:
        print(f"[config] ignoring unknown keys for {cls.__name__}: {unknown}", file=sys.stderr)
    return cls(**{k: v for k, v in values.items() if k in known})


def sft_args(cfg, **overrides):
    return build_args(NeuronSFTConfig, cfg["sft"], overrides)


def reward_args(cfg, **overrides):
    return build_args(NeuronTrainingArguments, cfg["reward"], overrides)
