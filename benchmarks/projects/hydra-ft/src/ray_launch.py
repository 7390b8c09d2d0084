"""Launch the fine-tune on a Ray cluster of trn1.32xlarge nodes."""
import argparse

import ray
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchTrainer
from ray.train.torch.xla import TorchXLAConfig

NUM_WORKERS = 32


def train_loop_per_worker(config):
    import torch
    import torch_xla.core.xla_model as xm
    from ray import train
    from transformers import AutoModelForCausalLM

    device = xm.xla_device()
    model = AutoModelForCausalLM.from_pretrained(config["model_id"]).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    for step in range(config["steps"]):
        ids = torch.randint(0, 1000, (1, 128)).to(device)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        xm.optimizer_step(opt)
        opt.zero_grad()
        train.report({"loss": loss.item(), "step": step})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model-id", default="meta-llama/Llama-3.2-1B")
    p.add_argument("--precompile", action="store_true")
    p.add_argument("--steps", type=int, default=100)
    args = p.parse_args()

    ray.init()
    trainer = TorchTrainer(
        train_loop_per_worker,
        train_loop_config={"model_id": args.model_id, "lr": 1e-5, "steps": args.steps},
        torch_config=TorchXLAConfig(neuron_parallel_compile=args.precompile),
        scaling_config=ScalingConfig(num_workers=NUM_WORKERS, resources_per_worker={"neuron_cores": 1}),
        run_config=RunConfig(storage_path="/fsx/ray_results"),
    )
    result = trainer.fit()
    print(result.metrics)


if __name__ == "__main__":
    main()
