"""Training rules (NM2xx): optimum-neuron trainers, arguments, models and helpers -> stock Trainer / TRL / accelerate / PEFT."""
