"""A NeuronTrainer with label smoothing and step logging."""
import torch
import torch_xla.core.xla_model as xm
from optimum.neuron import NeuronTrainer


class SmoothedTrainer(NeuronTrainer):
    def __init__(self, *args, label_smoothing=0.1, **kwargs):
        super().__init__(*args, **kwargs)
        self.label_smoothing = label_smoothing
        self._loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=label_smoothing)

    def compute_loss(self, model, inputs, return_outputs=False):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = self._loss_fn(outputs.logits, labels)
        xm.mark_step()
        return (loss, outputs) if return_outputs else loss

    def training_step(self, model, inputs):
        loss = super().training_step(model, inputs)
        if self.state.global_step % 50 == 0:
            xm.master_print(f"step {self.state.global_step}: loss {loss.item():.4f}")
        xm.mark_step()
        return loss
