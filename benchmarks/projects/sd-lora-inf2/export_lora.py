"""Compile SDXL with the LoRA adapters fused in, for inf2."""
import argparse
import json

from optimum.neuron import NeuronStableDiffusionXLPipeline


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default="configs/sdxl_lora.json")
    ap.add_argument("--num-cores", type=int, default=2)
    args = ap.parse_args()
    cfg = json.load(open(args.config))
    lora = cfg["lora"]

    pipe = NeuronStableDiffusionXLPipeline.from_pretrained(
        cfg["model_id"],
        export=True,
        auto_cast=cfg["auto_cast"],
        auto_cast_type=cfg["auto_cast_type"],
        lora_model_ids=lora["model_ids"],
        lora_weight_names=lora["weight_names"],
        lora_adapter_names=lora["adapter_names"],
        lora_scales=lora["scales"],
        **cfg["input_shapes"],
    )
    pipe.save_pretrained(cfg["compiled_dir"])
    print("saved", cfg["compiled_dir"])


if __name__ == "__main__":
    main()
